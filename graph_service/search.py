"""story_graph_search's reads: the hits of one page, tier by tier, and the counts.

A tier is read by walking the index in result order (queries.SEARCH_WALKS, or
SEARCH_WALKS_IN_TIME_RANGE with a time range) as long as what the walk finds says that is
cheaper, and through the trigram and time indexes (SEARCH_SCANS) once it says the tier's
matches are rare. The choice is made from the walk, never from the planner's estimate of how
common a term is: that estimate comes from a statistics sample and flips between plans that
differ a hundredfold.

The counts of a first page are taken after its hits, in the same read transaction, unless
what the read saw says they would be "unknown" anyway: a walk filled the page at a density of
matches (at least) that, over the scope's copies, comes to well over COUNT_CAP. Counting such
a term reads copy after copy for longer than COUNT_BUDGET_MS (measured at 1M objects: 80 ms
for a term in 1 of 20 copies) only to report "unknown", on the CPU the next read needs. The
density only decides whether to count; a count is never estimated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import asyncpg

from graph_service import queries
from graph_service.errors import SearchBudgetExceeded
from graph_service.views import COUNT_BUDGET_MS, COUNT_CAP
from mirrortree.vocabulary import OBJECT_TYPE_RANKS

# A tier's first walk reads FIRST_WALK copies (that pass the type and time filters): a page
# for a term in every other copy. With no match among them, one more walk of NO_MATCH_WALK;
# with none among those either, matches are rarer than about 1 in 100. With some matches, the
# next walk is sized from their density (with a margin). A walk that would be longer than
# LONGEST_WALK costs more than letting the trigram and time indexes find the rest (measured
# at 1M objects: a walk reads about 100 copies per millisecond within a time range, 250
# without; the indexes answer a term in 1 of 100 copies in about 12 ms).
FIRST_WALK = 64
NO_MATCH_WALK = 256
LONGEST_WALK = 2_048
WALK_MARGIN = 1.5
MAX_WALKS = 3
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


@dataclass(frozen=True)
class HitsRead:
    hits: list[Hit]
    # When a walk filled the page before the end of its tier: at least this share of the
    # copies walked in that tier matched (a walk stops matching at a full page; module
    # docstring). None otherwise.
    density: float | None


async def read_hits(
    conn: asyncpg.Connection,
    filters: tuple[Any, ...],
    types: list[str],
    position: list[Any] | None,
    limit: int,
) -> HitsRead:
    """Up to `limit` (score, row) pairs after `position`, walking the tiers 3 → 2 → 1.

    `filters` are the parameters $1..$6 of the search statements (scope, types, pattern, time
    range and basis). Raises TimeoutError when the index scans run past SCAN_BUDGET_S."""
    ranks = [OBJECT_TYPE_RANKS[t] for t in types]
    scans_until = time.monotonic() + SCAN_BUDGET_S
    rank_range = (min(ranks), max(ranks))
    found: list[Hit] = []
    density: float | None = None
    start_score = position[0] if position else 3
    for score in (3, 2, 1):
        if score > start_score:
            continue
        after = list(position[1:]) if position and score == start_score else [None, None, None]
        rows, density = await _read_tier(
            conn,
            score,
            filters=filters,
            ranks=rank_range,
            after=after,
            need=limit - len(found),
            scans_until=scans_until,
        )
        found.extend((score, row) for row in rows)
        if len(found) >= limit:
            break
    return HitsRead(found, density)


async def _read_tier(
    conn: asyncpg.Connection,
    score: int,
    *,
    filters: tuple[Any, ...],
    ranks: tuple[int, int],
    after: list[Any],
    need: int,
    scans_until: float,
) -> tuple[list[asyncpg.Record], float | None]:
    """The tier's next `need` matches, and — when a walk found them before the tier's end —
    the share of the copies walked that matched, at least (None otherwise)."""
    found: list[asyncpg.Record] = []
    walked = 0
    walk = FIRST_WALK
    in_time_range = filters[3] is not None or filters[4] is not None
    walks = queries.SEARCH_WALKS_IN_TIME_RANGE if in_time_range else queries.SEARCH_WALKS
    for _ in range(MAX_WALKS):
        rows = await conn.fetch(walks[score], *filters, *after, need - len(found), walk, *ranks)
        if not rows:
            return found, None  # the tier is done
        found.extend(r for r in rows if r["result_id"] is not None)
        walked += rows[0]["walked"]
        reached_end = rows[0]["walked"] < walk
        if len(found) >= need or reached_end:
            return found, None if reached_end else len(found) / walked
        end = rows[0]
        after = [end["end_rank"], end["end_id"], end["end_result"]]
        if found:
            walk = int((need - len(found)) * walked / len(found) * WALK_MARGIN) + 1
        else:
            walk = NO_MATCH_WALK if walked < NO_MATCH_WALK else LONGEST_WALK + 1
        if walk > LONGEST_WALK:
            break
    # Rare in this tier: let the text and time indexes find the rest.
    rest = await conn.fetch(
        queries.SEARCH_SCANS[score],
        *filters,
        *after,
        need - len(found),
        timeout=max(scans_until - time.monotonic(), 0.001),
    )
    return found + list(rest), None


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


async def count_matches(
    conn: asyncpg.Connection, search_args: tuple[Any, ...], excludes_unknown: bool
) -> tuple[int | None, int | None]:
    """(total, unknown-time) of a search, each up to COUNT_CAP and None beyond it; both None
    when counting takes more than COUNT_BUDGET_MS.

    Runs last in the page's read transaction, so it counts exactly what the page was read
    from. The budget is asyncpg's: past it the statement is cancelled and the transaction,
    which has read everything it needs by then, ends. (A statement_timeout set for the count
    would stay set for the COMMIT, and on a loaded machine fail it.)
    """
    try:
        row = await conn.fetchrow(
            queries.SEARCH_COUNTS,
            *search_args,
            excludes_unknown,
            COUNT_CAP + 1,
            timeout=COUNT_BUDGET_MS / 1000,
        )
    except TimeoutError:
        return None, None
    return _capped(row["total"]), _capped(row["unknown_time"])


def _capped(value: int | None) -> int | None:
    return value if value is not None and value <= COUNT_CAP else None
