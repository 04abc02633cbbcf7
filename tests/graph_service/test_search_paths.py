"""Search reads a tier by walking the ordered index, through the trigram indexes, or through a
small time range (graph_service.search picks by what its walks see). Every way must give the
same pages and counts: here each is forced in turn and every search is paged to its end and
compared with a reference computed from what was recorded."""

from __future__ import annotations

import calendar
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from graph_service import search
from graph_service.convert import TIME_BASES
from graph_service.queries import search as queries
from graph_service.replicas import ReplicaRouter
from mirrortree.protoscope import time_range
from mirrortree.timefmt import format_utc, parse_aware
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from mirrortree.vocabulary import OBJECT_TYPE_RANKS
from tests.conftest import unique
from tests.graph_service.story import options, project_scope, record
from tests.tree_service.test_scope_days import COUNTED

TERMS = {"amber": 2, "cobalt": 6, "zircon": 30}  # a term is in 1 of N titles, bodies
GENERATED = ["2026-10-02T01:00:00Z", "2026-10-09T01:00:00Z", "2026-10-16T01:00:00Z"]
DAY0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime.now(UTC)  # copies are recorded during the test, within a day of it
PRECISIONS = {"hour": common_pb2.HOUR, "day": common_pb2.DAY, "month": common_pb2.MONTH,
              "year": common_pb2.YEAR}  # fmt: skip


@dataclass(frozen=True)
class Copy:
    object_type: str
    object_id: str
    result_id: str
    title: str
    body: str
    start: datetime | None
    end: datetime | None
    generated: datetime
    precision: str | None = None  # "day", "month", ...: the event's time is widened by one

    def until(self) -> datetime:
        """The latest instant a dated event may lie at (as event_time_until, in UTC)."""
        at = self.end or self.start
        assert at is not None, "an unknown time has no end"
        if self.precision in (None, "instant"):
            return at
        if self.precision in ("month", "year"):
            months = at.year * 12 + at.month - 1 + (1 if self.precision == "month" else 12)
            year, month = divmod(months, 12)
            day = min(at.day, calendar.monthrange(year, month + 1)[1])
            widened = at.replace(year=year, month=month + 1, day=day)
        else:
            widened = at + {"minute": timedelta(minutes=1), "hour": timedelta(hours=1),
                            "day": timedelta(days=1)}[self.precision]  # fmt: skip
        return widened - timedelta(microseconds=1)

    def tier(self, term: str) -> int:
        in_title, in_body = term in self.title.lower(), term in self.body.lower()
        if in_title and in_body:
            return 3
        if in_title or (self.object_type == "summary" and in_body):
            return 2
        return 1 if in_body else 0

    def key(self, term: str) -> tuple[Any, ...]:
        rank = OBJECT_TYPE_RANKS[self.object_type]
        return (-self.tier(term), rank, self.object_id, self.result_id)


def text(rng: random.Random, word: str) -> str:
    words = [word, rng.choice(["plan", "note", "step"])]
    words += [term.upper() if rng.random() < 0.3 else term for term, every in TERMS.items()
              if rng.randrange(every) == 0]  # fmt: skip
    rng.shuffle(words)
    return " ".join(words)


async def record_graph(tree_stub, project: str) -> tuple[list[Copy], Any]:
    """Three results, each with 50 events (a fifth without an event time, some with an end,
    some with a precision, a few longer than 64 days), a few entities (the same ids in every
    result) and summaries."""
    rng = random.Random(20261203)
    widths = random.Random(17)  # precisions and long ends, apart from the rest of the draws
    copies: list[Copy] = []
    written = None
    for n, generated in enumerate(GENERATED):
        result_id = unique("res")
        events, entities, summaries = [], [], []
        for i in range(50):
            title, body = text(rng, "event"), text(rng, "detail")
            start = end = precision = None
            time = common_pb2.EventTime()
            if rng.randrange(5):
                start = DAY0 + timedelta(days=rng.randrange(300), hours=rng.randrange(24))
                time.start = format_utc(start)
                if rng.randrange(3) == 0:
                    end = start + timedelta(days=rng.randrange(1, 40))
                    if widths.randrange(4) == 0:
                        end += timedelta(days=widths.randrange(30, 200))
                    time.end = format_utc(end)
                precision = widths.choice([None, None, None, *PRECISIONS])
                if precision:
                    time.precision = PRECISIONS[precision]
            event_id = f"ev-{n}-{i:02d}"
            event = tree_pb2.EventInput(
                id=event_id, kind=tree_pb2.CHANGE, title=title, description=body
            )
            if start:
                event.event_time.CopyFrom(time)
            events.append(event)
            copies.append(
                Copy(
                    "event", event_id, result_id, title, body, start, end,
                    parse_aware(generated), precision if start else None,
                )
            )  # fmt: skip
        for i in range(6):
            label, body = text(rng, "entity"), text(rng, "about")
            entities.append(tree_pb2.EntityInput(id=f"ent-{i}", label=label, description=body))
            copies.append(
                Copy(
                    "entity", f"ent-{i}", result_id, label, body, None, None, parse_aware(generated)
                )
            )
        for i in range(4):
            title, body = text(rng, "summary"), text(rng, "summed")
            summaries.append(tree_pb2.SummaryInput(id=f"sum-{n}-{i}", title=title, text=body))
            copies.append(
                Copy(
                    "summary",
                    f"sum-{n}-{i}",
                    result_id,
                    title,
                    body,
                    None,
                    None,
                    parse_aware(generated),
                )
            )
        written = await record(
            tree_stub, project, result_id=result_id, review_generated_at=generated,
            events=events, entities=entities, summaries=summaries,
        )  # fmt: skip
    return copies, written


# (name, basis, from, to): narrow and wide event-time ranges, open ends, a result time.
RANGES = [
    ("no range", common_pb2.EVENT_TIME, None, None),
    ("ten days", common_pb2.EVENT_TIME, "2026-03-01T00:00:00Z", "2026-03-10T23:59:59Z"),
    ("most of the year", common_pb2.EVENT_TIME, "2026-02-01T00:00:00Z", "2026-10-01T00:00:00Z"),
    ("from June", common_pb2.EVENT_TIME, "2026-06-01T00:00:00Z", None),
    ("the second review", common_pb2.REVIEW_GENERATED_AT, "2026-10-05T00:00:00Z",
     "2026-10-10T00:00:00Z"),
    ("every review", common_pb2.REVIEW_GENERATED_AT, "2026-07-01T00:00:00Z",
     "2026-12-31T00:00:00Z"),
    ("recorded long ago", common_pb2.RECORDED_AT, None, "2001-01-01T00:00:00Z"),
    ("recorded since 2001", common_pb2.RECORDED_AT, "2001-01-01T00:00:00Z", None),
    ("recorded these days", common_pb2.RECORDED_AT, format_utc(NOW - timedelta(days=1)),
     format_utc(NOW + timedelta(days=1))),
    ("recorded this year", common_pb2.RECORDED_AT, format_utc(NOW - timedelta(days=200)),
     format_utc(NOW + timedelta(days=1))),
]  # fmt: skip

# (term, object types asked for: none = all)
SEARCHES = [*((term, ()) for term in (*TERMS, "nowhere")),
            ("amber", ("event", "summary")), ("cobalt", ("entity", "summary"))]  # fmt: skip

# How each way is forced: fields of graph_service.search.Thresholds.
WAYS = {
    "walks only": {"longest_walk": 10**6, "first_range_walk": 10**6,
                   "longest_range_walk": 10**6, "max_walks": 10**3, "range_scan_copies": -1,
                   "range_text_scan_matches": -1},
    # Short walks that stop at the range's bound too: the walks end each other's keysets.
    "short walks": {"first_walk": 2, "no_match_walk": 3, "longest_walk": 50,
                    "first_range_walk": 5, "longest_range_walk": 7, "max_walks": 10**3,
                    "range_scan_copies": -1, "range_text_scan_matches": -1},
    "trigram indexes": {"first_walk": 2, "no_match_walk": 3, "longest_walk": 4,
                        "first_range_walk": 8, "longest_range_walk": 8, "range_scan_copies": -1,
                        "range_text_scan_matches": -1},
    "time range from the start": {"range_scan_copies": 10**9},
    "time range once walks see it small": {"first_walk": 2, "no_match_walk": 3,
                                           "longest_walk": 4, "first_range_walk": 8,
                                           "longest_range_walk": 8, "range_scan_copies": 60,
                                           "range_text_scan_matches": -1},
    "range's matches from the start": {"range_scan_copies": -1,
                                       "range_text_scan_matches": 10**9,
                                       "scope_text_scan_try": -1},
    "range's matches once walks see them few": {"first_walk": 2, "no_match_walk": 3,
                                                "longest_walk": 4, "first_range_walk": 8,
                                                "longest_range_walk": 8,
                                                "range_scan_copies": -1,
                                                "range_text_scan_matches": 40,
                                                "scope_text_scan_try": -1},
    # Within an event-time range, the scope's matches instead of the range's — and when there
    # are more than scope_text_scan_matches of them, the range's after all.
    "scope's matches from the start": {"range_scan_copies": -1,
                                       "range_text_scan_matches": 10**9,
                                       "scope_text_scan_try": 10**9},
    "scope's matches once walks see them few": {"first_walk": 2, "no_match_walk": 3,
                                                "longest_walk": 4, "first_range_walk": 8,
                                                "longest_range_walk": 8,
                                                "range_scan_copies": -1,
                                                "range_text_scan_matches": 40,
                                                "scope_text_scan_try": 10**9},
    "scope's matches, too many": {"range_scan_copies": -1, "range_text_scan_matches": 10**9,
                                  "scope_text_scan_try": 10**9, "scope_text_scan_matches": 4},
    # Each tier read in one walk to its end; the count then taken through the range.
    "whole walks": {"first_walk": 10**4, "longest_walk": 10**6, "first_range_walk": 10**6,
                    "longest_range_walk": 10**6, "range_scan_copies": 179,
                    "range_text_scan_matches": -1},
    "as configured": {},
}  # fmt: skip


def admitted(c: Copy, basis: int, start: str | None, end: str | None) -> bool:
    """Whether the time range from `start` to `end` on `basis` holds copy `c`."""
    low = parse_aware(start) if start else None
    high = parse_aware(end) if end else None
    if low is None and high is None:
        return True
    if basis == common_pb2.EVENT_TIME:
        if c.start is None:
            return False
        return (high is None or c.start <= high) and (low is None or c.until() >= low)
    if basis == common_pb2.REVIEW_GENERATED_AT:
        at = c.generated
        return (low is None or at >= low) and (high is None or at <= high)
    now = datetime.now(UTC)  # every copy was recorded during this test
    return (low is None or now >= low) and (high is None or now <= high)


def expected(
    copies: list[Copy],
    term: str,
    types: tuple[str, ...],
    *,
    basis: int,
    start: str | None,
    end: str | None,
):
    """(hits in order as (type, id, result), matches, matches without an event time)."""
    matching = [c for c in copies if c.tier(term) and (not types or c.object_type in types)]
    hits = sorted(
        (c for c in matching if admitted(c, basis, start, end)), key=lambda c: c.key(term)
    )
    unknown = sum(1 for c in matching if c.start is None)
    return [(c.object_type, c.object_id, c.result_id) for c in hits], len(hits), unknown


class Recording(dict[Any, str]):
    """A statement table that notes which ways a search used (the table's name, and with the
    key it was read by: "RANGE_TEXT_SCANS[event_time]")."""

    def __init__(self, name: str, table: dict[Any, str], used: set[str]) -> None:
        super().__init__(table)
        self.name, self.used = name, used

    def __getitem__(self, key: Any) -> str:
        self.used.update((self.name, f"{self.name}[{key}]"))
        return super().__getitem__(key)


def noting_plans(monkeypatch) -> dict[str, tuple[int, int]]:
    """(generic, custom) plans PostgreSQL made for each statement the reads prepared, as
    pg_prepared_statements counts them on each connection after a read (the most seen)."""
    plans: dict[str, tuple[int, int]] = {}
    run = ReplicaRouter.run

    async def run_noting_plans(self, read, *args, **kwargs):
        async def noted(conn):
            result = await read(conn)
            for row in await conn.fetch(
                "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            ):
                seen = plans.get(row["statement"], (0, 0))
                plans[row["statement"]] = (
                    max(seen[0], row["generic_plans"]),
                    max(seen[1], row["custom_plans"]),
                )
            return result

        return await run(self, noted, *args, **kwargs)

    monkeypatch.setattr(ReplicaRouter, "run", run_noting_plans)
    return plans


async def test_every_way_to_read_a_tier_pages_and_counts_the_same(
    tree_stub, graph_stub, monkeypatch
):
    project = unique("proj")
    copies, written = await record_graph(tree_stub, project)
    # The counts are what is checked here, not their time budget.
    monkeypatch.setattr(search, "COUNT_BUDGET_MS", 5_000)
    # The walks follow the ordered index whatever the term: planned once, generically. Every
    # other read and count goes through an index the term or the range decides on, so it is
    # planned with its values: a generic plan guesses a scope's size from the number of
    # scopes, and at a million objects in a few scopes such guesses read every copy in scope.
    walks = {*queries.SEARCH_WALKS.values(), *queries.SEARCH_WALKS_IN_TIME_RANGE.values()}
    with_values = {
        *(
            statement
            for table in (
                queries.SEARCH_SCANS, queries.RANGE_SCANS, queries.RANGE_TEXT_SCANS,
                queries.RANGE_DAY_TEXT_SCANS, queries.SCOPE_TEXT_SCANS, queries.RANGE_TOTALS,
            )
            for statement in table.values()
        ),
        queries.SEARCH_TOTALS,
        queries.UNKNOWN_TIME_MATCHES,
    }  # fmt: skip
    plans = noting_plans(monkeypatch)
    used: set[str] = set()
    tables = (
        "SEARCH_WALKS", "SEARCH_WALKS_IN_TIME_RANGE", "SEARCH_SCANS", "RANGE_SCANS",
        "RANGE_TEXT_SCANS", "RANGE_DAY_TEXT_SCANS", "SCOPE_TEXT_SCANS",
    )  # fmt: skip
    for name in (*tables, "RANGE_TOTALS"):
        monkeypatch.setattr(queries, name, Recording(name, getattr(queries, name), used))
    ways_used: dict[str, set[str]] = {}
    for way, thresholds in WAYS.items():
        monkeypatch.setattr(search, "THRESHOLDS", search.Thresholds(**thresholds))
        used.clear()
        for term, types in SEARCHES:
            for range_name, basis, start, end in RANGES:
                want, total, unknown = expected(
                    copies, term, types, basis=basis, start=start, end=end
                )
                got: list[tuple[str, str, str]] = []
                cursor, first = "", None
                while True:
                    response = await graph_stub.Search(
                        graph_pb2.SearchRequest(
                            query=term, page_size=7, cursor=cursor, scope=project_scope(project),
                            object_types=[t.upper() for t in types],
                            options=options(written), time_basis=basis,
                            time_range=time_range(start or "", end or "")
                            if start or end else None,
                        )
                    )  # fmt: skip
                    first = first or response
                    got.extend(
                        (common_pb2.ObjectType.Name(h.ref.type).lower(), h.ref.id, h.result_id)
                        for h in response.hits
                    )
                    if not response.page.has_more or len(got) > len(want):
                        break
                    cursor = response.page.next_cursor
                case = f"{way}: {term!r} {types}, {range_name}"
                assert got == want, case
                assert first.page.total.exact == total, case
                if basis == common_pb2.EVENT_TIME and (start or end):
                    assert first.coverage.unknown_time_excluded.exact == unknown, case
        ways_used[way] = set(used)
    # Each way was taken where it was forced.
    assert "SEARCH_SCANS" not in ways_used["walks only"]
    assert "RANGE_SCANS" not in ways_used["walks only"] | ways_used["trigram indexes"]
    assert "RANGE_SCANS" not in ways_used["short walks"]
    assert "SEARCH_SCANS" in ways_used["trigram indexes"]
    assert {"RANGE_SCANS", "SEARCH_WALKS"} <= ways_used["time range from the start"]
    assert "SEARCH_WALKS_IN_TIME_RANGE" not in ways_used["time range from the start"]
    assert {"RANGE_SCANS", "SEARCH_WALKS_IN_TIME_RANGE"} <= ways_used[
        "time range once walks see it small"
    ]
    assert "RANGE_TOTALS" in ways_used["whole walks"]
    assert "RANGE_TEXT_SCANS" in ways_used["range's matches from the start"]
    assert {"RANGE_TEXT_SCANS", "SEARCH_WALKS_IN_TIME_RANGE"} <= ways_used[
        "range's matches once walks see them few"
    ]
    text_scans = {way for way, used in ways_used.items() if "RANGE_TEXT_SCANS" in used}
    assert text_scans == {
        "range's matches from the start",
        "range's matches once walks see them few",
        *(scope_ways := {
            "scope's matches from the start",
            "scope's matches once walks see them few",
            "scope's matches, too many",
        }),
    }  # fmt: skip
    # Within an event-time range the scope's matches were read instead (and the range's only
    # when they were too many); the other bases have no such way.
    event_text_scans = {
        way for way, used in ways_used.items() if "RANGE_TEXT_SCANS[event_time]" in used
    }
    assert event_text_scans == text_scans - scope_ways | {"scope's matches, too many"}
    # On every basis, the ways that read a range's matches read a short closed range's by
    # their days (ten days, the second review, these days), the others' as before.
    for key in ("event_time", "review_generated_at", "recorded_at"):
        by_days, by_range = (
            {way for way, used in ways_used.items() if f"{name}[{key}]" in used}
            for name in ("RANGE_DAY_TEXT_SCANS", "RANGE_TEXT_SCANS")
        )
        assert by_days == by_range != set(), key
    scope_scans = {way for way, used in ways_used.items() if "SCOPE_TEXT_SCANS" in used}
    assert scope_scans == scope_ways
    for statement in walks & plans.keys():
        assert plans[statement][1] == 0, statement
    for statement in with_values & plans.keys():
        assert plans[statement][0] == 0, statement
    assert {queries.SEARCH_TOTALS, queries.UNKNOWN_TIME_MATCHES} <= plans.keys()
    assert len(walks & plans.keys()) > 1 and len(with_values & plans.keys()) > 10
    assert "SEARCH_WALKS_IN_TIME_RANGE" in ways_used["scope's matches once walks see them few"]


# A closed range longer than a year: left to the walks, as an open one is.
TWO_YEARS = ("two years", common_pb2.EVENT_TIME, "2025-01-01T00:00:00Z", "2026-12-31T23:59:59Z")


async def test_the_search_opening_counts_a_closed_range_at_least_as_it_holds(cluster, tree_stub):
    project = unique("proj")
    copies, _ = await record_graph(tree_stub, project)
    scope_key = f"projects:{project}"
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        # Kept per day as each result was inserted (migration 0037): what every copy gives.
        kept = await conn.fetch(
            "SELECT * FROM scope_days WHERE scope_key = $1 ORDER BY basis, day", scope_key
        )
        counted = [tuple(r) for r in await conn.fetch(COUNTED) if r["scope_key"] == scope_key]
        assert [tuple(r) for r in kept] == counted != []
        for name, basis, start, end in (*RANGES, TWO_YEARS):
            low, high = (parse_aware(at) if at else None for at in (start, end))
            row = await conn.fetchrow(
                queries.SEARCH_OPENING, scope_key, 20, "%x%", low, high, TIME_BASES[basis], [], 0
            )
            if low is None or high is None or name == TWO_YEARS[0]:
                assert row["range_copies"] is None, name
                continue
            held = sum(admitted(c, basis, start, end) for c in copies)
            assert held <= row["range_copies"] <= row["copies"], name
    finally:
        await conn.close()


async def test_a_closed_range_counted_small_is_read_at_once(tree_stub, graph_stub, monkeypatch):
    project = unique("proj")
    copies, written = await record_graph(tree_stub, project)
    used: set[str] = set()
    for name in ("SEARCH_WALKS_IN_TIME_RANGE", "RANGE_SCANS"):
        monkeypatch.setattr(queries, name, Recording(name, getattr(queries, name), used))
    _, basis, start, end = RANGES[1]

    async def search_in_range() -> graph_pb2.SearchResponse:
        used.clear()
        response: graph_pb2.SearchResponse = await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="event", page_size=7, scope=project_scope(project),
                options=options(written), time_basis=basis,
                time_range=time_range(start or "", end or ""),
            )
        )  # fmt: skip
        return response

    # Ten days of event time hold a few dozen copies of the scope's 180: counted small at the
    # opening, they are read at once, where the walks would first have had to see the range
    # small (the scope's copies are above the threshold).
    monkeypatch.setattr(
        search,
        "THRESHOLDS",
        search.Thresholds(range_scan_copies=100, range_text_scan_matches=-1),
    )
    first = await search_in_range()
    assert used == {"RANGE_SCANS", "RANGE_SCANS[event_time]"}
    want, total, _ = expected(copies, "event", (), basis=basis, start=start, end=end)
    got = [(common_pb2.ObjectType.Name(h.ref.type).lower(), h.ref.id, h.result_id)
           for h in first.hits]  # fmt: skip
    assert got == want[:7] and first.page.total.exact == total > 7
    # Counted above the threshold, the range is walked first.
    monkeypatch.setattr(
        search, "THRESHOLDS", search.Thresholds(range_scan_copies=1, range_text_scan_matches=-1)
    )
    await search_in_range()
    assert "SEARCH_WALKS_IN_TIME_RANGE" in used
