"""StoryGraph.Search over data written through TreeService and read from the replica."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest

from graph_service import search, store
from graph_service.queries import search as queries
from mirrortree.protoscope import global_scope, time_range
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.graph_service.story import options, project_scope, record


async def test_search_finds_text_case_insensitively_with_title_hits_first(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(
                id="e-body",
                kind=tree_pb2.DISCUSSION,
                title="Weekly sync",
                description="We talked about the BUDGET overrun",
            ),
            tree_pb2.EventInput(
                id="e-title",
                kind=tree_pb2.DECISION,
                title="Budget approved",
                description="Finance signed off",
            ),
        ],
        entities=[tree_pb2.EntityInput(id="budget", label="Budget 2027", revision="r3")],
        summaries=[
            tree_pb2.SummaryInput(id="s-text", title="Week 40", text="The budget was approved.")
        ],
    )
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="budget", scope=project_scope(project), options=options(written)
        )
    )
    ids = [hit.ref.id for hit in response.hits]
    # Title/label matches and a summary's text (score 2) first, ties by type rank (event,
    # entity, summary), then the other bodies.
    assert ids == ["e-title", "budget", "s-text", "e-body"]
    assert [hit.score for hit in response.hits] == [2, 2, 2, 1]
    first = response.hits[0]
    assert first.matched_fields == ["title"]
    assert first.kind == "decision"
    assert first.excerpt.is_excerpt
    assert first.time.recorded_at.endswith("Z")
    assert first.time.validity.state == common_pb2.VALIDITY_UNKNOWN
    assert first.object_revision.WhichOneof("value") == "unknown"
    assert response.hits[1].object_revision.known == "r3"
    assert response.page.returned_count == 4
    assert not response.page.has_more and response.page.complete
    assert response.page.total.exact == 4
    assert response.basis.scope.resolution == "explicit"
    assert list(response.basis.scope.resolved.projects.project_ids) == [project]
    assert response.coverage.state == graph_pb2.Coverage.PARTIAL
    assert response.coverage.results_in_scope.exact == 1


async def test_like_wildcards_in_the_query_are_matched_literally(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id="pct", kind=tree_pb2.CHANGE, title="Raised to 50% share"),
            tree_pb2.EventInput(id="plain", kind=tree_pb2.CHANGE, title="Raised to 50 share"),
        ],
    )
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(query="50%", scope=project_scope(project), options=options(written))
    )
    assert [h.ref.id for h in response.hits] == ["pct"]


# Titles beyond ASCII: letters whose case differs in Latin, Greek and Cyrillic, a dotted
# capital I that lowers to a plain "i", and text without case.
CASED_TITLES = {
    "latin": "ÄRGER über die Straße",
    "french": "École Polytechnique",
    "turkish": "İstanbul ofisi",
    "greek": "ΣΟΦΊΑ και λόγος",
    "cyrillic": "МОСКВА и Казань",
    "chinese": "决定采用方案B",
}
CASED_QUERIES = ["ärger", "STRASSE", "straße", "ÉCOLE", "istanbul", "İSTANBUL", "σοφία",
                 "ΛΌΓΟΣ", "москва", "казань", "方案b", "%"]  # fmt: skip


async def test_case_is_ignored_beyond_ascii_exactly_as_postgresql_ilike_ignores_it(
    tree_stub, graph_stub, cluster
):
    """Search matches stored lowered copies of the text with a lowered pattern; the matches
    must be exactly those of ILIKE on the original text, computed here by PostgreSQL itself."""
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"e-{name}", kind=tree_pb2.DISCUSSION, title=title)
            for name, title in CASED_TITLES.items()
        ],
    )
    conn = await asyncpg.connect(cluster.primary_dsn)
    found: dict[str, set[str]] = {}
    try:
        for query in CASED_QUERIES:
            pattern = store.like_pattern(query)
            expected = {
                f"e-{name}"
                for name, title in CASED_TITLES.items()
                if await conn.fetchval("SELECT $1::text ILIKE $2", title, pattern)
            }
            response = await graph_stub.Search(
                graph_pb2.SearchRequest(
                    query=query, scope=project_scope(project), options=options(written)
                )
            )
            found[query] = {h.ref.id for h in response.hits}
            assert found[query] == expected, query
    finally:
        await conn.close()
    # Not a comparison of nothing: case is ignored beyond ASCII.
    assert found["ärger"] == {"e-latin"}
    assert found["ÉCOLE"] == {"e-french"}
    assert found["москва"] == {"e-cyrillic"}
    assert found["σοφία"] == {"e-greek"}
    assert found["方案b"] == {"e-chinese"}
    assert found["%"] == set()


async def test_scope_defaults_to_the_sessions_current_project(tree_stub, graph_stub):
    project = unique("proj")
    session = (await create_tree(tree_stub, project_id=project)).tree
    written = await record(
        tree_stub,
        project,
        events=[tree_pb2.EventInput(id="e1", kind=tree_pb2.MILESTONE, title="Beta shipped")],
    )
    await record(
        tree_stub,
        unique("other"),
        events=[tree_pb2.EventInput(id="e2", kind=tree_pb2.MILESTONE, title="Beta shipped")],
    )
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(query="beta", options=options(written, session.id))
    )
    assert [h.ref.id for h in response.hits] == ["e1"]
    assert response.basis.scope.resolution == "session_current_project"
    assert not response.basis.scope.requested.WhichOneof("kind")


async def test_without_scope_or_project_the_search_asks_for_a_scope(tree_stub, graph_stub):
    created = await create_tree(tree_stub)  # no project
    # Read after the session exists on the replica: before, it would be an unknown session.
    with_session = graph_pb2.ReadOptions(
        session_id=created.tree.id, min_consistency=created.consistency
    )
    for request_options in (with_session, graph_pb2.ReadOptions()):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await graph_stub.Search(graph_pb2.SearchRequest(query="x", options=request_options))
        failure = describe(caught.value)
        assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
        assert failure.reason == "scope_required"


async def test_global_is_read_only_when_asked_and_never_mixed_into_a_project(tree_stub, graph_stub):
    project = unique("proj")
    marker = unique("marker")
    written = await record(
        tree_stub,
        project,
        scope=global_scope(),
        summaries=[tree_pb2.SummaryInput(id=unique("s"), title=f"Global {marker}", text="all")],
    )
    in_project = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query=marker, scope=project_scope(project), options=options(written)
        )
    )
    assert list(in_project.hits) == []
    assert in_project.coverage.state == graph_pb2.Coverage.UNKNOWN
    in_global = await graph_stub.Search(
        graph_pb2.SearchRequest(query=marker, scope=global_scope(), options=options(written))
    )
    assert [h.scope.WhichOneof("kind") for h in in_global.hits] == ["global"]


async def test_paging_visits_every_hit_once_and_keeps_the_first_scope(tree_stub, graph_stub):
    project = unique("proj")
    session = (await create_tree(tree_stub, project_id=project)).tree
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"e{i:02d}", kind=tree_pb2.DISCUSSION, title=f"Topic {i}")
            for i in range(23)
        ],
    )
    seen: list[str] = []
    cursor = ""
    pages = 0
    while True:
        response = await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="topic", page_size=5, cursor=cursor, options=options(written, session.id)
            )
        )
        pages += 1
        seen.extend(h.ref.id for h in response.hits)
        assert response.page.total.exact == 23
        if not response.page.has_more:
            assert response.page.next_cursor == "" and response.page.complete
            break
        assert response.page.limit_reason == "page_size"
        cursor = response.page.next_cursor
    assert pages == 5
    assert seen == sorted(f"e{i:02d}" for i in range(23))


async def test_a_cursor_goes_stale_when_the_scope_gets_a_new_result(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"e{i}", kind=tree_pb2.CHANGE, title="Moved") for i in range(3)
        ],
    )
    first = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="moved", page_size=1, scope=project_scope(project), options=options(written)
        )
    )
    newer = await record(
        tree_stub,
        project,
        events=[tree_pb2.EventInput(id="late", kind=tree_pb2.CHANGE, title="Moved")],
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="moved",
                page_size=1,
                scope=project_scope(project),
                cursor=first.page.next_cursor,
                options=options(newer),
            )
        )
    assert describe(caught.value).reason == "stale_cursor"


async def test_a_tampered_or_foreign_cursor_is_rejected(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"e{i}", kind=tree_pb2.CHANGE, title="Moved") for i in range(3)
        ],
    )
    first = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="moved", page_size=1, scope=project_scope(project), options=options(written)
        )
    )
    body, _, signature = first.page.next_cursor.partition(".")
    tampered = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1] + "." + signature
    for cursor, query in ((tampered, "moved"), (first.page.next_cursor, "other filters")):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await graph_stub.Search(
                graph_pb2.SearchRequest(
                    query=query, page_size=1, scope=project_scope(project), cursor=cursor
                )
            )
        failure = describe(caught.value)
        assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
        assert failure.reason == "invalid_cursor"


async def test_time_filters_use_the_chosen_basis_and_count_unknown_times(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(
                id="in",
                kind=tree_pb2.CHANGE,
                title="Launch moved",
                event_time=common_pb2.EventTime(start="2026-09-30T22:00:00-04:00"),
            ),
            tree_pb2.EventInput(
                id="span",
                kind=tree_pb2.CHANGE,
                title="Launch window",
                event_time=common_pb2.EventTime(
                    start="2026-09-01T00:00:00Z", end="2026-12-01T00:00:00Z"
                ),
            ),
            tree_pb2.EventInput(
                id="out",
                kind=tree_pb2.CHANGE,
                title="Launch idea",
                event_time=common_pb2.EventTime(start="2025-01-01T00:00:00Z"),
            ),
            tree_pb2.EventInput(id="unknown", kind=tree_pb2.CHANGE, title="Launch rumour"),
        ],
    )
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="launch",
            scope=project_scope(project),
            options=options(written),
            time_range=time_range("2026-10-01T00:00:00Z", "2026-10-31T23:59:59Z"),
        )
    )
    # 22:00 at -04:00 is 02:00Z on Oct 1: inside. The span intersects. Unknown never matches.
    assert sorted(h.ref.id for h in response.hits) == ["in", "span"]
    assert response.coverage.unknown_time_excluded.exact == 1
    assert response.basis.time_basis == common_pb2.EVENT_TIME
    assert getattr(response.basis.time_range, "from") == "2026-10-01T00:00:00Z"
    by_review = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="launch",
            scope=project_scope(project),
            options=options(written),
            time_basis=common_pb2.REVIEW_GENERATED_AT,
            time_range=time_range("2026-10-02T00:00:00Z"),
        )
    )
    assert by_review.page.returned_count == 4
    assert by_review.coverage.unknown_time_excluded.exact == 0


async def test_paging_crosses_relevance_tiers_in_order(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id="b-body", kind=tree_pb2.CHANGE, title="x", description="kiwi"),
            tree_pb2.EventInput(id="a-body", kind=tree_pb2.CHANGE, title="y", description="kiwi"),
            tree_pb2.EventInput(id="c-title", kind=tree_pb2.CHANGE, title="Kiwi"),
            tree_pb2.EventInput(
                id="z-both", kind=tree_pb2.CHANGE, title="KIWI", description="more kiwi"
            ),
        ],
        summaries=[tree_pb2.SummaryInput(id="a-title", title="kiwi summary", text="n/a")],
    )
    order: list[tuple[str, int]] = []
    cursor = ""
    while True:
        response = await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="kiwi",
                page_size=2,
                cursor=cursor,
                scope=project_scope(project),
                options=options(written),
            )
        )
        order.extend((h.ref.id, h.score) for h in response.hits)
        if not response.page.has_more:
            break
        cursor = response.page.next_cursor
    # Both fields, then title only (event before summary by type rank), then body only by id.
    assert order == [("z-both", 3), ("c-title", 2), ("a-title", 2), ("a-body", 1), ("b-body", 1)]


def entries(count: int = 400) -> list[tree_pb2.EventInput]:
    """Events whose title and description both say "entry": enough copies that the walks give
    a rare text up to the index scans, while "entry" itself fills a page by walking."""
    return [
        tree_pb2.EventInput(
            id=f"e{i:03d}", kind=tree_pb2.CHANGE, title=f"Entry {i}", description="An entry"
        )
        for i in range(count)
    ]


def slow_index_scans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make Search's index scans (SEARCH_SCANS) sleep half a second first; walks stay fast."""
    slow = {
        score: f"SELECT s.* FROM pg_sleep(0.5), ({scan}) s"
        for score, scan in queries.SEARCH_SCANS.items()
    }
    monkeypatch.setattr(queries, "SEARCH_SCANS", slow)


async def test_index_scans_past_their_budget_fail_clearly_and_leave_the_pool_usable(
    tree_stub, graph_stub, monkeypatch
):
    """A text the walks find rare is looked up through the indexes; when those scans run past
    the search's budget (here: made to sleep past a small one), the search fails naming the
    problem and what to do, returns nothing, and the next search on the pool works."""
    project = unique("proj")
    written = await record(tree_stub, project, events=entries())
    monkeypatch.setattr(search, "SCAN_BUDGET_S", 0.05)
    slow_index_scans(monkeypatch)

    def request(query: str) -> graph_pb2.SearchRequest:
        return graph_pb2.SearchRequest(
            query=query, scope=project_scope(project), options=options(written)
        )

    for query in ("zq", "zq-nowhere"):  # with and without the short-text explanation
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await graph_stub.Search(request(query))
        failure = describe(caught.value)
        assert failure.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert failure.reason == "search_budget_exceeded"
        assert failure.metadata["budget_ms"] == "50"
        message = caught.value.details()
        assert f"searching {query!r} in project {project!r}" in message
        assert "nothing was returned" in message
        assert ("fewer than three characters" in message) == (len(query) < 3)
    # A common text fills its page by walking: no scan, and the pool is fit for it.
    dense = await graph_stub.Search(request("entry"))
    assert dense.page.returned_count == 10 and dense.page.has_more


async def test_a_search_the_caller_gives_up_on_leaves_every_connection_usable(
    tree_stub, graph_stub, graph_service, monkeypatch
):
    """A caller's deadline cancels the read mid-statement: the transaction is rolled back and
    the connection goes back to the pool fit for the next reads."""
    project = unique("proj")
    written = await record(tree_stub, project, events=entries())
    slow_index_scans(monkeypatch)

    def request(query: str) -> graph_pb2.SearchRequest:
        return graph_pb2.SearchRequest(
            query=query, scope=project_scope(project), options=options(written)
        )

    for _ in range(3):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await graph_stub.Search(request("zq"), timeout=0.1)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    answers = await asyncio.gather(*(graph_stub.Search(request("entry")) for _ in range(8)))
    assert all(a.page.returned_count == 10 for a in answers)
    (replica,) = graph_service.router.replicas
    assert replica.pool is not None
    # Every connection is back in the pool once the cancelled reads have been rolled back.
    for _ in range(100):
        if replica.pool.get_idle_size() == replica.pool.get_size():
            break
        await asyncio.sleep(0.02)
    assert replica.pool.get_idle_size() == replica.pool.get_size()


async def test_a_cursor_does_not_replace_authentication(tree_stub, graph_stub):
    project = unique("proj")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"e{i}", kind=tree_pb2.CHANGE, title="Auth") for i in range(3)
        ],
    )
    first = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="auth", page_size=1, scope=project_scope(project), options=options(written)
        )
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="auth",
                page_size=1,
                scope=project_scope(project),
                cursor=first.page.next_cursor,
            ),
            metadata=[("authorization", "Bearer mtb_forged")],
        )
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_hit_linked_to_thousands_of_objects_still_fits_a_page(tree_stub, graph_stub):
    """A story line of thousands of events: its hit (and its context item) carries the first
    20 related refs and says how many more there are, so a page with it stays within the
    response limit; GetContext pages every one of them."""
    project = unique("proj")
    event_ids = [f"event-with-a-long-stable-identifier-{i:05}" for i in range(4_500)]
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=event_id, kind=tree_pb2.DISCUSSION, title="Step")
            for event_id in event_ids
        ],
        story_lines=[tree_pb2.StoryLineInput(id="line", title="Kappa line", event_ids=event_ids)],
        entities=[tree_pb2.EntityInput(id="ent-kappa", label="Kappa entity")],
    )
    found = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="kappa", scope=project_scope(project), options=options(written)
        )
    )
    hits = {hit.ref.id: hit for hit in found.hits}
    assert set(hits) == {"line", "ent-kappa"}
    assert [r.id for r in hits["line"].related] == event_ids[:20]
    assert hits["line"].related_omitted == len(event_ids) - 20
    assert hits["ent-kappa"].related_omitted == 0
    context = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=common_pb2.STORY_LINE, id="line"),
            scope=project_scope(project),
            options=options(written),
        )
    )
    (events,) = [c for c in context.collections if c.name == "events"]
    assert events.page.total.exact == len(event_ids)


async def test_an_events_precision_widens_it_to_its_period(tree_stub, graph_stub):
    """An event dated "January 2026" (start 2026-01-01, precision month) may lie anywhere in
    January: a range inside mid-January meets it, in Search and GetContext alike, and a range
    from February on does not."""
    project = unique("proj")

    def event(
        event_id: str, start: str, precision: common_pb2.TimePrecision
    ) -> tree_pb2.EventInput:
        return tree_pb2.EventInput(
            id=event_id,
            kind=tree_pb2.MILESTONE,
            title=f"Omicron {event_id}",
            entity_ids=["ent-omicron"],
            event_time=common_pb2.EventTime(start=start, precision=precision),
        )

    written = await record(
        tree_stub,
        project,
        entities=[tree_pb2.EntityInput(id="ent-omicron", label="Omicron entity")],
        events=[
            event("in-january", "2026-01-01T00:00:00Z", common_pb2.MONTH),
            event("on-the-15th", "2026-01-15T00:00:00Z", common_pb2.DAY),
            event("at-noon", "2026-01-15T12:00:00Z", common_pb2.INSTANT),
        ],
    )

    async def matching(range_: common_pb2.TimeRange) -> tuple[set[str], set[str]]:
        found = await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="omicron",
                scope=project_scope(project),
                object_types=[common_pb2.EVENT],
                time_range=range_,
                options=options(written),
            )
        )
        context = await graph_stub.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=common_pb2.ObjectRef(type=common_pb2.ENTITY, id="ent-omicron"),
                scope=project_scope(project),
                time_range=range_,
                options=options(written),
            )
        )
        (events,) = [c for c in context.collections if c.name == "events"]
        return {h.ref.id for h in found.hits}, {i.ref.id for i in events.items}

    morning = time_range("2026-01-15T10:00:00Z", "2026-01-15T11:00:00Z")
    assert await matching(morning) == ({"in-january", "on-the-15th"},) * 2
    february = time_range("2026-02-01T00:00:00Z")
    assert await matching(february) == (set(), set())
    last_instant = time_range("2026-01-31T23:59:59Z", "2026-01-31T23:59:59Z")
    assert await matching(last_instant) == ({"in-january"},) * 2
