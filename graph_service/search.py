"""story_graph_search's reads: the hits of one page, tier by tier, and the counts.

A tier is read by walking the index in result order (SEARCH_WALKS) as long as what the walk
finds says that is cheaper, and through the trigram and time indexes (SEARCH_SCANS) once it
says the tier's matches are rare. The choice is made from the walk, never from the planner's
estimate of how common a term is: that estimate comes from a statistics sample and flips
between plans that differ a hundredfold.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import asyncpg

from graph_service import queries
from graph_service.replicas import ReplicaRouter
from graph_service.views import COUNT_BUDGET_MS, COUNT_CAP, MatchCounts, TimeFilter
from mirrortree.vocabulary import OBJECT_TYPE_RANKS

# A tier's first walk reads FIRST_WALK copies (that pass the type and time filters): a page
# for a term in every other copy. With no match among them, one more walk of NO_MATCH_WALK;
# with none among those either, matches are rarer than about 1 in 100. With some matches, the
# next walk is sized from their density (with a margin). A walk that would be longer than
# LONGEST_WALK costs more than letting the trigram and time indexes find the rest (measured
# at 1M objects: a walk reads about 100 copies per millisecond; the indexes answer a term in
# 1 of 100 copies in about 12 ms).
FIRST_WALK = 64
NO_MATCH_WALK = 256
LONGEST_WALK = 2_048
WALK_MARGIN = 1.5
MAX_WALKS = 3

# How long a search waits, beyond the counting statement's own budget, for its counts to get a
# connection and start.
COUNT_SETUP_MS = 40

log = logging.getLogger("graph_service.search")

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
    rank_range = (min(ranks), max(ranks))
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
            ranks=rank_range,
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
        rows = await conn.fetch(
            queries.SEARCH_WALKS[score], *filters, *after, need - len(found), walk, *ranks
        )
        if not rows:
            return found  # the tier is done
        found.extend(r for r in rows if r["result_id"] is not None)
        walked += rows[0]["walked"]
        if len(found) >= need or rows[0]["walked"] < walk:
            return found  # a full page, or the walk reached the end of the tier
        end = rows[0]
        after = [end["end_rank"], end["end_id"], end["end_result"]]
        if found:
            walk = int((need - len(found)) * walked / len(found) * WALK_MARGIN) + 1
        else:
            walk = NO_MATCH_WALK if walked < NO_MATCH_WALK else LONGEST_WALK + 1
        if walk > LONGEST_WALK:
            break
    # Rare in this tier: let the text and time indexes find the rest.
    rest = await conn.fetch(queries.SEARCH_SCANS[score], *filters, *after, need - len(found))
    return found + list(rest)


class Counting:
    """A search's counts, taken in their own read transaction on a second connection while the
    page is read, within COUNT_BUDGET_MS.

    They belong to the page only if they were taken at the page's read revision: a scope's
    objects change only by new results, which raise it, so the same revision means the same
    objects. Otherwise — or past the budget, or when counting fails — they are unknown, never
    guessed; counts are auxiliary and never fail a search.
    """

    def __init__(
        self, task: asyncio.Task[tuple[int, tuple[int | None, int | None]]], excludes_unknown: bool
    ) -> None:
        self._task = task
        self.excludes_unknown = excludes_unknown  # an event-time filter: unknown times count

    @classmethod
    def start(
        cls,
        router: ReplicaRouter,
        search_args: tuple[Any, ...],
        time_filter: TimeFilter,
        min_lsn: str,
        wait_s: float,
    ) -> Counting:
        excludes_unknown = time_filter.excludes_unknown_times

        async def count(conn: asyncpg.Connection) -> tuple[int, tuple[int | None, int | None]]:
            return await _count(conn, search_args, excludes_unknown)

        task = asyncio.create_task(router.run(count, min_lsn=min_lsn, wait_s=wait_s))
        return cls(task, excludes_unknown)

    def abandon(self) -> None:
        self._task.cancel()

    async def settle(self, read_revision: int, known_total: int | None) -> MatchCounts:
        """The counts for a page read at `read_revision` (`known_total`: its hits, when the
        first page holds them all)."""
        if known_total is not None and not self.excludes_unknown:
            self.abandon()
            return MatchCounts(known_total, None, False)
        try:
            # The counting began with the page and its statement stops itself after
            # COUNT_BUDGET_MS; the wait also covers getting it a connection (opening one when
            # the pool has none idle), within bounds.
            revision, (total, unknown_time) = await asyncio.wait_for(
                self._task, (COUNT_BUDGET_MS + COUNT_SETUP_MS) / 1000
            )
        except TimeoutError:
            return MatchCounts(known_total, None, self.excludes_unknown)
        except Exception:
            log.warning("counting search matches failed", exc_info=True)
            return MatchCounts(known_total, None, self.excludes_unknown)
        if revision != read_revision:
            total, unknown_time = None, None
        return MatchCounts(
            known_total if known_total is not None else total,
            unknown_time if self.excludes_unknown else None,
            self.excludes_unknown,
        )


async def _count(
    conn: asyncpg.Connection, search_args: tuple[Any, ...], excludes_unknown: bool
) -> tuple[int, tuple[int | None, int | None]]:
    """(read revision, (total, unknown-time)) of a search: each count up to COUNT_CAP, None
    beyond it; both None when the statement runs out of COUNT_BUDGET_MS."""
    try:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            await conn.execute(queries.SET_LOCAL_STATEMENT_TIMEOUT, str(COUNT_BUDGET_MS))
            row = await conn.fetchrow(
                queries.SEARCH_COUNTS, *search_args, excludes_unknown, COUNT_CAP + 1
            )
    except asyncpg.QueryCanceledError:
        return 0, (None, None)  # revision 0: unknown counts, whatever the page's revision
    return row["revision"], (_capped(row["total"]), _capped(row["unknown_time"]))


def _capped(value: int | None) -> int | None:
    return value if value is not None and value <= COUNT_CAP else None
