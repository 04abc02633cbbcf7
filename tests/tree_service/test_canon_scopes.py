"""W3 with realms: a world's canon and a rehearsal record are projected into canon scopes of
their own, never into the project's story graph as real decisions; a read that names the canon
scope explicitly finds them, labelled with it."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.tree_service.helpers import confirmation
from tests.tree_service.reviews import refused, review, scope_of, two_decisions


async def canonicalized(
    tree_stub, project: str, words: str, **realm: Any
) -> tree_pb2.CanonicalizeResponse:
    tree = (await create_tree(tree_stub, project, title=f"Tree of {words}")).tree
    question = (
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"), tree_id=tree.id, text=f"Shall we {words}?", **realm
            )
        )
    ).node
    answer = (
        await tree_stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=unique("k"), question_id=question.id, text=f"Yes: {words}"
            )
        )
    ).node
    confirmed: tree_pb2.CanonicalizeResponse = await tree_stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            leaf_node_id=answer.id,
            confirmation=confirmation(),
        )
    )
    return confirmed


async def search(graph_stub, words: str, scope: common_pb2.Scope, written) -> list[Any]:
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query=words,
            scope=scope,
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    return list(response.hits)


@pytest.mark.parametrize(
    ("realm", "label", "kind"),
    [
        ({"realm": tree_pb2.REHEARSAL}, "canon:rehearsal-record:", "milestone"),
        ({"realm": tree_pb2.WORLD, "world": "Arden"}, "canon:world-canon:", "decision"),
    ],
)
async def test_a_non_real_canonicalization_is_not_found_by_a_project_search(
    tree_stub, graph_stub, realm, label, kind
):
    project = unique("p")
    words = unique("sail-west")
    confirmed = await canonicalized(tree_stub, project, words, **realm)
    # A real canonicalization in the same project is found, so the search is live.
    real_words = unique("stay-home")
    real = await canonicalized(tree_stub, project, real_words)
    assert real.version.story_graph_scope == scope_of(project)
    assert await search(graph_stub, real_words, scope_of(project), real)

    assert await search(graph_stub, words, scope_of(project), confirmed) == []
    canon = confirmed.version.story_graph_scope
    (own,) = canon.projects.project_ids
    assert own.startswith(label) and project in own
    hits = await search(graph_stub, words, canon, confirmed)
    events = [h for h in hits if h.ref.type == common_pb2.EVENT]
    assert len(events) == 1
    # Labelled with its canon scope: the item's own scope and its title say which.
    assert events[0].scope == canon
    assert events[0].kind == kind
    assert label.split(":")[1] in events[0].title


async def test_the_canon_scope_of_a_version_is_listed_with_it(tree_stub):
    project = unique("p")
    confirmed = await canonicalized(tree_stub, project, "rehearse", realm=tree_pb2.REHEARSAL)
    listed = await tree_stub.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=confirmed.version.tree_id)
    )
    assert [v.story_graph_scope for v in listed.versions] == [confirmed.version.story_graph_scope]


async def test_worlds_and_projects_never_share_a_canon_scope(tree_stub):
    # "a:b" + world "c" and "a" + world "b:c" would collide if the parts were not escaped.
    first = await canonicalized(tree_stub, "a:b", "x", realm=tree_pb2.WORLD, world="c")
    second = await canonicalized(tree_stub, "a", "x", realm=tree_pb2.WORLD, world="b:c")
    assert first.version.story_graph_scope != second.version.story_graph_scope
    long_world = await canonicalized(tree_stub, "p", "x", realm=tree_pb2.WORLD, world="w" * 200)
    (own,) = long_world.version.story_graph_scope.projects.project_ids
    assert len(own) <= 200 and own.startswith("canon:world-canon@sha256:")


async def test_canon_scope_project_ids_are_reserved(tree_stub, db):
    before = await db.fetchval("SELECT count(*) FROM trees")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await create_tree(tree_stub, "canon:rehearsal-record:p")
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "project_id" in caught.value.details()
    assert await db.fetchval("SELECT count(*) FROM trees") == before
    fields, _ = await refused(tree_stub, review("canon:world-canon:p:w", events=two_decisions()))
    assert fields == ["scope.projects"]
