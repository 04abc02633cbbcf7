"""RecordReview's refusals of bad values: a refusal names exactly the field the caller sent, a
value that would be stored as unset is refused while unset states stay accepted, and a refusal
of huge input stays readable and writes nothing."""

from __future__ import annotations

from typing import Any

import asyncpg
import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.reviews import EVIDENCE, refused, replaces, review, two_decisions


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
