"""Health- and lag-aware routing over one or more PostgreSQL streaming replicas.

A monitor task polls every replica (is it up, is it in recovery, how far has it replayed).
Reads go to the healthy replica that has replayed the most WAL; a replica that fails a query
on a broken connection is marked down at once and the read is retried on the next one. A read
may carry a consistency token (a commit LSN from tree_service): it is served only by a replica
that has replayed at least that far, waiting a bounded time, else `consistency_timeout`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import asyncpg

from graph_service.errors import ConsistencyTimeout, ReplicaUnavailable
from graph_service.queries import replica as queries
from mirrortree.lsn import parse_lsn

log = logging.getLogger("graph_service.replicas")
T = TypeVar("T")

_CONNECTION_ERRORS = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
)


@dataclass
class Replica:
    name: str
    dsn: str
    pool: asyncpg.Pool | None = None
    healthy: bool = False
    replay_lsn: int = 0
    checked_at: float = 0.0
    is_primary: bool = False


class PrimaryNotAllowed(Exception):
    """A configured read DSN points at a primary and that was not explicitly allowed."""


class ReplicaRouter:
    """Owns one pool per replica and picks where each read runs."""

    def __init__(
        self,
        dsns: tuple[str, ...],
        *,
        allow_primary: bool = False,
        pool_max: int = 20,
        health_interval_s: float = 0.5,
    ) -> None:
        self._replicas = [Replica(f"replica{i}", dsn) for i, dsn in enumerate(dsns)]
        self._allow_primary = allow_primary
        self._pool_max = pool_max
        self._interval = health_interval_s
        self._monitor: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        # Reads answered whose transaction is still being ended (see `run`).
        self._ending: set[asyncio.Task[None]] = set()

    @property
    def replicas(self) -> list[Replica]:
        return list(self._replicas)

    async def start(self) -> None:
        """Connect to every replica; refuse primaries unless allowed; start monitoring."""
        for replica in self._replicas:
            with contextlib.suppress(*_CONNECTION_ERRORS):
                replica.pool = await self._connect(replica)
            await self._check(replica)
            if replica.is_primary and not self._allow_primary:
                await self.close()
                raise PrimaryNotAllowed(
                    f"{replica.name} is a primary, not a streaming replica; graph_service reads "
                    "from replicas only (set MIRRORTREE_GRAPH_ALLOW_PRIMARY=true to override)"
                )
        if not any(r.healthy for r in self._replicas):
            log.warning("no replica is reachable yet; reads fail until one is")
        self._monitor = asyncio.create_task(self._watch(), name="replica-monitor")

    async def _connect(self, replica: Replica) -> asyncpg.Pool:
        return await asyncpg.create_pool(
            replica.dsn,
            min_size=1,
            max_size=self._pool_max,
            command_timeout=30,
            # Reads leave no session state behind (settings are transaction-local, no locks,
            # cursors or LISTEN), so a connection goes back to the pool without the reset
            # statement asyncpg sends by default — one round trip less per read. An open
            # transaction is still rolled back on release.
            reset=keep_session,
            # Keep every statement prepared, however long: asyncpg's default leaves out those
            # over 15 KiB, which are then parsed, described and planned again on every call (a
            # hub's one statement for all its pages is longer).
            max_cacheable_statement_size=64 * 1024,
            server_settings={
                # Plan every call with its values instead of a generic plan cached after five
                # executions, unless a read asks for generic plans in its own transaction
                # (queries.replica.BEGIN_READ_WITH_GENERIC_PLANS: context reads and searches, whose
                # statements are written so that one plan serves every value — but a search's
                # trigram scans within a time range, which ask for this mode back).
                "plan_cache_mode": "force_custom_plan",
                # Short OLTP reads; JIT compilation would cost more than it saves.
                "jit": "off",
            },
        )

    async def close(self) -> None:
        if self._ending:
            await asyncio.gather(*self._ending, return_exceptions=True)
        if self._monitor is not None:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
        for replica in self._replicas:
            if replica.pool is not None:
                await replica.pool.close()
                replica.pool = None

    async def _check(self, replica: Replica) -> None:
        was = replica.healthy
        try:
            if replica.pool is None:
                replica.pool = await self._connect(replica)
            row = await replica.pool.fetchrow(
                queries.REPLICA_POSITION,
                timeout=2,
            )
            replica.is_primary = not row["standby"]
            replica.replay_lsn = parse_lsn(row["lsn"]) if row["lsn"] else 0
            replica.healthy = row["standby"] or self._allow_primary
        except (TimeoutError, *_CONNECTION_ERRORS, asyncpg.PostgresError):
            replica.healthy = False
        replica.checked_at = time.monotonic()
        if was != replica.healthy:
            log.warning(
                "replica health changed",
                extra={"replica": replica.name, "healthy": replica.healthy},
            )
        self._changed.set()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await asyncio.gather(*(self._check(r) for r in self._replicas))

    def _candidates(self, min_lsn: int) -> list[Replica]:
        healthy = [r for r in self._replicas if r.healthy and r.pool is not None]
        healthy.sort(key=lambda r: r.replay_lsn, reverse=True)
        return [r for r in healthy if r.replay_lsn >= min_lsn] or healthy

    async def _wait_for_lsn(
        self, replica: Replica, conn: asyncpg.Connection, lsn: str, deadline: float
    ) -> None:
        while True:
            # asyncpg's pg_lsn codec takes the integer form.
            reached = await conn.fetchval(queries.REPLAYED_AT_LEAST, parse_lsn(lsn))
            if reached:
                return
            if time.monotonic() >= deadline:
                raise ConsistencyTimeout(
                    f"no replica has replayed the write at {lsn} yet; retry shortly",
                    {"lsn": lsn, "replica": replica.name},
                )
            await asyncio.sleep(0.005)

    async def run(
        self,
        read: Callable[[asyncpg.Connection], Awaitable[T]],
        *,
        min_lsn: str = "",
        wait_s: float = 2.0,
        begin: str | None = None,
    ) -> T:
        """Run `read` on the best replica, failing over on connection errors.

        With `begin` (replica.BEGIN_READ*), `read` runs inside the transaction that statement
        opens, so all its statements share one snapshot. (A plain statement, not asyncpg's
        Connection.transaction(), so that transaction-local settings share its round trip.)
        A read that fails is rolled back before its error is raised. A read that succeeds
        returns at once, and its transaction is committed and its connection released after
        that (`_end_later`): ending a read-only transaction changes nothing the caller sees,
        and its round trip (a fraction of a millisecond; more when a halted CPU has to wake
        up for it) would otherwise add to every read's latency.
        """
        wanted = parse_lsn(min_lsn) if min_lsn else 0
        deadline = time.monotonic() + wait_s
        tried: set[str] = set()
        last_error: BaseException | None = None
        while True:
            options = [r for r in self._candidates(wanted) if r.name not in tried]
            if not options:
                break
            replica = options[0]
            tried.add(replica.name)
            try:
                return await self._run_on(replica, read, min_lsn if wanted else "", deadline, begin)
            except _CONNECTION_ERRORS as exc:
                replica.healthy = False
                last_error = exc
                log.warning("replica failed; trying the next", extra={"replica": replica.name})
        raise ReplicaUnavailable(
            "no healthy replica is available to read from; retry shortly"
        ) from last_error

    async def _run_on(
        self,
        replica: Replica,
        read: Callable[[asyncpg.Connection], Awaitable[T]],
        min_lsn: str,
        deadline: float,
        begin: str | None,
    ) -> T:
        pool = replica.pool
        assert pool is not None
        conn = await pool.acquire()
        released_later = False
        try:
            if min_lsn:
                await self._wait_for_lsn(replica, conn, min_lsn, deadline)
            if begin is None:
                return await read(conn)
            await conn.execute(begin)
            try:
                result = await read(conn)
            except BaseException:
                if not conn.is_closed():
                    await conn.execute("ROLLBACK")
                raise
            self._end_later(pool, conn)
            released_later = True
            return result
        finally:
            if not released_later:
                await pool.release(conn)

    def _end_later(self, pool: asyncpg.Pool, conn: asyncpg.Connection) -> None:
        """Commit a read's transaction and release its connection in the background; `close`
        waits for every such task before closing the pools."""
        task = asyncio.create_task(self._commit_and_release(pool, conn))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    @staticmethod
    async def _commit_and_release(pool: asyncpg.Pool, conn: asyncpg.Connection) -> None:
        try:
            await conn.execute("COMMIT")
        except (*_CONNECTION_ERRORS, asyncpg.PostgresError):
            # The read has been answered and wrote nothing. A broken connection is dropped
            # on release (and its replica marked down by the monitor or the next read).
            log.warning("ending a read's transaction failed", exc_info=True)
        finally:
            try:
                await pool.release(conn)
            except (*_CONNECTION_ERRORS, asyncpg.PostgresError, TimeoutError):
                log.warning("releasing a read's connection failed", exc_info=True)


async def keep_session(conn: asyncpg.Connection) -> None:
    """Pool reset hook for connections that only read: nothing to reset (see the replica
    pools)."""
