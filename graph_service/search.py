"""story_graph_search's reads: the hits of one page, tier by tier, and the counts.

A tier is read by walking the index in result order (queries.SEARCH_WALKS, or
SEARCH_WALKS_IN_TIME_RANGE with a time range) as long as what the walk finds says that is
cheaper, and through the trigram indexes (SEARCH_SCANS) once it says the tier's matches are
rare. Within a time range the walks may see that the range holds few copies: then the range's
copies are read (RANGE_SCANS); or that, of the copies it holds, few match: then the range's
matches are read (RANGE_TEXT_SCANS; by the days of their time when the range is short and
closed: RANGE_DAY_TEXT_SCANS) — or within an event-time range, when the term looks rare in
the whole scope, the scope's matches, if they are few (SCOPE_TEXT_SCANS). Each reads the
rest of the page, every tier, and counts the range's matches in one statement. The choice
is made from the walk, never from the planner's estimate of how common a term is: that
estimate comes from a statistics sample and flips between plans that differ a hundredfold.

The counts of a first page are taken after its hits, in the same read transaction, unless
what the read saw says they would be "unknown" anyway: a walk filled the page at a density of
matches (at least) — or a read of the time range found a share of its copies matching — that,
over the scope's copies, comes to well over COUNT_CAP. Counting such a term reads copy after
copy for longer than COUNT_BUDGET_MS (measured at 1M objects: 80 ms for a term in 1 of 20
copies) only to report "unknown", on the CPU the next read needs. The density only decides
whether to count; a count is never estimated. (A read of the time range or its matches counts
the matches as it goes: that total is always given; a read of the scope's matches also counts
those without an event time.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncpg

from graph_service import queries
from graph_service.errors import SearchBudgetExceeded
from graph_service.views import COUNT_BUDGET_MS, COUNT_CAP
from mirrortree.vocabulary import OBJECT_TYPE_RANKS

# A tier's first walk reads FIRST_WALK copies (in the time range, when one is given): a page
# for a term in every other copy. With no match among them, one more walk of NO_MATCH_WALK;
# with none among those either, matches are rarer than about 1 in 100. With some matches, the
# next walk is sized from their density (with a margin). A walk that would read more than
# LONGEST_WALK copies costs more than letting the trigram indexes find the rest (measured at
# 1M objects: a walk reads about 250 copies per millisecond without a time range; the indexes
# answer a term in 1 of 100 copies in about 12 ms).
FIRST_WALK = 64
NO_MATCH_WALK = 256
LONGEST_WALK = 2_048
WALK_MARGIN = 1.5
MAX_WALKS = 3
# Within a time range a walk also stops after reading this many index entries, in range or
# not (queries.SEARCH_WALKS_IN_TIME_RANGE; at 1M objects an entry costs about 1 µs, a copy in
# range 12 µs more): FIRST_RANGE_WALK for a tier's first walk — enough to see whether the range
# is small — LONGEST_RANGE_WALK for the others.
FIRST_RANGE_WALK = 1_024
LONGEST_RANGE_WALK = 4_096
# When the walks saw that the time range holds at most this many of the scope's copies, the
# rest of the page — this tier's and every later tier's — and its count are read through the
# range (queries.RANGE_SCANS) — unless a walk is about to fill the page. A few thousand
# copies cost less than a trigram index scan of a term that may be in every copy, and less
# than walking three tiers for a term that is rare in the range (measured at 1M objects: the
# 1,918 copies of one day of event time, 7-9 ms for the page and its count, where the trigram
# scan of "status" took 95 ms for the page alone; the 4,980 copies of one review result,
# 15-20 ms, where the walks and scans of a rare term took 44 ms).
RANGE_SCAN_COPIES = 8_192
# Within a larger time range, when the walks' share of matches (in any tier) among the copies
# in range, over the copies they saw the range to hold, comes to at most this many matches,
# the rest of the page — every tier — and its count are read through the range's matches
# (queries.RANGE_TEXT_SCANS) — unless a walk is about to fill the page. Walking such a range
# costs more than its matches: a copy in one week of event time (13,415 copies at 1M objects)
# costs about 85 µs to walk to, one of its matches about 3 µs to read once the trigram
# indexes and the range's own have found it (their bitmaps: 1-16 ms for a term in 1 of 1,000
# to 1 of 20 copies). Measured at 1M objects, one week of event time: a rare term 52 -> 16 ms,
# a term in 1 of 20 copies 53 -> 25 ms; one week of review time (four results, 19,920
# copies): 57 -> 13 ms and 94 -> 31 ms — where the walks, a trigram scan per tier and a count
# (which ran out of time) came before.
RANGE_TEXT_SCAN_MATCHES = 2_048
# Before reading an event-time range's matches, the scope's are read instead — at most
# SCOPE_TEXT_SCAN_MATCHES of them (queries.SCOPE_TEXT_SCANS) — when the walks' share of
# matches in range, over the scope's copies, comes to at most that many, and their share
# counted high (Walked.scope_matches: none met in 64 copies counts as 1 in 65) to at most
# SCOPE_TEXT_SCAN_TRY. It is a guess: right, it replaces the range's index scan and the count
# of matches without an event time (at 1M objects, a term in 1 of 1,000 copies within one
# month: 9 + 3 ms -> 3.8 ms); wrong, it costs the term's trigram bitmaps and 2,049 matches
# read (5 ms, and the bitmaps about 3 ms for a term in 1 of 100 copies) before the range's
# matches are read. (Measured before the range's matches could be read by their days; read
# so, that month's cost 1.4 ms, and with the count about as much as this read.)
SCOPE_TEXT_SCAN_TRY = 16_384
SCOPE_TEXT_SCAN_MATCHES = 2_048
# A time range closed at both ends that touches at most this many days (UTC) has its matches
# read by their days (queries.RANGE_DAY_TEXT_SCANS): the trigram indexes yield only the
# term's entries filed under one of the range's days. Each day is one more entry for the
# indexes to merge, so a long range costs more this way than through the range's own index.
# Measured at 1M objects, this way against the other, event time: a term in 1 of 20 copies
# within one week 2.9 against 14 ms, one month 12 against 26, two months 24 against 37, six
# months 113 against 81; a term in 1 of 1,000 copies, 1.4 against 6.6 ms within one month
# and 5.9 against 34 within six months. Review time, a term in 1 of 20 copies: one week 3.7
# against 18 ms, two days 1.3 against 15.
RANGE_DAY_SCAN_DAYS = 64
DAY_S = 86_400  # a day's number: floor(seconds since the epoch / DAY_S), as in migration 0017
# A term is not counted when the density a walk saw, over the scope's copies, comes to more
# than this many times COUNT_CAP matches.
UNCOUNTABLE_MARGIN = 2
# The index scans of one search page together stop after this long (asyncpg cancels the
# statement, raising TimeoutError). A scan through the trigram index takes milliseconds (at
# 1M objects: 3 ms for a rare term, ~100 ms for a deep body-only page of a medium one), but a
# text the index cannot use — one or two characters — reads every copy in scope, tier after
# tier: 4-5 s at 1M objects for a short text that matches nothing.
SCAN_BUDGET_S = 2.0

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
    # (RANGE_SCAN_COPIES). False without a time range.
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


def range_text_scan(filters: tuple[Any, ...]) -> str:
    """The statement that reads the time range's matches: by their days when the range is
    closed and touches at most RANGE_DAY_SCAN_DAYS days."""
    start, end, basis = filters[3:6]
    if basis in queries.RANGE_DAY_TEXT_SCANS and start is not None and end is not None:
        days = math.floor(end.timestamp() / DAY_S) - math.floor(start.timestamp() / DAY_S) + 1
        if days <= RANGE_DAY_SCAN_DAYS:
            return queries.RANGE_DAY_TEXT_SCANS[basis]
    return queries.RANGE_TEXT_SCANS[basis]


async def read_hits(
    conn: asyncpg.Connection,
    filters: tuple[Any, ...],
    types: list[str],
    position: list[Any] | None,
    limit: int,
    *,
    scope_copies: int,
) -> HitsRead:
    """Up to `limit` (score, row) pairs after `position`, walking the tiers 3 → 2 → 1.

    `filters` are the parameters $1..$6 of the search statements (scope, types, pattern, time
    range and basis); `scope_copies` the copies stored in the scope. Raises TimeoutError when
    the index scans run past SCAN_BUDGET_S."""
    ranks = [OBJECT_TYPE_RANKS[t] for t in types]
    scans_until = time.monotonic() + SCAN_BUDGET_S
    rank_range = (min(ranks), max(ranks))
    in_time_range = time_range_is_given(filters)
    walked = Walked()

    def through_range() -> bool:
        return in_time_range and walked.range_copies(scope_copies) <= RANGE_SCAN_COPIES

    def through_matches() -> bool:
        return in_time_range and walked.range_matches(scope_copies) <= RANGE_TEXT_SCAN_MATCHES

    def range_is_readable() -> bool:
        return through_range() or through_matches()

    def through_scope_matches() -> bool:
        seen = walked.matches / max(walked.in_range, 1) * scope_copies
        return (
            filters[5] in queries.SCOPE_TEXT_SCANS
            and seen <= SCOPE_TEXT_SCAN_MATCHES
            and walked.scope_matches(scope_copies) <= SCOPE_TEXT_SCAN_TRY
        )

    found: list[Hit] = []
    density: float | None = None
    start_score = position[0] if position else 3
    for score in (3, 2, 1):
        if score > start_score:
            continue
        after = list(position[1:]) if position and score == start_score else [None, None, None]
        need = limit - len(found)
        # Once the walks have seen the time range to be small, or the term rare in it, reading
        # the range or its matches costs less than walking on.
        if not range_is_readable():
            tier = await _walk_tier(
                conn, score, filters=filters, ranks=rank_range, after=after, need=need,
                walked=walked, range_is_readable=range_is_readable,
            )  # fmt: skip
            found.extend((score, row) for row in tier.rows)
            density = tier.density
            if tier.stopped_at is None:
                if len(found) >= limit:
                    break
                continue
            after, need = tier.stopped_at, limit - len(found)
        timeout = max(scans_until - time.monotonic(), 0.001)
        if range_is_readable():
            # This tier's rest and every later tier's, at once: the range's copies when they
            # are few, or else the scope's matches when the term looks rare there and they are
            # few indeed, or else the range's matches (planned with its values:
            # range_text_scan).
            whole, in_scope = through_range(), False
            if not whole and through_scope_matches():
                rows = await conn.fetch(
                    queries.SCOPE_TEXT_SCANS[filters[5]], *filters, *after, need, score,
                    SCOPE_TEXT_SCAN_MATCHES + 1, timeout=timeout,
                )  # fmt: skip
                in_scope = rows[0]["scope_matches"] <= SCOPE_TEXT_SCAN_MATCHES
            if not in_scope:
                read = queries.RANGE_SCANS[filters[5]] if whole else range_text_scan(filters)
                rows = await _fetch(
                    conn, read, *filters, *after, need, score,
                    budget_s=timeout, with_values=not whole,
                )  # fmt: skip
            found.extend((row["score"], row) for row in rows if row["result_id"] is not None)
            matches = rows[0]["range_matches"]
            copies = rows[0]["range_copies"] if whole else walked.range_copies(scope_copies)
            unknown_time = rows[0]["unknown_time"] if in_scope else None
            return HitsRead(found, matches / max(copies, 1), whole, matches, unknown_time)
        # Rare in this tier: let the trigram indexes find the rest (within a time range, with
        # a plan for its values: queries.SEARCH_SCANS).
        rows = await _fetch(
            conn, queries.SEARCH_SCANS[score], *filters, *after, need,
            budget_s=timeout, with_values=in_time_range,
        )  # fmt: skip
        found.extend((score, row) for row in rows)
        density = None
        if len(found) >= limit:
            break
    return HitsRead(found, density, through_range())


async def _fetch(
    conn: asyncpg.Connection, query: str, *args: Any, budget_s: float, with_values: bool
) -> list[asyncpg.Record]:
    """`query`'s rows, cancelled after `budget_s`; planned with its values
    (queries.PLAN_WITH_VALUES) when asked, in a search's transaction of generic plans, which it
    leaves as it found it."""
    if with_values:
        await conn.execute(queries.PLAN_WITH_VALUES)
    rows: list[asyncpg.Record] = await conn.fetch(query, *args, timeout=budget_s)
    if with_values:
        await conn.execute(queries.PLAN_GENERICALLY)
    return rows


async def _walk_tier(
    conn: asyncpg.Connection,
    score: int,
    *,
    filters: tuple[Any, ...],
    ranks: tuple[int, int],
    after: list[Any],
    need: int,
    walked: Walked,
    range_is_readable: Callable[[], bool],
) -> _TierWalked:
    """The tier's next `need` matches as far as walking finds them cheaply — and until the
    walks have seen the time range, or its matches, to be few enough to read at once
    (`range_is_readable`); adds what its walks read to `walked`."""
    found: list[asyncpg.Record] = []
    tier_entries = tier_copies = 0
    in_time_range = time_range_is_given(filters)
    walks = queries.SEARCH_WALKS_IN_TIME_RANGE if in_time_range else queries.SEARCH_WALKS
    copies, entries = FIRST_WALK, FIRST_RANGE_WALK
    for _ in range(MAX_WALKS):
        bound = (copies, *ranks, entries) if in_time_range else (copies, *ranks)
        rows = await conn.fetch(walks[score], *filters, *after, need - len(found), *bound)
        if not rows:
            return _TierWalked(found, None, None)  # the tier is done
        found.extend(r for r in rows if r["result_id"] is not None)
        end = rows[0]
        tier_entries += end["walked"]
        tier_copies += end["in_range"]
        walked.entries += end["walked"]
        walked.in_range += end["in_range"]
        if in_time_range:
            walked.matches += end["matches_in_range"]
        if end["in_range"] < copies and (not in_time_range or end["walked"] < entries):
            return _TierWalked(found, None, None)  # the tier's end
        if len(found) >= need:
            return _TierWalked(found, len(found) / tier_entries, None)
        after = [end["end_rank"], end["end_id"], end["end_result"]]
        entries = LONGEST_RANGE_WALK
        if found:
            copies = int((need - len(found)) * tier_copies / len(found) * WALK_MARGIN) + 1
            # A walk that should fill the page costs less than reading even a small range.
            within_reach = copies / walked.share_in_range() <= entries
            if copies <= LONGEST_WALK and (within_reach or not range_is_readable()):
                continue
        else:
            copies = NO_MATCH_WALK if tier_copies < NO_MATCH_WALK else LONGEST_WALK + 1
        if range_is_readable() or copies > LONGEST_WALK:
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


def worth_counting(read: HitsRead, scope_copies: int) -> bool:
    """Whether to count a first page's matches (see the module docstring)."""
    return read.density is None or read.density * scope_copies <= UNCOUNTABLE_MARGIN * COUNT_CAP


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
    were read (through the range or not). The matches without an event time are in no time
    range, so a range read cannot count them: unless the read of the scope's matches counted
    them, they are counted apart, when the density the read saw is low enough for their number
    to be known.

    Runs last in the page's read transaction, so it counts exactly what the page was read
    from. The budget is asyncpg's: past it the statement is cancelled and the transaction,
    which has read everything it needs by then, ends — so the unknown-time count, which can
    take longer (its times are in no index), comes last. (A statement_timeout set for a count
    would stay set for the COMMIT, and on a loaded machine fail it.)
    """
    total = read.range_matches
    if read.unknown_time is not None:
        return _capped(total), _capped(read.unknown_time) if excludes_unknown else None
    worth = worth_counting(read, scope_copies)
    if total is None and worth:
        totals = (
            queries.RANGE_TOTALS[search_args[5]] if read.through_range else queries.SEARCH_TOTALS
        )
        try:
            total = await conn.fetchval(
                totals, *search_args, COUNT_CAP + 1, timeout=COUNT_BUDGET_MS / 1000
            )
        except TimeoutError:
            return None, None
    if not excludes_unknown or not worth:
        return _capped(total), None
    try:
        unknown_time = await conn.fetchval(
            queries.UNKNOWN_TIME_MATCHES,
            *search_args[:3],
            COUNT_CAP + 1,
            timeout=COUNT_BUDGET_MS / 1000,
        )
    except TimeoutError:
        unknown_time = None
    return _capped(total), _capped(unknown_time)


def _capped(value: int | None) -> int | None:
    return value if value is not None and value <= COUNT_CAP else None
