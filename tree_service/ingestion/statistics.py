"""Keeping the planner's statistics up with a scope that grows fast.

Ingestion finds a scope's links and copies by (scope, object) through the graph's indexes.
When the planner's statistics predate a scope (a new project being filled in a large
database), a statement planned for its values takes the scope for a single row, and may then
read the scope through an index by the scope alone and filter all of its rows for every object
looked up: a cost that grows with the scope until autovacuum analyzes the tables, which in a
large table waits for a tenth of it to change. Measured at a million objects, in a new scope of
30,000 links: the live walk that makes an object a hub (neighbourhoods.FILL_HUB_MEMBERS) took
77 ms, and 0.3 ms once the scope was analyzed.

So after a result is recorded, tree_service compares what the scope holds with the planner's
estimate of it, and when the scope has outgrown the estimate, analyzes the scope column of the
graph tables in the background (a sample of each table, about 0.3 s at a million objects). A
scope is analyzed for again only once it has doubled since, so a scope the statistics cannot
single out (one of many small ones) costs at most one ANALYZE per doubling. The statistics
replicate, for the replicas' reads planned with their values.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

import asyncpg

log = logging.getLogger("tree_service.statistics")

# Below this many objects a scope is cheap to read whole, whatever the plan.
MIN_OBJECTS = 1_000
# A scope has outgrown the statistics when it holds this many times the objects estimated.
GROWTH = 2
# At most one ANALYZE per this many seconds per process.
MIN_INTERVAL_S = 5.0

ESTIMATED_OBJECTS = "EXPLAIN (FORMAT JSON) SELECT 1 FROM graph_objects WHERE scope_key = $1"
# The copies its results recorded, as the database keeps them (scope_results).
RECORDED_OBJECTS = "SELECT coalesce((SELECT copies FROM scope_results WHERE scope_key = $1), 0)"
REFRESH = "SELECT refresh_graph_statistics()"


class GraphStatistics:
    """Analyzes the graph tables, in the background, when a scope outgrows its estimate."""

    def __init__(self, pool: asyncpg.Pool, min_interval_s: float = MIN_INTERVAL_S) -> None:
        self._pool = pool
        self._min_interval_s = min_interval_s
        self._pending: set[str] = set()
        self._analyzed_at: dict[str, int] = {}  # objects a scope held when analyzed for it
        self._last_analyze = -min_interval_s
        self._task: asyncio.Task[None] | None = None
        self.analyzed = 0  # how many times this process analyzed (for tests and logs)

    def recorded(self, scope_key: str) -> None:
        """A result of `scope_key` was committed: check that scope soon."""
        self._pending.add(scope_key)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._check_pending(), name="graph-statistics")

    async def idle(self) -> None:
        """Wait until every scope recorded so far has been checked."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _check_pending(self) -> None:
        while self._pending:
            wait = self._last_analyze + self._min_interval_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)  # scopes recorded meanwhile are checked together
            scopes, self._pending = self._pending, set()
            try:
                await self._refresh_if_outgrown(scopes)
            except (asyncpg.PostgresError, OSError):
                # Only planning suffers until the next check or autovacuum; never a write.
                log.exception("checking the planner's statistics failed")

    async def _refresh_if_outgrown(self, scopes: set[str]) -> None:
        async with self._pool.acquire() as conn:
            outgrown = {}
            for scope_key in sorted(scopes):
                held = await conn.fetchval(RECORDED_OBJECTS, scope_key)
                if held < MIN_OBJECTS or held <= GROWTH * self._analyzed_at.get(scope_key, 0):
                    continue
                plan = json.loads(await conn.fetchval(ESTIMATED_OBJECTS, scope_key))
                if held > GROWTH * plan[0]["Plan"]["Plan Rows"]:
                    outgrown[scope_key] = held
            if not outgrown:
                return
            started = time.monotonic()
            await conn.execute(REFRESH)
        self._last_analyze = time.monotonic()
        self._analyzed_at.update(outgrown)
        self.analyzed += 1
        log.info(
            "analyzed the graph tables for scopes that outgrew the planner's statistics",
            extra={"scopes": outgrown, "seconds": round(self._last_analyze - started, 3)},
        )
