"""What a recorded review may link and cite: RecordReview's relations and their ends, links by
id, leaf facts, the evidence behind a change of validity and the content a source reference id
keeps; and the revisions of RecordSource and SetPreference. Refusals name the element and write
nothing."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from mirrortree.protoscope import global_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import ref, relation_input
from tests.tree_service.reviews import (
    EVENT,
    EVIDENCE,
    refused,
    replaces,
    review,
    scope_of,
    two_decisions,
)


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
