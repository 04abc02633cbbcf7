"""Coverage known only as counts (a legacy import) or not at all: RecordReview takes it with
its basis, and every read reports the interval as unknown with the counts shown as counts —
never as an empty, i.e. unbounded, interval."""

from __future__ import annotations

from typing import Any

import pytest

from gateway import results
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.reviews import refused, review, scope_of


def two_decisions() -> list[tree_pb2.EventInput]:
    """Decisions with ids of their own: other tests rely on ids like "a" existing nowhere."""
    return [
        tree_pb2.EventInput(id=unique("cov-a"), kind=tree_pb2.DECISION, title="Use SQLite"),
        tree_pb2.EventInput(id=unique("cov-b"), kind=tree_pb2.DECISION, title="Use PostgreSQL"),
    ]


COUNTS = [
    common_pb2.CoverageCount(what="messages", count=120),
    common_pb2.CoverageCount(what="sessions", count=3),
]


def covered(**fields: Any) -> common_pb2.TimeRange:
    return common_pb2.TimeRange(**fields)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        (
            {
                "coverage_basis": common_pb2.COVERAGE_COUNTS,
                "coverage_counts": COUNTS,
                "covered": covered(**{"from": "2026-10-01T00:00:00Z"}),
            },
            "covered",
        ),
        ({"coverage_basis": common_pb2.COVERAGE_COUNTS}, "coverage_counts"),
        ({"coverage_counts": COUNTS}, "coverage_counts"),
        (
            {
                "coverage_basis": common_pb2.COVERAGE_UNKNOWN,
                "covered": covered(to="2026-10-02T00:00:00Z"),
            },
            "covered",
        ),
        (
            {
                "coverage_basis": common_pb2.COVERAGE_COUNTS,
                "coverage_counts": [COUNTS[0], COUNTS[0]],
            },
            "coverage_counts[1].what",
        ),
        (
            {
                "coverage_basis": common_pb2.COVERAGE_COUNTS,
                "coverage_counts": [common_pb2.CoverageCount(what="messages", count=-1)],
            },
            "coverage_counts[0].count",
        ),
        (
            {
                "coverage_basis": common_pb2.COVERAGE_COUNTS,
                "coverage_counts": [common_pb2.CoverageCount(what="", count=1)],
            },
            "coverage_counts[0].what",
        ),
        ({"coverage_basis": 9}, "coverage_basis"),
    ],
)
async def test_a_coverage_basis_that_contradicts_itself_is_refused_by_field(
    tree_stub, fields, field
):
    request = review(unique("cov"), events=two_decisions(), **fields)
    named, _ = await refused(tree_stub, request)
    assert field in named


async def test_counts_only_and_unknown_coverage_read_as_unknown_intervals_with_counts(
    tree_stub, graph_stub
):
    project = unique("cov")
    scope = scope_of(project)
    decisions = two_decisions()
    ids = {name: unique(name) for name in ("legacy", "silent", "daily")}
    await tree_stub.RecordReview(
        review(
            project,
            ids["legacy"],
            events=decisions,
            coverage_basis=common_pb2.COVERAGE_COUNTS,
            coverage_counts=COUNTS,
        )
    )
    await tree_stub.RecordReview(
        review(project, ids["silent"], coverage_basis=common_pb2.COVERAGE_UNKNOWN)
    )
    written = await tree_stub.RecordReview(
        review(
            project,
            ids["daily"],
            covered=covered(**{"from": "2026-10-01T00:00:00Z", "to": "2026-10-01T23:59:59Z"}),
        )
    )
    options = graph_pb2.ReadOptions(min_consistency=written.consistency)
    search = await graph_stub.Search(
        graph_pb2.SearchRequest(query="Use", scope=scope, options=options)
    )
    context = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=common_pb2.EVENT, id=decisions[0].id),
            scope=scope,
            options=options,
        )
    )
    for coverage in (search.coverage, context.coverage):
        by_id = {c.result_id: c for c in coverage.processed}
        by_result = {name: by_id[result_id] for name, result_id in ids.items()}
        legacy = by_result["legacy"]
        assert legacy.basis == common_pb2.COVERAGE_COUNTS
        assert not legacy.HasField("covered")
        assert "only counts" in legacy.covered_unknown.reason
        assert [(c.what, c.count) for c in legacy.counts] == [("messages", 120), ("sessions", 3)]
        silent = by_result["silent"]
        assert silent.basis == common_pb2.COVERAGE_UNKNOWN
        assert silent.covered_unknown.reason
        assert not silent.counts
        daily = by_result["daily"]
        assert daily.basis == common_pb2.COVERAGE_INTERVAL
        assert daily.covered.to == "2026-10-01T23:59:59Z"
        assert not daily.HasField("covered_unknown")

    # As the tools write it: the basis in words, counts as counts (int64 as strings), no
    # interval at all rather than an empty (unbounded) one.
    listed = {c["result_id"]: c for c in results.result_json(search)["coverage"]["processed"]}
    processed = {name: listed[result_id] for name, result_id in ids.items()}
    assert processed["legacy"]["basis"] == "counts"
    assert "covered" not in processed["legacy"]
    assert processed["legacy"]["covered_unknown"]["reason"]
    assert processed["legacy"]["counts"] == [
        {"what": "messages", "count": "120"},
        {"what": "sessions", "count": "3"},
    ]
    assert processed["silent"]["basis"] == "unknown"
    assert processed["daily"]["basis"] == "interval"
    assert processed["daily"]["covered"]["from"] == "2026-10-01T00:00:00Z"


async def test_a_result_without_a_basis_keeps_its_interval(tree_stub, graph_stub):
    project = unique("cov")
    written = await tree_stub.RecordReview(
        review(project, events=two_decisions(), covered=covered(to="2026-10-02T00:00:00Z"))
    )
    search = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="Use",
            scope=scope_of(project),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    (only,) = search.coverage.processed
    assert only.basis == common_pb2.COVERAGE_INTERVAL
    assert only.covered.to == "2026-10-02T00:00:00Z"
    assert not getattr(only.covered, "from")


async def test_a_result_that_gave_no_interval_covered_an_unknown_period(tree_stub, graph_stub):
    project = unique("cov")
    decisions = two_decisions()
    written = await tree_stub.RecordReview(review(project, events=decisions))
    options = graph_pb2.ReadOptions(min_consistency=written.consistency)
    search = await graph_stub.Search(
        graph_pb2.SearchRequest(query="Use", scope=scope_of(project), options=options)
    )
    context = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=common_pb2.EVENT, id=decisions[0].id),
            scope=scope_of(project),
            options=options,
        )
    )
    for coverage in (search.coverage, context.coverage):
        (only,) = coverage.processed
        assert only.basis == common_pb2.COVERAGE_UNKNOWN
        assert not only.HasField("covered")
        assert only.covered_unknown.reason == "the result gave no covered interval"
    (listed,) = results.result_json(search)["coverage"]["processed"]
    assert listed["basis"] == "unknown" and "covered" not in listed
    # Nothing a result says points at a field the tools do not have.
    current = next(c for c in context.collections if c.name == "current")
    for item in current.items:
        assert "basis." not in item.object_revision.unknown.reason
