"""What a first search page counts: every match up to a cap and within a time budget, or
"unknown" — never a guess; and the coverage every read reports."""

from __future__ import annotations

from graph_service import search, store
from graph_service.queries import scope_state
from graph_service.queries import search as queries
from graph_service.views import COUNT_BUDGET_MS, COUNT_CAP
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import options, project_scope, record


async def test_a_total_beyond_the_counting_cap_is_unknown_not_guessed(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"e{i:04d}", kind=tree_pb2.CHANGE, title=f"Tick {i}")
            for i in range(COUNT_CAP + 1)
        ],
    )
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="tick", scope=project_scope(project), options=options(written)
        )
    )
    assert response.page.total.WhichOneof("value") == "unknown"
    assert "more than 1,000 matches" in response.page.total.unknown.reason
    assert response.page.returned_count == 10 and response.page.has_more


async def counted_search(tree_stub, graph_stub, events: int, every: int):
    """A first page (of 5) of 'tock', in a project of `events` events where every `every`th
    title says it."""
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(
                id=f"e{i:04d}", kind=tree_pb2.CHANGE, title=f"Tock {i}" if i % every == 0 else "-"
            )
            for i in range(events)
        ],
    )
    response: graph_pb2.SearchResponse = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="tock", page_size=5, scope=project_scope(project), options=options(written)
        )
    )
    assert response.page.returned_count == 5 and response.page.has_more
    return response.page.total


async def test_a_term_a_walk_found_common_is_counted_only_when_the_count_can_be_known(
    tree_stub, graph_stub, monkeypatch
):
    # 1 in 97 of 900 copies: the walks fill the page having seen 6 matches in 545 copies —
    # ~10 over the scope's 900.
    total = await counted_search(tree_stub, graph_stub, events=900, every=97)
    assert total.exact == 10
    # 1 in 2 of 150 copies: the first walk fills the page (6 in 64) — ~14, counted: 75.
    total = await counted_search(tree_stub, graph_stub, events=150, every=2)
    assert total.exact == 75
    # With a cap of 6, ~14 is more than twice the cap: the count would only say "more than
    # the cap", so it is not taken at all — unknown. ~10 is not, and is counted.
    monkeypatch.setattr(search, "COUNT_CAP", 6)
    counted: list[object] = []

    async def count_matches(*args):
        counted.append(args)
        return await search.count_matches(*args)

    monkeypatch.setattr(store, "count_matches", count_matches)
    total = await counted_search(tree_stub, graph_stub, events=150, every=2)
    assert total.WhichOneof("value") == "unknown" and counted == []
    total = await counted_search(tree_stub, graph_stub, events=900, every=97)
    assert total.WhichOneof("value") == "unknown" and len(counted) == 1


async def test_a_count_past_its_budget_is_unknown_and_the_page_still_returned(
    tree_stub, graph_stub, monkeypatch
):
    monkeypatch.setattr(search, "COUNT_BUDGET_MS", COUNT_BUDGET_MS)  # the service's own
    slow = f"SELECT c.* FROM pg_sleep({COUNT_BUDGET_MS * 20} / 1000.0), ({queries.SEARCH_TOTALS}) c"
    monkeypatch.setattr(queries, "SEARCH_TOTALS", slow)
    # Twice: the cancelled count leaves every pooled connection fit for the next read.
    for _ in range(2):
        total = await counted_search(tree_stub, graph_stub, events=900, every=97)
        assert total.WhichOneof("value") == "unknown"


async def test_coverage_reports_the_gaps_of_every_result_not_only_the_newest(tree_stub, graph_stub):
    """Coverage lists the 20 newest results and says how many more there are; the gaps and the
    excluded source types it reports are those of every result in scope, so an old result's
    gap never silently disappears (a long list of gaps says where it stops)."""
    project = unique("proj")
    await record(
        tree_stub,
        project,
        review_generated_at="2026-09-01T00:00:00Z",
        coverage_gaps=["the September export was never read"]
        + [f"minor gap {i}" for i in range(scope_state.GAPS_LISTED)],
        excluded_source_types=["email"],
        events=[tree_pb2.EventInput(id="ev-old", kind=tree_pb2.DISCUSSION, title="Lambda old")],
    )
    for day in range(10, 31):
        written = await record(
            tree_stub,
            project,
            review_generated_at=f"2026-10-{day:02}T00:00:00Z",
            events=[tree_pb2.EventInput(id=f"ev-{day}", kind=tree_pb2.DISCUSSION, title="Lambda")],
        )
    found = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="lambda", scope=project_scope(project), options=options(written)
        )
    )
    coverage = found.coverage
    assert coverage.results_in_scope.exact == 22
    assert (len(coverage.processed), coverage.results_not_listed) == (20, 2)
    assert list(coverage.excluded_source_types) == ["email"]
    assert any(g.endswith(": the September export was never read") for g in coverage.gaps)
    assert len(coverage.gaps) == scope_state.GAPS_LISTED + 1
    assert coverage.gaps[-1].startswith("older results report more gaps")
