"""RecordReview's relations, entity changes and leaf facts; RecordSource; SetPreference; and
the projection of confirmed canonicalizations (W3). Refusals name the element and write
nothing."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import asyncpg
import grpc
import pytest

from mirrortree.protoscope import global_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.graph_service.story import ref, relation_input

EVENT = common_pb2.EVENT


def scope_of(project: str) -> common_pb2.Scope:
    return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project]))


def review(
    project: str, result_id: str | None = None, **fields: Any
) -> tree_pb2.RecordReviewRequest:
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=result_id or unique("res"),
        scope=scope_of(project),
        phase="daily",
        review_generated_at="2026-10-02T00:00:00+08:00",
        **fields,
    )


def two_decisions() -> list[tree_pb2.EventInput]:
    return [
        tree_pb2.EventInput(id="a", kind=tree_pb2.DECISION, title="Use SQLite"),
        tree_pb2.EventInput(id="b", kind=tree_pb2.DECISION, title="Use PostgreSQL"),
    ]


EVIDENCE = [
    tree_pb2.SourceReferenceInput(
        id="src", source_type="document", source_id="doc-notes", fragment="because"
    )
]


def replaces(**overrides: Any) -> tree_pb2.RelationInput:
    fields: dict[str, Any] = {"reason": "the load test", "source_reference_ids": ["src"]}
    fields.update(overrides)
    kind = fields.pop("kind", tree_pb2.REPLACES)
    old = fields.pop("to", ref(EVENT, "a"))
    return relation_input("r", kind, ref(EVENT, "b"), old, **fields)


async def refused(tree_stub, request) -> tuple[list[str], str]:
    """The fields an INVALID_ARGUMENT refusal names, and its message."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordReview(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    error = describe(caught.value)
    return [v.field for v in error.violations], caught.value.details()


@pytest.mark.parametrize(
    ("relation", "field"),
    [
        (replaces(source_reference_ids=[]), "relations[0].source_reference_ids"),
        (replaces(reason=""), "relations[0].reason"),
        (replaces(to=None), "relations[0].to"),
        (
            replaces(kind=tree_pb2.CONTRADICTS, source_reference_ids=[]),
            "relations[0].source_reference_ids",
        ),
        (replaces(to=ref(EVENT, "nowhere")), "relations[0].to"),
        (replaces(to=ref(EVENT, "b")), "relations[0].to"),
        (replaces(kind=tree_pb2.RELATION_KIND_UNSPECIFIED), "relations[0].kind"),
        (replaces(to=ref(common_pb2.PREFERENCE, "p")), "relations[0].to.type"),
        (replaces(source_reference_ids=["not-here"]), "relations[0].source_reference_ids[0]"),
    ],
)
async def test_replaces_and_contradicts_need_both_ends_reason_and_evidence(
    tree_stub, graph_stub, relation, field
):
    project = unique("rules")
    request = review(
        project, events=two_decisions(), source_references=EVIDENCE, relations=[relation]
    )
    fields, _ = await refused(tree_stub, request)
    assert field in fields
    # Nothing of the result was written: the whole result is refused.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(
            graph_pb2.GetContextRequest(object_ref=ref(EVENT, "a"), scope=scope_of(project))
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_revised_and_contrasts_are_kept_as_given(tree_stub):
    project = unique("given")
    written = await tree_stub.RecordReview(
        review(
            project,
            events=two_decisions(),
            relations=[
                relation_input("c", tree_pb2.CONTRASTS, ref(EVENT, "b"), ref(EVENT, "a")),
                relation_input(
                    "v", tree_pb2.REVISED, ref(EVENT, "b"), ref(EVENT, "a"), reason="reworded"
                ),
            ],
        )
    )
    assert written.object_count == 4


async def test_ends_may_live_in_earlier_results_of_the_same_scope_only(tree_stub, graph_stub):
    project = unique("ends")
    first = await tree_stub.RecordReview(review(project, events=two_decisions()[:1]))
    later = review(
        project,
        events=two_decisions()[1:],
        source_references=EVIDENCE,
        relations=[replaces()],
        entity_changes=[
            tree_pb2.EntityChangeInput(id="ch", entity_id="ghost", change_type="decided")
        ],
    )
    fields, details = await refused(tree_stub, later)
    assert fields == ["entity_changes[0].entity_id"]
    assert "neither in this result nor in an earlier result" in details
    del later.entity_changes[:]
    written = await tree_stub.RecordReview(later)
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(EVENT, "a"),
            scope=scope_of(project),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    relation = next(c for c in response.collections if c.name == "relations").items[0]
    pinned = json.loads(relation.content.text)["to"]["version"]
    assert pinned == {
        "recorded_in": first.result_id,
        "object_revision": None,
        "given_by": "recorded_copy",
    }
    # The same end in another project's scope does not exist for this result.
    elsewhere = review(unique("ends"), source_references=EVIDENCE, relations=[replaces()])
    fields, _ = await refused(tree_stub, elsewhere)
    assert sorted(fields) == ["relations[0].from", "relations[0].to"]


async def test_leaf_facts_need_their_source_and_fragment_ranges_must_match(tree_stub):
    project = unique("leaf")
    fields, _ = await refused(
        tree_stub,
        review(project, leaf_facts=[tree_pb2.LeafFactInput(id="lf", text="a fact")]),
    )
    assert fields == ["leaf_facts[0].source_reference_ids"]
    fields, _ = await refused(
        tree_stub,
        review(
            project,
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id="s", source_type="message", fragment="🙂ab", fragment_start=2, fragment_end=6
                )
            ],
        ),
    )
    assert fields == ["source_references[0].fragment_end"]
    ok = await tree_stub.RecordReview(
        review(
            project,
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id="s", source_type="message", fragment="🙂ab", fragment_start=2, fragment_end=5
                )
            ],
            leaf_facts=[tree_pb2.LeafFactInput(id="lf", text="a fact", source_reference_ids=["s"])],
        )
    )
    assert ok.object_count == 2


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
    # Both versions describe one entity, readable by the id Search returns.
    entity = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(common_pb2.ENTITY, line), scope=scope_of(project), options=options
        )
    )
    snapshots = next(c for c in entity.collections if c.name == "snapshots").items
    assert len(snapshots) == 2
    assert current_item(entity)["description"]["recorded_by_result"] == (
        f"mainline-{second.version.id}"
    )
    hits = await graph_stub.Search(
        graph_pb2.SearchRequest(query="main line", scope=scope_of(project), options=options)
    )
    assert {h.ref.id for h in hits.hits if h.ref.type == common_pb2.ENTITY} == {line}
    assert all(len(h.ref.id) <= 200 for h in hits.hits)


async def test_sources_take_revisions_and_refuse_stale_writes(tree_stub):
    source_id = unique("doc")

    async def write(expected: int, text: str = "v", **extra: Any) -> tree_pb2.RecordSourceResponse:
        response: tree_pb2.RecordSourceResponse = await tree_stub.RecordSource(
            tree_pb2.RecordSourceRequest(
                idempotency_key=unique("k"),
                source_id=source_id,
                source_type="document",
                text=text,
                expected_revision=expected,
                **extra,
            )
        )
        return response

    assert (await write(0)).revision == 1
    assert (await write(1, "second")).revision == 2
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await write(1, "stale")
    assert caught.value.code() == grpc.StatusCode.ABORTED
    assert describe(caught.value).metadata["current_revision"] == "2"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordSource(
            tree_pb2.RecordSourceRequest(
                idempotency_key=unique("k"), source_id=source_id, source_type="message", text="x"
            )
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "source_type" in caught.value.details()


async def test_preferences_are_revisioned_and_scoped(tree_stub):
    pref_id = unique("pref")

    async def put(expected: int, **fields: Any) -> tree_pb2.SetPreferenceResponse:
        values: dict[str, Any] = {
            "scope": global_scope(),
            "subject": "language",
            "text": "Answer in English",
            "confirmed_by": "u1",
        }
        values.update(fields)
        response: tree_pb2.SetPreferenceResponse = await tree_stub.SetPreference(
            tree_pb2.SetPreferenceRequest(
                idempotency_key=unique("k"),
                preference_id=pref_id,
                expected_revision=expected,
                **values,
            )
        )
        return response

    first = await put(0)
    assert first.preference.revision == 1 and first.preference.updated_at
    assert (await put(1, text="Answer in Chinese")).preference.revision == 2
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await put(1, text="an autosave that read revision 1")
    assert caught.value.code() == grpc.StatusCode.ABORTED
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await put(2, scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=["a", "b"])))
    assert "scope" in caught.value.details()


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


@pytest.mark.parametrize(
    ("objects", "field"),
    [
        ({"entities": [tree_pb2.EntityInput(id="e", label="L" * 501)]}, "entities[0].label"),
        (
            {"entities": [tree_pb2.EntityInput(id="e", label="L", description="a\x00b")]},
            "entities[0].description",
        ),
        ({"entities": [tree_pb2.EntityInput(id="e")]}, "entities[0].label"),
        (
            {
                "events": [
                    tree_pb2.EventInput(
                        id="e", kind=tree_pb2.DECISION, title="t", description="D" * 100_001
                    )
                ]
            },
            "events[0].description",
        ),
        (
            {"events": [tree_pb2.EventInput(id="e", kind=tree_pb2.DECISION, title="t\x00")]},
            "events[0].title",
        ),
        ({"story_lines": [tree_pb2.StoryLineInput(id="l")]}, "story_lines[0].title"),
        (
            {"summaries": [tree_pb2.SummaryInput(id="s", title="t", text="a\x00b")]},
            "summaries[0].text",
        ),
        (
            {
                "source_references": [
                    tree_pb2.SourceReferenceInput(
                        id="s", source_type="document", source_id="d", fragment="a\x00b"
                    )
                ]
            },
            "source_references[0].fragment",
        ),
        (
            {
                "source_references": EVIDENCE,
                "leaf_facts": [
                    tree_pb2.LeafFactInput(id="l", text="a\x00b", source_reference_ids=["src"])
                ],
            },
            "leaf_facts[0].text",
        ),
        (
            {
                "source_references": EVIDENCE,
                "leaf_facts": [tree_pb2.LeafFactInput(id="l", source_reference_ids=["src"])],
            },
            "leaf_facts[0].text",
        ),
        (
            {
                "events": two_decisions(),
                "source_references": EVIDENCE,
                "relations": [replaces(reason="a\x00b")],
            },
            "relations[0].reason",
        ),
        (
            {
                "entity_changes": [
                    tree_pb2.EntityChangeInput(
                        id="c", entity_id="x", change_type="revised", description="a\x00b"
                    )
                ]
            },
            "entity_changes[0].description",
        ),
    ],
)
async def test_a_refusal_names_the_field_the_caller_sent_once(tree_stub, objects, field):
    fields, details = await refused(tree_stub, review(unique("names"), **objects))
    # Exactly the field sent, once: not a stored column (`body`), not the whole element.
    assert fields == [field]
    assert field in details


# A number that is no value of the enum: what a client built against another proto may send.
NOT_A_VALUE: Any = 99


def decision(**fields: Any) -> dict[str, Any]:
    return {"events": [tree_pb2.EventInput(id="e", kind=tree_pb2.DECISION, title="t", **fields)]}


@pytest.mark.parametrize(
    ("objects", "field"),
    [
        (decision(confirmation_state=NOT_A_VALUE), "events[0].confirmation_state"),
        (
            {"entities": [tree_pb2.EntityInput(id="e", label="l", confirmation_state=NOT_A_VALUE)]},
            "entities[0].confirmation_state",
        ),
        (
            {
                "events": two_decisions(),
                "source_references": EVIDENCE,
                "relations": [replaces(confirmation_state=NOT_A_VALUE)],
            },
            "relations[0].confirmation_state",
        ),
        (
            {
                "source_references": EVIDENCE,
                "leaf_facts": [
                    tree_pb2.LeafFactInput(
                        id="l",
                        text="x",
                        source_reference_ids=["src"],
                        confirmation_state=NOT_A_VALUE,
                    )
                ],
            },
            "leaf_facts[0].confirmation_state",
        ),
        (
            {
                **decision(),
                "entity_changes": [
                    tree_pb2.EntityChangeInput(
                        id="c", entity_id="e", change_type="x", confirmation_state=NOT_A_VALUE
                    )
                ],
            },
            "entity_changes[0].confirmation_state",
        ),
        (
            decision(
                event_time=common_pb2.EventTime(start="2026-10-01T00:00:00Z", precision=NOT_A_VALUE)
            ),
            "events[0].event_time.precision",
        ),
        (
            decision(event_time=common_pb2.EventTime(precision=NOT_A_VALUE)),
            "events[0].event_time.precision",
        ),
        (
            decision(event_time=common_pb2.EventTime(precision=common_pb2.DAY)),
            "events[0].event_time.precision",
        ),
        (decision(event_time=common_pb2.EventTime(known=True)), "events[0].event_time.known"),
        (
            {
                **decision(),
                "entity_changes": [
                    tree_pb2.EntityChangeInput(
                        id="c",
                        entity_id="e",
                        change_type="x",
                        applies_at=common_pb2.EventTime(known=True, basis="stated"),
                    )
                ],
            },
            "entity_changes[0].applies_at.known",
        ),
    ],
)
async def test_a_value_that_would_be_stored_as_unset_is_refused(tree_stub, objects, field):
    fields, details = await refused(tree_stub, review(unique("enums"), **objects))
    assert fields == [field]
    assert field in details


async def test_unset_states_and_unknown_times_stay_accepted(tree_stub, graph_stub):
    project = unique("unset")
    written = await tree_stub.RecordReview(
        review(
            project,
            events=[
                tree_pb2.EventInput(id="u", kind=tree_pb2.DECISION, title="Undated"),
                tree_pb2.EventInput(
                    id="k",
                    kind=tree_pb2.DECISION,
                    title="Dated",
                    confirmation_state=common_pb2.CONFIRMED,
                    event_time=common_pb2.EventTime(
                        start="2026-10-01T00:00:00Z", precision=common_pb2.DAY, known=True
                    ),
                ),
                tree_pb2.EventInput(
                    id="b",
                    kind=tree_pb2.DECISION,
                    title="Basis only",
                    event_time=common_pb2.EventTime(basis="not stated", known=False),
                ),
            ],
        )
    )
    assert written.object_count == 3


async def test_every_link_by_id_must_reach_an_object_of_this_or_an_earlier_result_in_scope(
    tree_stub, graph_stub
):
    project, other = unique("links"), unique("links")
    await tree_stub.RecordReview(
        review(other, entities=[tree_pb2.EntityInput(id="secret", label="Other scope")])
    )
    first = await tree_stub.RecordReview(
        review(
            project,
            entities=[tree_pb2.EntityInput(id="ent", label="Storage")],
            events=two_decisions()[:1],
        )
    )
    dangling = review(
        project,
        events=[
            tree_pb2.EventInput(
                id="e", kind=tree_pb2.DECISION, title="Dangling", entity_ids=["ent", "nope"]
            )
        ],
        story_lines=[
            tree_pb2.StoryLineInput(
                id="sl", title="Dangling", event_ids=["a", "e", "gone"], entity_ids=["secret"]
            )
        ],
        summaries=[
            tree_pb2.SummaryInput(
                id="sm",
                title="Dangling",
                text="x",
                fact_refs=[ref(EVENT, "e"), ref(common_pb2.ENTITY, "secret"), ref(EVENT, "gone2")],
            )
        ],
    )
    fields, details = await refused(tree_stub, dangling)
    assert sorted(fields) == [
        "events[0].entity_ids[1]",
        "story_lines[0].entity_ids[0]",
        "story_lines[0].event_ids[2]",
        "summaries[0].fact_refs[1]",  # each field naming a missing object, not only the first
        "summaries[0].fact_refs[2]",
    ]
    assert "neither in this result nor in an earlier result" in details
    # Nothing of the refused result was written, and the same links to objects of this
    # result ("e") and of an earlier result of the scope ("a", "ent") are accepted.
    dangling.result_id = unique("res")
    dangling.idempotency_key = unique("k")
    del dangling.events[0].entity_ids[1:]
    del dangling.story_lines[0].event_ids[2:]
    del dangling.story_lines[0].entity_ids[:]
    del dangling.summaries[0].fact_refs[1:]
    written = await tree_stub.RecordReview(dangling)
    assert written.graph_revision > first.graph_revision
    found = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="Dangling",
            scope=scope_of(project),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    assert sorted((h.ref.id, h.result_id) for h in found.hits) == [
        ("e", written.result_id),
        ("sl", written.result_id),
        ("sm", written.result_id),
    ]


@pytest.mark.parametrize(
    "case",
    [
        (
            tree_pb2.REPLACES,
            tree_pb2.SourceReferenceInput(id="src", source_type="x"),
            "the load test",
            "relations[0].source_reference_ids[0]",
            "has no source_id and an empty fragment",
        ),
        (
            tree_pb2.REPLACES,
            tree_pb2.SourceReferenceInput(id="src", source_type="document", fragment="because"),
            "the load test",
            "relations[0].source_reference_ids[0]",
            "has no source_id",
        ),
        (
            tree_pb2.CONTRADICTS,
            tree_pb2.SourceReferenceInput(
                id="src", source_type="document", source_id="doc", fragment="  "
            ),
            "the load test",
            "relations[0].source_reference_ids[0]",
            "has an empty fragment",
        ),
        (tree_pb2.REPLACES, EVIDENCE[0], ".", "relations[0].reason", "in words"),
    ],
)
async def test_evidence_that_changes_validity_names_its_source_and_quotes_it(
    tree_stub, graph_stub, case
):
    kind, evidence, reason, field, says = case
    project = unique("evidence")
    request = review(
        project,
        events=two_decisions(),
        source_references=[evidence],
        relations=[replaces(kind=kind, reason=reason)],
    )
    fields, details = await refused(tree_stub, request)
    assert fields == [field]
    assert says in details
    if field.startswith("relations[0].source_reference_ids"):
        assert "'src' (source_references[0])" in details
    # Nothing was written; the same evidence may still back a relation that claims less.
    request.relations[0].kind = tree_pb2.CONTRASTS
    written = await tree_stub.RecordReview(request)
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(EVENT, "a"),
            scope=scope_of(project),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    current = next(c for c in response.collections if c.name == "current").items[0]
    assert current.time.validity.state == common_pb2.VALIDITY_UNKNOWN


def cited(ref_id: str = "s", fragment: str = "ORIGINAL evidence for A", **fields: Any):
    values: dict[str, Any] = {
        "id": ref_id,
        "source_type": "document",
        "source_id": "doc-1",
        "source_version": "1",
        "fragment": fragment,
        "locator": common_pb2.SourceLocator(project_id="p", known=True),
    }
    values.update(fields)
    return tree_pb2.SourceReferenceInput(**values)


@pytest.mark.parametrize(
    ("changed", "says"),
    [
        ({"fragment": "completely different text"}, "another fragment"),
        ({"source_id": "doc-2"}, "source_id ('doc-1' there, 'doc-2' here)"),
        ({"source_type": "knowledge"}, "source_type ('document' there, 'knowledge' here)"),
        ({"source_version": "2"}, "source_version ('1' there, '2' here)"),
        (
            {"fragment_start": 10, "fragment_end": 33},
            "fragment range ([0, 0) there, [10, 33) here)",
        ),
        (
            {"locator": common_pb2.SourceLocator(project_id="p", known=True, message_id="m")},
            "locator.message_id ('' there, 'm' here)",
        ),
    ],
)
async def test_a_source_reference_id_keeps_its_first_content_in_its_scope(
    tree_stub, graph_stub, changed, says
):
    project = unique("refs")
    first = await tree_stub.RecordReview(
        review(
            project,
            source_references=[cited()],
            events=[
                tree_pb2.EventInput(
                    id="a", kind=tree_pb2.DECISION, title="Decide A", source_reference_ids=["s"]
                )
            ],
        )
    )
    later = review(
        project,
        source_references=[cited(ref_id="other"), cited(**changed)],
        events=[
            tree_pb2.EventInput(
                id="b", kind=tree_pb2.DECISION, title="Decide B", source_reference_ids=["s"]
            )
        ],
    )
    fields, details = await refused(tree_stub, later)
    assert fields == ["source_references[1].id"]
    assert f"earlier result {first.result_id!r}" in details and says in details
    # Nothing of the refused result was written, and A's evidence is still what it was.
    again = review(project, source_references=[cited()], events=[later.events[0]])
    recited = await tree_stub.RecordReview(again)
    options = graph_pb2.ReadOptions(min_consistency=recited.consistency)
    source = await graph_stub.ReadSource(
        graph_pb2.ReadSourceRequest(
            source_reference_id="s", scope=scope_of(project), options=options
        )
    )
    assert source.text == "ORIGINAL evidence for A"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(
                source_reference_id="other", scope=scope_of(project), options=options
            )
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    # Re-sending a recorded result stays a replay, under any idempotency key.
    again.idempotency_key = unique("k")
    assert (await tree_stub.RecordReview(again)).graph_revision == recited.graph_revision
    # Another scope has its own reference ids.
    elsewhere = await tree_stub.RecordReview(
        review(unique("refs"), source_references=[cited(**changed)])
    )
    assert elsewhere.object_count == 1


# gRPC carries a refusal in its trailers, which a default client accepts up to 8 KiB: a refusal
# that echoed a huge value, or listed every one of many bad fields, reached the client as
# RESOURCE_EXHAUSTED with the field names lost.
@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"review_generated_at": "x" * 16_000}, ["review_generated_at"]),  # replaces the valid one
        (
            {"covered": common_pb2.TimeRange(**{"from": "2026-10-02T00:00:00." + "1" * 16_000})},
            ["covered.from"],
        ),
        (
            {
                "events": [
                    tree_pb2.EventInput(
                        id="e",
                        kind=tree_pb2.DECISION,
                        title="t",
                        source_reference_ids=["r" * 20_000],
                    )
                ]
            },
            ["events[0].source_reference_ids[0]"],
        ),
        (
            {
                "source_references": [
                    tree_pb2.SourceReferenceInput(id=f"s{i}", fragment="f") for i in range(500)
                ]
            },
            [f"source_references[{i}].source_type" for i in range(500)],
        ),
    ],
    ids=["long-time", "long-naive-time", "long-reference-id", "many-bad-fields"],
)
async def test_a_refusal_of_huge_input_stays_readable_and_writes_nothing(
    cluster, tree_stub, fields, named
):
    request = review(unique("huge"))
    for name, value in fields.items():
        if name == "review_generated_at":
            request.review_generated_at = value
        elif name == "covered":
            request.covered.CopyFrom(value)
        else:
            getattr(request, name).extend(value)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordReview(request)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    shown = [v.field for v in failure.violations]
    # Every field shown is one that is wrong, in order; as many as fit are shown.
    assert shown and shown == named[: len(shown)]
    assert shown[0] in failure.message
    omitted = int(failure.metadata.get("violations_omitted", "0"))
    assert len(shown) + omitted == len(named)
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        rows = await conn.fetchval(
            "SELECT count(*) FROM review_results WHERE result_id = $1", request.result_id
        )
    finally:
        await conn.close()
    assert rows == 0
