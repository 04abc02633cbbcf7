"""story_graph_search's reads: the hits of one page, tier by tier, and the counts.

A tier is read by walking the index in result order (SEARCH_WALKS) as long as what the walk
finds says that is cheaper, and through the trigram and time indexes (SEARCH_SCANS) once it
says the tier's matches are rare. The choice is made from the walk, never from the planner's
estimate of how common a term is: that estimate comes from a statistics sample and flips
between plans that differ a hundredfold.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from graph_service import queries
from graph_service.lookups import bounded_counts
from graph_service.views import MatchCounts, TimeFilter
from mirrortree.vocabulary import OBJECT_TYPE_RANKS

# A tier's first walk reads this many copies (that pass the type and time filters): enough for
# a page of a term in every other copy. Each further walk is sized from the density of matches
# seen so far (with a margin), or grows eightfold when nothing matched yet; a walk that would
# be longer than LONGEST_WALK means matches under about 1 in 500, which the trigram and time
# indexes find faster than walking on.
FIRST_WALK = 64
NO_MATCH_GROWTH = 8
LONGEST_WALK = 4_096
WALK_MARGIN = 1.5
MAX_WALKS = 3

Hit = tuple[int, asyncpg.Record]  # (relevance tier, row)


async def read_hits(
    conn: asyncpg.Connection,
    filters: tuple[Any, ...],
    types: list[str],
    position: list[Any] | None,
    limit: int,
) -> list[Hit]:
    """Up to `limit` (score, row) pairs after `position`, walking the tiers 3 → 2 → 1.

    `filters` are the parameters $1..$6 of the search statements (scope, types, pattern, time
    range and basis)."""
    ranks = [OBJECT_TYPE_RANKS[t] for t in types]
    found: list[Hit] = []
    start_score = position[0] if position else 3
    for score in (3, 2, 1):
        if score > start_score:
            continue
        after = list(position[1:]) if position and score == start_score else [None, None, None]
        rows = await _read_tier(
            conn,
            score,
            filters=filters,
            ranks=(min(ranks), max(ranks)),
            after=after,
            need=limit - len(found),
        )
        found.extend((score, row) for row in rows)
        if len(found) >= limit:
            break
    return found


async def _read_tier(
    conn: asyncpg.Connection,
    score: int,
    *,
    filters: tuple[Any, ...],
    ranks: tuple[int, int],
    after: list[Any],
    need: int,
) -> list[asyncpg.Record]:
    found: list[asyncpg.Record] = []
    walked = 0
    walk = FIRST_WALK
    for _ in range(MAX_WALKS):
        rows = await conn.fetch(queries.SEARCH_WALKS[score], *filters, *after, need, walk, *ranks)
        if not rows:
            return found  # the tier is done
        found.extend(r for r in rows if r["result_id"] is not None)
        walked += rows[0]["walked"]
        if len(found) >= need or rows[0]["walked"] < walk:
            return found[:need]  # a full page, or the walk reached the end of the tier
        end = rows[0]
        after = [end["end_rank"], end["end_id"], end["end_result"]]
        if found:
            # Sized from the density seen so far, with a margin; too long a walk means the
            # matches are rare after all.
            walk = int((need - len(found)) * walked / len(found) * WALK_MARGIN) + 1
        else:
            walk = walked * NO_MATCH_GROWTH
        if walk > LONGEST_WALK:
            break
    # Rare in this tier: let the text and time indexes find the rest.
    rest = await conn.fetch(queries.SEARCH_SCANS[score], *filters, *after, need - len(found))
    return found + list(rest)


async def count_matches(
    conn: asyncpg.Connection,
    filters: tuple[Any, ...],
    time_filter: TimeFilter,
    known_total: int | None,
) -> MatchCounts:
    """The total (unless already known from a first page that held every hit) and, under an
    event-time filter, the matches left out for an unknown event time — in one statement,
    within one time budget."""
    excludes_unknown = time_filter.active and time_filter.basis == "event_time"
    if known_total is not None and not excludes_unknown:
        return MatchCounts(known_total, None, False)
    counted = await bounded_counts(
        conn, queries.SEARCH_COUNTS, *filters, known_total is None, excludes_unknown
    )
    total, unknown_time = counted or (None, None)
    return MatchCounts(
        known_total if known_total is not None else total,
        unknown_time if excludes_unknown else None,
        excludes_unknown,
    )
