"""The current description of an object is chosen by evidence: an explicit object revision,
else the period its review covered — never when a review was generated or recorded; where
neither decides, `current` lists the competing descriptions with their periods."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.contexts import collection, content
from tests.graph_service.story import options, project_scope, record

ENTITY = common_pb2.ENTITY
NEWER_STATE = "PostgreSQL chosen"
BACKFILL = "No database chosen yet"


async def describe_twice(
    tree_stub, graph_stub, newer: dict[str, Any], backfill: dict[str, Any], **entity: str
) -> dict[str, Any]:
    """The newer state recorded first, then a backfill of an older period generated later
    (as the issue's example: generated 2026-11-01 for October 1-2); the current projection."""
    project = unique("cur")
    written = None
    for text, review, revision in (
        (NEWER_STATE, newer, entity.get("newer_revision", "")),
        (BACKFILL, backfill, entity.get("backfill_revision", "")),
    ):
        written = await record(
            tree_stub,
            project,
            entities=[
                tree_pb2.EntityInput(
                    id="ent-db", label="Database", description=text, revision=revision
                )
            ],
            **review,
        )
    assert written is not None
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=ENTITY, id="ent-db"),
            scope=project_scope(project),
            options=options(written),
        )
    )
    document: dict[str, Any] = content(collection(response, "current").items[0])
    return document


def period(start: str, end: str) -> dict[str, Any]:
    return {"covered": {"from": start, "to": end}}


NEWER = {
    **period("2026-10-05T00:00:00Z", "2026-10-09T23:59:59Z"),
    "review_generated_at": "2026-10-10T00:00:00Z",
}
LATE_BACKFILL = {
    **period("2026-10-01T00:00:00Z", "2026-10-02T23:59:59Z"),
    "review_generated_at": "2026-11-01T00:00:00Z",
}


async def test_the_higher_object_revision_is_current_however_late_the_backfill(
    tree_stub, graph_stub
):
    current = await describe_twice(
        tree_stub, graph_stub, NEWER, LATE_BACKFILL, newer_revision="2", backfill_revision="1"
    )
    description = current["description"]
    assert description["state"] == "chosen"
    assert description["description"] == NEWER_STATE
    assert description["chosen_by"] == "object_revision"
    assert description["object_revision"] == "2"


async def test_without_revisions_the_latest_covered_period_is_current_not_the_latest_review(
    tree_stub, graph_stub
):
    current = await describe_twice(tree_stub, graph_stub, NEWER, LATE_BACKFILL)
    description = current["description"]
    assert description["description"] == NEWER_STATE
    assert description["chosen_by"] == "covered_period"
    assert description["covered_period"] == {
        "from": "2026-10-05T00:00:00Z",
        "to": "2026-10-09T23:59:59Z",
    }
    # The same holds when the backfill is the one recorded first.
    current = await describe_twice(
        tree_stub,
        graph_stub,
        {**LATE_BACKFILL, "review_generated_at": "2026-09-01T00:00:00Z"},
        NEWER,
    )
    assert current["description"]["description"] == BACKFILL  # its period is now the later


async def test_a_revision_beats_a_later_period(tree_stub, graph_stub):
    """A review of a later period that saw an older revision does not make that revision
    current: the explicit revision decides first."""
    current = await describe_twice(
        tree_stub, graph_stub, LATE_BACKFILL, NEWER, newer_revision="2", backfill_revision="1"
    )
    assert current["description"]["description"] == NEWER_STATE


async def test_where_no_evidence_decides_current_lists_the_competitors_and_does_not_choose(
    tree_stub, graph_stub
):
    counts_only = {
        "covered": {},
        "coverage_basis": common_pb2.COVERAGE_COUNTS,
        "coverage_counts": [common_pb2.CoverageCount(what="messages", count=40)],
        "review_generated_at": "2026-11-01T00:00:00Z",
    }
    current = await describe_twice(tree_stub, graph_stub, NEWER, counts_only)
    description = current["description"]
    assert description["state"] == "undecided"
    assert "no evidence decides" in description["reason"]
    assert BACKFILL not in str(description.get("description"))
    competing = {c["description"]: c for c in description["competing"]}
    assert set(competing) == {NEWER_STATE, BACKFILL}
    assert competing[NEWER_STATE]["covered_period"] == {
        "from": "2026-10-05T00:00:00Z",
        "to": "2026-10-09T23:59:59Z",
    }
    assert "unknown" in competing[BACKFILL]["covered_period"]
    assert description["competing_complete"] is True

    # Equal periods and no revisions: nothing decides either.
    same = {**NEWER, "review_generated_at": "2026-12-01T00:00:00Z"}
    current = await describe_twice(tree_stub, graph_stub, NEWER, same)
    assert current["description"]["state"] == "undecided"


async def test_copies_that_say_the_same_thing_do_not_compete(tree_stub, graph_stub):
    project = unique("cur")
    written = None
    for review in (NEWER, LATE_BACKFILL):
        written = await record(
            tree_stub,
            project,
            entities=[tree_pb2.EntityInput(id="e", label="Database", description="Same")],
            **review,
        )
    assert written is not None
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=ENTITY, id="e"),
            scope=project_scope(project),
            options=options(written),
        )
    )
    description = content(collection(response, "current").items[0])["description"]
    assert description["state"] == "chosen"
    assert description["chosen_by"] == "one_description"
