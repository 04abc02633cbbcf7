"""Races forced on purpose: a lock held on a connection of its own until every writer waits
for it (directly, or behind another writer), so the writers provably overlap in the database
instead of merely being started together."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import asyncpg

# Backends waiting on the holder's locks, directly or behind another waiter (a row lock's
# later waiters queue behind the first one's tuple lock, not behind the holder).
WAITING_BEHIND = """
WITH RECURSIVE behind (pid) AS (
    SELECT pid FROM pg_stat_activity WHERE $1 = any(pg_blocking_pids(pid))
    UNION
    SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = any(pg_blocking_pids(a.pid))
)
SELECT count(*) FROM behind
"""

# Row locks a holder takes: a tree's row (every append bumps it, and main-line rows check it)
# and a node's row (an adoption updates the question's).
LOCK_TREE = "SELECT 1 FROM trees WHERE id = $1 FOR UPDATE"
LOCK_NODE = "SELECT 1 FROM nodes WHERE id = $1 FOR UPDATE"


class Gate:
    """A lock held in an open transaction until the `held` block ends, and a watcher."""

    def __init__(self, holder: asyncpg.Connection, watcher: asyncpg.Connection) -> None:
        self._holder = holder
        self._watcher = watcher

    async def waiting(self) -> int:
        # Asked outside the holder's transaction, which would see pg_stat_activity frozen.
        count: int = await self._watcher.fetchval(WAITING_BEHIND, self._holder.get_server_pid())
        return count

    async def until_waiting(self, writers: Sequence[asyncio.Future[Any]]) -> None:
        """Return once every writer waits behind the lock; fail if one finished without."""
        while await self.waiting() < len(writers):
            done = [w for w in writers if w.done()]
            assert not done, f"a writer finished without waiting for the lock: {done[0]!r}"
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def held(dsn: str, statement: str, *args: Any) -> AsyncIterator[Gate]:
    """Take the lock `statement` takes and hold it until the block ends."""
    holder = await asyncpg.connect(dsn)
    watcher = await asyncpg.connect(dsn)
    try:
        await holder.execute("BEGIN")
        await holder.execute(statement, *args)
        yield Gate(holder, watcher)
    finally:
        await holder.close()  # ends the transaction and so releases the lock
        await watcher.close()
