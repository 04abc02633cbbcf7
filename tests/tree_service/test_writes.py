"""TreeService writes against the real primary: trees, questions, idempotency, bad input."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.tree_service.racing import LOCK_TREE, held


async def test_create_tree_returns_the_tree_at_revision_one_with_a_consistency_token(tree_stub):
    response = await create_tree(tree_stub, project_id=unique("proj"), title="Plan the trip")
    assert response.tree.revision == 1
    assert response.tree.title == "Plan the trip"
    assert response.tree.default_realm == tree_pb2.REAL
    assert response.tree.created_at.endswith("Z")
    assert "/" in response.consistency.lsn


async def test_asking_questions_appends_nodes_in_order_and_bumps_the_tree_revision(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    first = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="Why?")
    )
    second = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=unique("k"), tree_id=tree.id, text="And then?", realm=tree_pb2.REHEARSAL
        )
    )
    assert (first.tree_revision, second.tree_revision) == (2, 3)
    assert second.node.realm == tree_pb2.REHEARSAL
    assert first.node.realm == tree_pb2.REAL  # inherited from the tree default
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id, page_size=1))
    assert [n.text for n in listed.nodes] == ["Why?"]
    rest = await tree_stub.ListNodes(
        tree_pb2.ListNodesRequest(tree_id=tree.id, page_token=listed.next_page_token)
    )
    assert [n.text for n in rest.nodes] == ["And then?"]
    assert rest.next_page_token == ""


async def test_descendants_inherit_realm_and_world_unless_they_switch(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    question = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            text="q",
            realm=tree_pb2.WORLD,
            world="Arden",
        )
    )
    answer = await tree_stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=unique("k"), question_id=question.node.id, text="a"
        )
    )
    child = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=unique("k"), tree_id=tree.id, parent_id=answer.node.id, text="q2"
        )
    )
    switched = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            parent_id=answer.node.id,
            text="q3",
            realm=tree_pb2.REAL,
        )
    )
    assert (answer.node.realm, answer.node.world) == (tree_pb2.WORLD, "Arden")
    assert (child.node.realm, child.node.world) == (tree_pb2.WORLD, "Arden")
    assert (switched.node.realm, switched.node.world) == (tree_pb2.REAL, "")


async def test_a_retry_with_the_same_key_returns_the_same_node_and_writes_nothing(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    request = tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="once")
    first = await tree_stub.AskQuestion(request)
    again = await tree_stub.AskQuestion(request)
    assert again.node == first.node
    assert again.tree_revision == first.tree_revision
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))
    assert len(listed.nodes) == 1


async def test_concurrent_retries_with_one_key_write_exactly_once(cluster, tree_stub):
    tree = (await create_tree(tree_stub)).tree
    request = tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="x")
    # Held at the tree's row, the first retry has claimed the key and every other one has
    # reached the key (or the tree) before any of them commits.
    async with held(cluster.primary_dsn, LOCK_TREE, uuid.UUID(tree.id)) as gate:
        writers = [asyncio.ensure_future(tree_stub.AskQuestion(request)) for _ in range(8)]
        await gate.until_waiting(writers)
    responses = await asyncio.gather(*writers)
    assert len({r.node.id for r in responses}) == 1
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))
    assert len(listed.nodes) == 1


async def test_concurrent_appends_to_one_tree_lose_nothing(cluster, tree_stub):
    tree = (await create_tree(tree_stub)).tree
    async with held(cluster.primary_dsn, LOCK_TREE, uuid.UUID(tree.id)) as gate:
        writers = [
            asyncio.ensure_future(
                tree_stub.AskQuestion(
                    tree_pb2.AskQuestionRequest(
                        idempotency_key=unique("k"), tree_id=tree.id, text=f"q{i}"
                    )
                )
            )
            for i in range(20)
        ]
        await gate.until_waiting(writers)
    responses = await asyncio.gather(*writers)
    assert sorted(r.tree_revision for r in responses) == list(range(2, 22))
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))
    assert sorted(n.ordinal for n in listed.nodes) == list(range(1, 21))
    assert (await tree_stub.GetTree(tree_pb2.GetTreeRequest(tree_id=tree.id))).tree.revision == 21


async def test_reusing_a_key_for_a_different_request_is_refused(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    key = unique("k")
    await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=key, tree_id=tree.id, text="a")
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=key, tree_id=tree.id, text="b")
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.ALREADY_EXISTS
    assert failure.reason == "idempotency_key_reused"


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"title": "", "owner": "o"}, "title"),
        ({"title": "t", "owner": ""}, "owner"),
        ({"title": "t" * 501, "owner": "o"}, "title"),
        ({"title": "nul\x00", "owner": "o"}, "title"),
        ({"title": "t", "owner": "o", "project_id": "bad\nid"}, "project_id"),
        ({"title": "t", "owner": "o", "default_realm": 9}, "default_realm"),
    ],
)
async def test_bad_tree_input_names_the_field_and_writes_nothing(tree_stub, request_fields, field):
    key = unique("k")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=key, **request_fields)
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.reason == "invalid_argument"
    assert field in [v.field for v in failure.violations]
    # Nothing was written, not even the idempotency key: the same key now works.
    ok = await tree_stub.CreateTree(
        tree_pb2.CreateTreeRequest(idempotency_key=key, title="t", owner="o")
    )
    assert ok.tree.id


async def test_a_write_without_an_idempotency_key_is_refused(tree_stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.CreateTree(tree_pb2.CreateTreeRequest(title="t", owner="o"))
    assert [v.field for v in describe(caught.value).violations] == ["idempotency_key"]


async def test_unknown_ids_are_not_found_and_malformed_ids_are_invalid(tree_stub):
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=missing, text="q")
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.GetTree(tree_pb2.GetTreeRequest(tree_id="not-a-uuid"))
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.violations[0].field == "tree_id"


async def test_a_parent_from_another_tree_is_refused_and_nothing_is_written(tree_stub):
    one = (await create_tree(tree_stub)).tree
    other = (await create_tree(tree_stub)).tree
    foreign_q = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=other.id, text="q")
    )
    foreign = await tree_stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=unique("k"), question_id=foreign_q.node.id, text="a"
        )
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"), tree_id=one.id, parent_id=foreign.node.id, text="q"
            )
        )
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert (await tree_stub.GetTree(tree_pb2.GetTreeRequest(tree_id=one.id))).tree.revision == 1


async def test_a_binding_token_is_shown_once_and_a_replay_returns_the_same_binding(tree_stub):
    tree = (await create_tree(tree_stub, project_id=unique("proj"))).tree
    request = tree_pb2.CreateBindingRequest(
        idempotency_key=unique("k"), session_id=tree.id, runtime="OpenCode"
    )
    first = await tree_stub.CreateBinding(request)
    again = await tree_stub.CreateBinding(request)
    assert first.token.startswith("mtb_")
    assert again.binding_id == first.binding_id
    assert again.token == ""
    assert first.project_id == tree.project_id


async def test_a_binding_for_an_unknown_runtime_is_refused(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=unique("k"), session_id=tree.id, runtime="Nope"
            )
        )
    assert describe(caught.value).violations[0].field == "runtime"


def review(result_id: str, project: str, **overrides) -> tree_pb2.RecordReviewRequest:
    request = tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=result_id,
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
        phase="daily",
        review_generated_at="2026-10-02T09:00:00+08:00",
        events=[
            tree_pb2.EventInput(
                id="ev-1", kind=tree_pb2.DECISION, title="Adopt plan A", description="We chose A"
            )
        ],
    )
    for key, value in overrides.items():
        setattr(request, key, value)
    return request


async def test_recording_a_review_is_idempotent_by_result_id(tree_stub):
    project = unique("proj")
    result_id = unique("res")
    first = await tree_stub.RecordReview(review(result_id, project))
    again = await tree_stub.RecordReview(review(result_id, project))  # new key, same content
    assert again.graph_revision == first.graph_revision
    assert again.recorded_at == first.recorded_at
    assert first.object_count == 1


async def test_a_different_review_under_a_recorded_result_id_is_refused(tree_stub):
    project = unique("proj")
    result_id = unique("res")
    await tree_stub.RecordReview(review(result_id, project))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordReview(review(result_id, project, phase="weekly"))
    assert describe(caught.value).reason == "idempotency_key_reused"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: setattr(r, "review_generated_at", "2026-10-02T09:00:00"), "review_generated_at"),
        (lambda r: r.ClearField("scope"), "scope"),
        (lambda r: r.events[0].ClearField("kind"), "events[0].kind"),
        (
            lambda r: setattr(r.events[0].event_time, "start", "2026-10-01"),
            "events[0].event_time.start",
        ),
        (
            lambda r: r.events[0].source_reference_ids.append("nope"),
            "events[0].source_reference_ids[0]",
        ),
        (lambda r: r.events.add(id="ev-1", kind=tree_pb2.CHANGE, title="dup"), "events[1].id"),
    ],
)
async def test_a_bad_review_names_the_offending_element_and_records_nothing(
    tree_stub, graph_stub, mutate, field
):
    project = unique("proj")
    request = review(unique("res"), project)
    mutate(request)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordReview(request)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in [v.field for v in failure.violations]


async def test_unknown_question_or_tree_is_not_found_even_beside_existing_nodes(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    question = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="q")
    )
    existing = await tree_stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=unique("k"), question_id=question.node.id, text="a"
        )
    )
    missing = str(uuid.uuid4())
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AdoptAnswer(
            tree_pb2.AdoptAnswerRequest(
                idempotency_key=unique("k"),
                question_id=missing,
                answer_id=existing.node.id,
                expected_revision=1,
            )
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"),
                tree_id=missing,
                parent_id=existing.node.id,
                text="q",
            )
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    after = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.node.id))).node
    assert after.adopted_answer_id == ""
