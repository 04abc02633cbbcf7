"""story_graph_search's reads: the hits of one page, tier by tier, and the counts.

A tier is read by walking the index in result order (Walk, or RangeWalk within a time range)
as long as what the walk finds says that is cheaper, and through the trigram indexes
(TrigramScan) once it says the tier's matches are rare. Within a time range the walks may see
that the range holds few copies: then the range's copies are read (RangeRead); or that, of the
copies it holds, few match: then the range's matches are read (RangeMatchRead; by the days of
their time when the range is short and closed: RangeDayMatchRead) — or within an event-time
range, when the term looks rare in the whole scope, the scope's matches, if they are few
(ScopeMatchRead). Each range read reads the rest of the page, every tier, and counts the
range's matches in one statement. The choice is
made from the walk, never from the planner's estimate of how common a term is: that estimate
comes from a statistics sample and flips between plans that differ a hundredfold. Where each
way wins is in Thresholds, with the measurements behind it in docs/performance-history.md.

The counts of a first page are taken after its hits, in the same read transaction, unless
what the read saw says they would be "unknown" anyway: a walk filled the page at a density of
matches (at least) — or a read of the time range found a share of its copies matching — that,
over the scope's copies, comes to well over COUNT_CAP. Counting such a term reads copy after
copy for longer than COUNT_BUDGET_MS only to report "unknown", on the CPU the next read needs.
The density only decides whether to count; a count is never estimated. (A read of the time
range or its matches counts the matches as it goes: that total is always given; a read of the
scope's matches also counts those without an event time.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncpg

from graph_service.errors import SearchBudgetExceeded
from graph_service.queries import replica
from graph_service.queries import search as sql
from graph_service.views import COUNT_BUDGET_MS, COUNT_CAP
from mirrortree.vocabulary import OBJECT_TYPE_RANKS


@dataclass(frozen=True)
class Thresholds:
    """Where each way of reading a search page wins (each class below names the fields it
    uses; docs/performance-history.md has the measurements that set them)."""

    # A tier's first walk: a page for a term in every other copy.
    first_walk: int = 64
    # The walk after one that met no match; none in it either means rarer than 1 in 100.
    no_match_walk: int = 256
    # Past this many copies a walk costs more than the trigram indexes.
    longest_walk: int = 2_048
    # A walk sized from the density seen so far reads this much more, to fill the page.
    walk_margin: float = 1.5
    max_walks: int = 3
    # Entries a walk within a time range reads at most: its first, enough to see whether the
    # range is small, and the others.
    first_range_walk: int = 1_024
    longest_range_walk: int = 4_096
    # RangeRead wins when the range holds at most this many copies, as the opening counted
    # them or the walks saw them.
    range_scan_copies: int = 8_192
    # RangeMatchRead wins when the range holds at most this many matches, as the walks saw it.
    range_text_scan_matches: int = 2_048
    # ScopeMatchRead is tried first when the scope holds at most scope_text_scan_matches
    # matches at the share the walks met in range, and at most scope_text_scan_try at that
    # share counted high; it reads at most scope_text_scan_matches of them.
    scope_text_scan_try: int = 16_384
    scope_text_scan_matches: int = 2_048
    # RangeDayMatchRead wins within a closed range touching at most this many days (UTC).
    range_day_scan_days: int = 64
    # A term whose density, over the scope's copies, comes to more than this many times
    # COUNT_CAP is not counted: the count would run out of its budget only to say unknown.
    uncountable_margin: int = 2


THRESHOLDS = Thresholds()
# The index scans of one search page together stop after this long (asyncpg cancels the
# statement, raising TimeoutError): a text the trigram index cannot use — one or two
# characters — reads every copy in scope, tier after tier.
SCAN_BUDGET_S = 2.0
DAY_S = 86_400  # a day's number: floor(seconds since the epoch / DAY_S), as in migration 0017

Hit = tuple[int, asyncpg.Record]  # (relevance tier, row)


@dataclass
class Walked:
    """What the walks of one search read: index entries, and how many were in the time range
    (all of them without one)."""

    entries: int = 0
    in_range: int = 0
    # Of the copies in range, how many matched in any tier (counted by walks within a range).
    matches: int = 0

    def share_in_range(self) -> float:
        """The share of entries in range, a little high: (in range + 1) / (entries + 1)."""
        return (self.in_range + 1) / (self.entries + 1)

    def range_copies(self, scope_copies: int) -> float:
        """How many of the scope's copies the range holds, as the walks saw it (a little high)."""
        return self.share_in_range() * scope_copies

    def match_share(self) -> float:
        """The share of copies in range that match in any tier, high: (matches + 1) / (in range
        + 1) — none met in n counts as 1 in n + 1."""
        return (self.matches + 1) / (self.in_range + 1)

    def range_matches(self, scope_copies: int) -> float:
        """How many copies in the range match in any tier, as the walks saw it (high)."""
        return self.match_share() * self.range_copies(scope_copies)

    def scope_matches(self, scope_copies: int) -> float:
        """How many of the scope's copies match, if the term is as common in the scope as the
        walks saw it in the range (high)."""
        return self.match_share() * scope_copies


@dataclass(frozen=True)
class HitsRead:
    hits: list[Hit]
    # When a walk filled the page before the end of its tier: at least this share of the
    # entries walked in that tier matched (a walk stops matching at a full page; module
    # docstring). When the time range or its matches were read: the share of its copies
    # (counted, or as the walks saw them) that matched. None otherwise.
    density: float | None
    # Whether the walks saw the time range to hold few enough copies to be read through it
    # (RangeRead.wins). False without a time range.
    through_range: bool
    # Every match in the time range, counted when the range or its matches were read (None
    # otherwise).
    range_matches: int | None = None
    # The matches without an event time, counted when the scope's matches were read (None
    # otherwise).
    unknown_time: int | None = None


@dataclass(frozen=True)
class _TierWalked:
    rows: list[asyncpg.Record]
    density: float | None  # as HitsRead.density
    # Where the walks stopped when the tier's rest is left to the indexes; None when the walks
    # read the tier to its end or filled the page.
    stopped_at: list[Any] | None


def time_range_is_given(filters: tuple[Any, ...]) -> bool:
    return filters[3] is not None or filters[4] is not None


# ---- the ways to read a tier -----------------------------------------------------------------


class Walk:
    """A tier walked along the ordered index from the keyset, text matched as it goes
    (SEARCH_WALKS). Wins while matches are dense: a common term fills a page within a few
    hundred copies, whatever the size of the graph. Uses first_walk, no_match_walk,
    longest_walk, walk_margin, max_walks."""

    @staticmethod
    def statement(score: int) -> str:
        return sql.SEARCH_WALKS[score]

    def bound(self, copies: int, ranks: tuple[int, int], entries: int) -> tuple[int, ...]:
        """The statement's own parameters: copies to walk, the type ranks asked for."""
        return (copies, *ranks)

    def tier_ended(self, end: asyncpg.Record, copies: int, entries: int) -> bool:
        """Whether the walk met fewer copies than it could: the tier has no more."""
        return bool(end["in_range"] < copies)

    def count(self, end: asyncpg.Record, walked: Walked) -> None:
        walked.entries += end["walked"]
        walked.in_range += end["in_range"]


class RangeWalk(Walk):
    """A tier walked along the ordered index within a time range (SEARCH_WALKS_IN_TIME_RANGE),
    bounded by the copies in range it meets and by the entries it reads, so that a narrow range
    cannot cost a walk the whole index; it counts the matches in range, from which the range
    reads below are chosen. Wins where Walk wins, and is how a search learns the range's size.
    Uses Walk's thresholds and first_range_walk, longest_range_walk."""

    @staticmethod
    def statement(score: int) -> str:
        return sql.SEARCH_WALKS_IN_TIME_RANGE[score]

    def bound(self, copies: int, ranks: tuple[int, int], entries: int) -> tuple[int, ...]:
        return (copies, *ranks, entries)

    def tier_ended(self, end: asyncpg.Record, copies: int, entries: int) -> bool:
        return bool(end["in_range"] < copies and end["walked"] < entries)

    def count(self, end: asyncpg.Record, walked: Walked) -> None:
        super().count(end, walked)
        walked.matches += end["matches_in_range"]


class TrigramScan:
    """A tier's rest found through the trigram (and event-time) indexes (SEARCH_SCANS). Wins
    once the walks find the tier's matches rarer than about 1 in 100 (the next walk would read
    more than longest_walk copies). Planned with its values (_fetch_with_values): within a time
    range PostgreSQL can then AND the event-time index's bitmap with the trigram indexes'."""

    @staticmethod
    async def read(
        conn: asyncpg.Connection,
        score: int,
        filters: tuple[Any, ...],
        after: list[Any],
        need: int,
        *,
        budget_s: float,
    ) -> list[asyncpg.Record]:
        return await _fetch_with_values(
            conn, sql.SEARCH_SCANS[score], *filters, *after, need, budget_s=budget_s
        )


class RangeRead:
    """Every copy of a small time range, matched once, with the page of every remaining tier
    and the range's count in one statement (RANGE_SCANS). Wins when the range holds at most
    range_scan_copies copies: a few thousand copies cost less than a trigram scan of a term
    that may be in every copy (PostgreSQL would AND its bitmap with the range's), and less than
    walking three tiers for a term rare in the range. For a closed range of at most a year the
    opening counts them before any walk (`range_copies`: the scope's copies by day, a little
    high), so that a small range is read at once; otherwise, or when that count is higher,
    the walks may still see the range small."""

    @staticmethod
    def wins(walked: Walked, scope_copies: int, t: Thresholds, range_copies: int | None) -> bool:
        counted_small = range_copies is not None and range_copies <= t.range_scan_copies
        return counted_small or walked.range_copies(scope_copies) <= t.range_scan_copies

    @staticmethod
    def statement(filters: tuple[Any, ...], t: Thresholds) -> str:
        return sql.RANGE_SCANS[filters[5]]


class RangeMatchRead:
    """A larger time range's matches, through the trigram indexes ANDed with the range's own
    index, with the page of every tier and their count in one statement (RANGE_TEXT_SCANS,
    planned with its values). Wins when the walks' share of matches in range, over the copies
    they saw the range to hold, comes to at most range_text_scan_matches: walking such a range
    costs more than its matches, and one statement replaces a scan per tier and the count."""

    @staticmethod
    def wins(walked: Walked, scope_copies: int, t: Thresholds) -> bool:
        return walked.range_matches(scope_copies) <= t.range_text_scan_matches

    @staticmethod
    def statement(filters: tuple[Any, ...], t: Thresholds) -> str:
        if RangeDayMatchRead.applies(filters, t):
            return RangeDayMatchRead.statement(filters)
        return sql.RANGE_TEXT_SCANS[filters[5]]


class RangeDayMatchRead:
    """The range's matches found by the days of their time (RANGE_DAY_TEXT_SCANS): the
    trigram indexes yield only the term's entries filed under the range's days. Wins over
    RangeMatchRead's own statement within a range closed at both ends that touches at most
    range_day_scan_days days (UTC): each day is one more entry for the indexes to merge, so a
    longer range costs more this way than through the range's own index."""

    @staticmethod
    def applies(filters: tuple[Any, ...], t: Thresholds) -> bool:
        start, end, basis = filters[3:6]
        if basis not in sql.RANGE_DAY_TEXT_SCANS or start is None or end is None:
            return False
        days = math.floor(end.timestamp() / DAY_S) - math.floor(start.timestamp() / DAY_S) + 1
        return bool(days <= t.range_day_scan_days)

    @staticmethod
    def statement(filters: tuple[Any, ...]) -> str:
        return sql.RANGE_DAY_TEXT_SCANS[filters[5]]


class ScopeMatchRead:
    """A term's matches in the whole scope, through the trigram indexes alone, each placed in
    the event-time range or not, with the page of every tier and the counts in one statement
    (SCOPE_TEXT_SCANS). Tried before RangeMatchRead within an event-time range
    when the term the walks see rare in the range would be rare in the whole scope too: at the
    share they met in range, at most scope_text_scan_matches matches, and at that share counted
    high (Walked.scope_matches: none met in 64 copies counts as 1 in 65) at most
    scope_text_scan_try. It reads at most scope_text_scan_matches of them: then it also counts
    the matches without an event time, which no range holds, and so replaces both the range's
    index scan and UnknownTimeCount. When there are more, it returns only the counts, and the
    range's matches are read after all (RangeMatchRead)."""

    @staticmethod
    def tried(walked: Walked, scope_copies: int, filters: tuple[Any, ...], t: Thresholds) -> bool:
        seen = walked.matches / max(walked.in_range, 1) * scope_copies
        return (
            filters[5] in sql.SCOPE_TEXT_SCANS
            and seen <= t.scope_text_scan_matches
            and walked.scope_matches(scope_copies) <= t.scope_text_scan_try
        )

    @staticmethod
    async def read(
        conn: asyncpg.Connection,
        filters: tuple[Any, ...],
        after: list[Any],
        need: int,
        score: int,
        *,
        t: Thresholds,
        budget_s: float,
    ) -> list[asyncpg.Record] | None:
        """The statement's rows, or None when the scope holds more matches than it reads."""
        rows = await _fetch_with_values(
            conn, sql.SCOPE_TEXT_SCANS[filters[5]], *filters, *after, need, score,
            t.scope_text_scan_matches + 1, budget_s=budget_s,
        )  # fmt: skip
        return rows if rows[0]["scope_matches"] <= t.scope_text_scan_matches else None


async def read_hits(
    conn: asyncpg.Connection,
    filters: tuple[Any, ...],
    types: list[str],
    position: list[Any] | None,
    limit: int,
    *,
    scope_copies: int,
    range_copies: int | None,
) -> HitsRead:
    """Up to `limit` (score, row) pairs after `position`, walking the tiers 3 → 2 → 1.

    `filters` are the parameters $1..$6 of the search statements (scope, types, pattern, time
    range and basis); `scope_copies` the copies stored in the scope; `range_copies` at least
    those of the time range, when the opening counted them (RangeRead). Raises TimeoutError
    when the index scans run past SCAN_BUDGET_S."""
    t = THRESHOLDS
    ranks = [OBJECT_TYPE_RANKS[name] for name in types]
    scans_until = time.monotonic() + SCAN_BUDGET_S
    rank_range = (min(ranks), max(ranks))
    in_time_range = time_range_is_given(filters)
    walk = RangeWalk() if in_time_range else Walk()
    walked = Walked()

    def range_read() -> type[RangeRead] | type[RangeMatchRead] | None:
        """The way to read the rest of the page from the time range, once the walks have seen
        it to be small, or the term rare in it; None while walking on costs less."""
        if not in_time_range:
            return None
        if RangeRead.wins(walked, scope_copies, t, range_copies):
            return RangeRead
        if RangeMatchRead.wins(walked, scope_copies, t):
            return RangeMatchRead
        return None

    def range_is_readable() -> bool:
        return range_read() is not None

    found: list[Hit] = []
    density: float | None = None
    start_score = position[0] if position else 3
    for score in (3, 2, 1):
        if score > start_score:
            continue
        after = list(position[1:]) if position and score == start_score else [None, None, None]
        need = limit - len(found)
        if not range_is_readable():
            tier = await _walk_tier(
                conn, walk, score, filters=filters, ranks=rank_range, after=after, need=need,
                walked=walked, range_is_readable=range_is_readable, t=t,
            )  # fmt: skip
            found.extend((score, row) for row in tier.rows)
            density = tier.density
            if tier.stopped_at is None:
                if len(found) >= limit:
                    break
                continue
            after, need = tier.stopped_at, limit - len(found)
        timeout = max(scans_until - time.monotonic(), 0.001)
        way = range_read()
        if way is not None:
            # This tier's rest and every later tier's, at once.
            in_scope = None
            if way is RangeMatchRead and ScopeMatchRead.tried(walked, scope_copies, filters, t):
                in_scope = await ScopeMatchRead.read(
                    conn, filters, after, need, score, t=t, budget_s=timeout
                )
            rows = in_scope if in_scope is not None else await _fetch_with_values(
                conn, way.statement(filters, t), *filters, *after, need, score, budget_s=timeout
            )  # fmt: skip
            found.extend((row["score"], row) for row in rows if row["result_id"] is not None)
            matches = rows[0]["range_matches"]
            whole = way is RangeRead
            copies = rows[0]["range_copies"] if whole else walked.range_copies(scope_copies)
            unknown_time = rows[0]["unknown_time"] if in_scope is not None else None
            return HitsRead(found, matches / max(copies, 1), whole, matches, unknown_time)
        rows = await TrigramScan.read(conn, score, filters, after, need, budget_s=timeout)
        found.extend((score, row) for row in rows)
        density = None
        if len(found) >= limit:
            break
    through_range = in_time_range and RangeRead.wins(walked, scope_copies, t, range_copies)
    return HitsRead(found, density, through_range)


async def _fetch_with_values(
    conn: asyncpg.Connection, query: str, *args: Any, budget_s: float
) -> list[asyncpg.Record]:
    """`query`'s rows, cancelled after `budget_s`, planned with its values
    (replica.PLAN_WITH_VALUES) in a search's transaction of generic plans, which it leaves as
    it found it. Every read but the walks is planned so: the walks follow the ordered index
    whatever the term, but a generic plan guesses a scope's share of the copies from the
    number of scopes, so for the reads through the trigram, event-time and range indexes it
    changed with that number — at a million objects in five scopes, to plans reading every
    copy in scope."""
    await conn.execute(replica.PLAN_WITH_VALUES)
    rows: list[asyncpg.Record] = await conn.fetch(query, *args, timeout=budget_s)
    await conn.execute(replica.PLAN_GENERICALLY)
    return rows


async def _walk_tier(
    conn: asyncpg.Connection,
    walk: Walk,
    score: int,
    *,
    filters: tuple[Any, ...],
    ranks: tuple[int, int],
    after: list[Any],
    need: int,
    walked: Walked,
    range_is_readable: Callable[[], bool],
    t: Thresholds,
) -> _TierWalked:
    """The tier's next `need` matches as far as walking finds them cheaply — and until the
    walks have seen the time range, or its matches, to be few enough to read at once
    (`range_is_readable`); adds what its walks read to `walked`."""
    found: list[asyncpg.Record] = []
    tier_entries = tier_copies = 0
    statement = walk.statement(score)
    copies, entries = t.first_walk, t.first_range_walk
    for _ in range(t.max_walks):
        bound = walk.bound(copies, ranks, entries)
        rows = await conn.fetch(statement, *filters, *after, need - len(found), *bound)
        if not rows:
            return _TierWalked(found, None, None)  # the tier is done
        found.extend(r for r in rows if r["result_id"] is not None)
        end = rows[0]
        tier_entries += end["walked"]
        tier_copies += end["in_range"]
        walk.count(end, walked)
        if walk.tier_ended(end, copies, entries):
            return _TierWalked(found, None, None)  # the tier's end
        if len(found) >= need:
            return _TierWalked(found, len(found) / tier_entries, None)
        after = [end["end_rank"], end["end_id"], end["end_result"]]
        entries = t.longest_range_walk
        if found:
            copies = int((need - len(found)) * tier_copies / len(found) * t.walk_margin) + 1
            # A walk that should fill the page costs less than reading even a small range.
            within_reach = copies / walked.share_in_range() <= entries
            if copies <= t.longest_walk and (within_reach or not range_is_readable()):
                continue
        else:
            copies = t.no_match_walk if tier_copies < t.no_match_walk else t.longest_walk + 1
        if range_is_readable() or copies > t.longest_walk:
            break
    return _TierWalked(found, None, after)  # rare in this tier


def budget_exceeded(query: str, scope: str) -> SearchBudgetExceeded:
    """The error of a search whose index scans ran past SCAN_BUDGET_S (`scope` described)."""
    short = (
        " (a text of fewer than three characters cannot use the text index, so every copy in "
        "scope is read)"
        if len(query) < 3
        else ""
    )
    return SearchBudgetExceeded(
        f"searching {query!r} in {scope} did not finish a page within {SCAN_BUDGET_S:g} s"
        f"{short}; nothing was returned — search a longer or more specific text, or narrow the "
        "time range, object types or scope",
        {"budget_ms": str(int(SCAN_BUDGET_S * 1000))},
    )


# ---- the ways to count -----------------------------------------------------------------------


class TrigramCount:
    """A search's matches in every tier through the trigram indexes, up to a cap
    (SEARCH_TOTALS): the count of a page that was not read through the time range."""

    @staticmethod
    def statement(search_args: tuple[Any, ...]) -> str:
        return sql.SEARCH_TOTALS


class RangeCount:
    """A small time range's matches, read through the range as RangeRead reads it, up to a
    cap (RANGE_TOTALS): the count of a page whose walks saw the range small (RangeRead.wins)
    but filled the page before reading it."""

    @staticmethod
    def statement(search_args: tuple[Any, ...]) -> str:
        return sql.RANGE_TOTALS[search_args[5]]


class UnknownTimeCount:
    """The matches an event-time range leaves out because their event time is unknown, up to
    a cap (UNKNOWN_TIME_MATCHES): no range holds them, so unless ScopeMatchRead counted them
    they are counted apart, last (their times are in no index, so this count can take
    longest)."""

    @staticmethod
    def statement() -> str:
        return sql.UNKNOWN_TIME_MATCHES


def worth_counting(read: HitsRead, scope_copies: int) -> bool:
    """Whether to count a first page's matches (see the module docstring)."""
    margin = THRESHOLDS.uncountable_margin
    return read.density is None or read.density * scope_copies <= margin * COUNT_CAP


def needs_counting(read: HitsRead, scope_copies: int) -> bool:
    """Whether a first page has counts to take (count_matches): one already taken, or one worth
    taking."""
    return read.range_matches is not None or worth_counting(read, scope_copies)


async def count_matches(
    conn: asyncpg.Connection,
    search_args: tuple[Any, ...],
    excludes_unknown: bool,
    read: HitsRead,
    scope_copies: int,
) -> tuple[int | None, int | None]:
    """(total, unknown-time) of a search, each up to COUNT_CAP and None beyond it, when not
    worth counting (worth_counting) or when counting it takes more than COUNT_BUDGET_MS. The
    total is the one `read` took when it read the time range, or else counted the way the hits
    were read (RangeCount or TrigramCount). The matches without an event time are in no time
    range, so a range read cannot count them: unless the read of the scope's matches counted
    them (ScopeMatchRead), they are counted apart (UnknownTimeCount), when the density the read
    saw is low enough for their number to be known.

    Runs last in the page's read transaction, so it counts exactly what the page was read
    from. The budget is asyncpg's: past it the statement is cancelled and the transaction,
    which has read everything it needs by then, ends — so the unknown-time count, which can
    take longer, comes last. (A statement_timeout set for a count would stay set for the
    COMMIT, and on a loaded machine fail it.)
    """
    total = read.range_matches
    if read.unknown_time is not None:
        return _capped(total), _capped(read.unknown_time) if excludes_unknown else None
    if not worth_counting(read, scope_copies) or (total is not None and not excludes_unknown):
        return _capped(total), None
    # The counts are planned with their values, as every read but the walks
    # (_fetch_with_values); they come last in the read's transaction, so nothing after them
    # needs the generic plans back.
    await conn.execute(replica.PLAN_WITH_VALUES)
    if total is None:
        way = RangeCount if read.through_range else TrigramCount
        try:
            total = await _count(conn, way.statement(search_args), *search_args)
        except TimeoutError:
            return None, None
    if not excludes_unknown:
        return _capped(total), None
    try:
        unknown_time = await _count(conn, UnknownTimeCount.statement(), *search_args[:3])
    except TimeoutError:
        unknown_time = None
    return _capped(total), _capped(unknown_time)


async def _count(conn: asyncpg.Connection, statement: str, *args: Any) -> int:
    """One of a page's counts, capped and cancelled past COUNT_BUDGET_MS."""
    budget_s = COUNT_BUDGET_MS / 1000
    count: int = await conn.fetchval(statement, *args, COUNT_CAP + 1, timeout=budget_s)
    return count


def _capped(value: int | None) -> int | None:
    return value if value is not None and value <= COUNT_CAP else None
