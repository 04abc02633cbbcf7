"""The projection of confirmed canonicalizations into the story graph (W3): each confirmed
main-line version becomes a decision replacing the previous one, under `mainline-` ids that a
review may refer to but never record under, and within the id limit."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import grpc
import pytest

from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.graph_service.story import ref, relation_input
from tests.tree_service.reviews import EVENT, EVIDENCE, refused, review, scope_of, two_decisions


async def test_result_ids_of_main_line_projections_are_reserved(tree_stub):
    fields, _ = await refused(
        tree_stub, review(unique("p"), result_id="mainline-anything", events=two_decisions())
    )
    assert fields == ["result_id"]


async def confirmed_main_line(
    tree_stub, project: str, world: str = ""
) -> tuple[tree_pb2.Tree, tree_pb2.CanonicalizeResponse]:
    """A tree of `project` whose one question and answer the user confirmed as main line v1
    (of the real-experience line, or of `world`'s canon)."""
    realm: dict[str, Any] = {"realm": tree_pb2.WORLD, "world": world} if world else {}
    tree = (await create_tree(tree_stub, project, title="Pick a database")).tree
    question = (
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"), tree_id=tree.id, text="Which DB?", **realm
            )
        )
    ).node
    answer = (
        await tree_stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=unique("k"), question_id=question.id, text="SQLite"
            )
        )
    ).node
    confirmed: tree_pb2.CanonicalizeResponse = await tree_stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            leaf_node_id=answer.id,
            confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="u1"),
        )
    )
    return tree, confirmed


def current_item(response: graph_pb2.GetContextResponse) -> dict[str, Any]:
    item = next(c for c in response.collections if c.name == "current").items[0]
    content: dict[str, Any] = json.loads(item.content.text)
    return content


# One object of each type a review records, under the id `reserved` (main-line ids look like
# `mainline-version-<version>` and `mainline-<tree>-real_experience`).
RESERVED_OBJECTS: dict[str, Any] = {
    "source_references": lambda reserved: tree_pb2.SourceReferenceInput(
        id=reserved, source_type="document", source_id="doc", fragment="MongoDB"
    ),
    "story_lines": lambda reserved: tree_pb2.StoryLineInput(id=reserved, title="Database"),
    "events": lambda reserved: tree_pb2.EventInput(
        id=reserved,
        kind=tree_pb2.DECISION,
        title="Confirmed real-experience main line v1: use MongoDB",
        description="The user confirmed MongoDB",
        confirmation_state=common_pb2.CONFIRMED,
    ),
    "entities": lambda reserved: tree_pb2.EntityInput(
        id=reserved,
        label="real-experience main line",
        description="Version 7. Last node: MongoDB",
        revision="7",
        confirmation_state=common_pb2.CONFIRMED,
    ),
    "entity_changes": lambda reserved: tree_pb2.EntityChangeInput(
        id=reserved, entity_id="db", change_type="revised", description="to MongoDB"
    ),
    "relations": lambda reserved: relation_input(
        reserved, tree_pb2.CONTRASTS, ref(EVENT, "use-sqlite"), ref(EVENT, "use-sqlite-too")
    ),
    "leaf_facts": lambda reserved: tree_pb2.LeafFactInput(
        id=reserved, text="MongoDB it is", source_reference_ids=["src"]
    ),
    "summaries": lambda reserved: tree_pb2.SummaryInput(id=reserved, title="DB", text="MongoDB"),
}


@pytest.mark.parametrize("field", list(RESERVED_OBJECTS))
async def test_a_review_cannot_record_an_object_under_a_main_line_id(tree_stub, graph_stub, field):
    project = unique("immutable")
    tree, confirmed = await confirmed_main_line(tree_stub, project)
    main_event = f"mainline-version-{confirmed.version.id}"
    reserved = {
        "events": main_event,
        "entities": f"mainline-{tree.id}-real_experience",
        "source_references": f"mainline-{confirmed.version.id}-{confirmed.version.node_ids[0]}",
        "relations": f"mainline-replaces-{confirmed.version.id}",
    }.get(field, f"mainline-{confirmed.version.id}-{field}")
    ordinary: dict[str, Any] = {
        "source_references": list(EVIDENCE),
        "events": [
            tree_pb2.EventInput(id="use-sqlite", kind=tree_pb2.DECISION, title="Use SQLite"),
            tree_pb2.EventInput(id="use-sqlite-too", kind=tree_pb2.DECISION, title="SQLite"),
        ],
        "entities": [tree_pb2.EntityInput(id="db", label="database")],
    }
    index = len(ordinary.get(field, []))
    ordinary.setdefault(field, []).append(RESERVED_OBJECTS[field](reserved))

    fields, message = await refused(tree_stub, review(project, **ordinary))

    assert fields == [f"{field}[{index}].id"]
    assert "'mainline-' are reserved" in message
    # Nothing of the result was written, and the confirmed decision reads as it was projected.
    later = await tree_stub.RecordReview(
        review(project, events=[tree_pb2.EventInput(id="x", kind=tree_pb2.CHANGE, title="x")])
    )
    options = graph_pb2.ReadOptions(min_consistency=later.consistency)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=ref(EVENT, "use-sqlite"), scope=scope_of(project), options=options
            )
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    decision = current_item(
        await graph_stub.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=ref(EVENT, main_event), scope=scope_of(project), options=options
            )
        )
    )
    assert "MongoDB" not in json.dumps(decision)
    assert decision["description"]["recorded_by_result"] == f"mainline-{confirmed.version.id}"


async def test_a_review_may_refer_to_main_line_objects_and_replace_the_decision(
    tree_stub, graph_stub
):
    project = unique("refers")
    tree, confirmed = await confirmed_main_line(tree_stub, project)
    main_event = f"mainline-version-{confirmed.version.id}"
    main_line = f"mainline-{tree.id}-real_experience"
    written = await tree_stub.RecordReview(
        review(
            project,
            source_references=EVIDENCE,
            story_lines=[
                tree_pb2.StoryLineInput(
                    id="line", title="Database", event_ids=[main_event], entity_ids=[main_line]
                )
            ],
            events=[
                tree_pb2.EventInput(
                    id="use-postgres",
                    kind=tree_pb2.DECISION,
                    title="Use PostgreSQL",
                    entity_ids=[main_line],
                )
            ],
            entity_changes=[
                tree_pb2.EntityChangeInput(
                    id="moved", entity_id=main_line, event_id=main_event, change_type="revised"
                )
            ],
            relations=[
                relation_input(
                    "pg-replaces-sqlite",
                    tree_pb2.REPLACES,
                    ref(EVENT, "use-postgres"),
                    ref(EVENT, main_event),
                    reason="the load test",
                    source_reference_ids=["src"],
                )
            ],
            leaf_facts=[
                tree_pb2.LeafFactInput(
                    id="fact",
                    text="SQLite was confirmed first",
                    about=[ref(EVENT, main_event), ref(common_pb2.ENTITY, main_line)],
                    source_reference_ids=["src"],
                )
            ],
            summaries=[
                tree_pb2.SummaryInput(
                    id="sum", title="DB", text="moved on", fact_refs=[ref(EVENT, main_event)]
                )
            ],
        )
    )
    assert written.object_count == 7
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(EVENT, main_event),
            scope=scope_of(project),
            mode=graph_pb2.TIMELINE,
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    timeline = next(c for c in response.collections if c.name == "timeline").items
    (decision,) = [i for i in timeline if i.ref.id == main_event]
    # The review's evidenced `replaces` supersedes the confirmed decision it points at.
    assert decision.time.validity.state == common_pb2.VALIDITY_SUPERSEDED


@pytest.mark.parametrize(
    ("world", "line_suffix"),
    [
        ("Arden", "world_canon-Arden"),  # an id that fits names its world, as it always has
        ("w" * 200, "world_canon@sha256:" + hashlib.sha256(b"w" * 200).hexdigest()),
    ],
)
async def test_a_world_main_line_entity_id_stays_within_the_id_limit(
    tree_stub, graph_stub, world, line_suffix
):
    project = unique("worlds")
    tree, first = await confirmed_main_line(tree_stub, project, world=world)
    line = f"mainline-{tree.id}-{line_suffix}"
    assert len(line) <= 200
    question_id = first.version.node_ids[0]
    answer = (
        await tree_stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=unique("k"), question_id=question_id, text="PostgreSQL"
            )
        )
    ).node
    second = await tree_stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            leaf_node_id=answer.id,
            expected_version=1,
            confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="u1"),
        )
    )
    options = graph_pb2.ReadOptions(min_consistency=second.consistency)
    # World canon lives in the world's own canon scope, the same for every version.
    canon = second.version.story_graph_scope
    assert canon == first.version.story_graph_scope
    assert canon.projects.project_ids[0].startswith("canon:world-canon")
    # Both versions describe one entity, readable by the id Search returns.
    entity = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(common_pb2.ENTITY, line), scope=canon, options=options
        )
    )
    snapshots = next(c for c in entity.collections if c.name == "snapshots").items
    assert len(snapshots) == 2
    assert current_item(entity)["description"]["recorded_by_result"] == (
        f"mainline-{second.version.id}"
    )
    hits = await graph_stub.Search(
        graph_pb2.SearchRequest(query="main line", scope=canon, options=options)
    )
    assert {h.ref.id for h in hits.hits if h.ref.type == common_pb2.ENTITY} == {line}
    assert all(len(h.ref.id) <= 200 for h in hits.hits)


async def test_confirmed_canonicalization_becomes_a_decision_replacing_the_previous(
    tree_stub, graph_stub
):
    project = unique("canon")
    tree = (await create_tree(tree_stub, project, title="Pick a queue")).tree
    question = (
        await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="Queue?")
        )
    ).node
    answers = [
        (
            await tree_stub.AddAnswer(
                tree_pb2.AddAnswerRequest(
                    idempotency_key=unique("k"), question_id=question.id, text=text
                )
            )
        ).node
        for text in ("Use RabbitMQ", "Use PostgreSQL SKIP LOCKED")
    ]
    versions = []
    for expected, answer in enumerate(answers):
        versions.append(
            await tree_stub.Canonicalize(
                tree_pb2.CanonicalizeRequest(
                    idempotency_key=unique("k"),
                    tree_id=tree.id,
                    leaf_node_id=answer.id,
                    expected_version=expected,
                    confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="u1"),
                )
            )
        )
    old_event = f"mainline-version-{versions[0].version.id}"
    new_event = f"mainline-version-{versions[1].version.id}"
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(EVENT, old_event),
            scope=scope_of(project),
            mode=graph_pb2.TIMELINE,
            options=graph_pb2.ReadOptions(min_consistency=versions[1].consistency),
        )
    )
    timeline = next(c for c in response.collections if c.name == "timeline").items
    by_id = {i.ref.id: i for i in timeline}
    assert by_id[old_event].kind == "decision"
    assert by_id[old_event].time.confirmation_state == common_pb2.CONFIRMED
    assert by_id[old_event].time.validity.state == common_pb2.VALIDITY_SUPERSEDED
    assert by_id[new_event].time.validity.state == common_pb2.VALIDITY_CURRENT
    relation = json.loads(by_id[f"mainline-replaces-{versions[1].version.id}"].content.text)
    assert relation["from"]["id"] == new_event and relation["to"]["id"] == old_event
    # The evidence is the confirmed version's own nodes, readable as message sources.
    sources = next(c for c in response.collections if c.name == "sources").items
    cited = {json.loads(s.content.text)["source_id"] for s in sources}
    assert {question.id, answers[1].id} <= cited
    # Replaying the canonicalization (same key) projects nothing twice.
    hits = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="Confirmed real-experience main line",
            scope=scope_of(project),
            options=graph_pb2.ReadOptions(min_consistency=versions[1].consistency),
        )
    )
    assert sorted(h.ref.id for h in hits.hits if h.ref.type == EVENT) == sorted(
        [old_event, new_event]
    )
