"""Health- and lag-aware routing over one or more PostgreSQL streaming replicas.

A monitor task polls every replica (is it up, is it in recovery, how far has it received and
replayed, how old is the last commit it replayed, is its WAL receiver connected to the primary)
and, in the same round, the primary's current WAL position; any failure of a check marks that
replica down, and the next check that gets an answer puts it back. A replica's lag is the WAL
it has yet to replay behind the primary's position (the last one sampled, and never less than
the furthest any replica has received).

Reads are spread over the eligible replicas, taking the one with the fewest reads in flight, in
turn among equals. Eligible: up and fresh (graph_service.freshness: within the lag bound, not cut
from the primary past the grace, and, once the primary's position is unknown, with a recent
enough last replayed commit). A read that finds none eligible waits for the monitor to find
one, at most its wait bound, then fails (`consistency_timeout`): a stale answer that says it is
current is worse than none. A replica whose connection is lost under a read is marked down at
once and the read is retried on another one.

A read may carry a consistency token (a commit LSN from tree_service): it is served only by a
replica that has replayed at least that far, whatever its lag; if none has yet, the replicas
are polled until one has or the wait bound passes (`consistency_timeout`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import asyncpg

from graph_service.errors import ConsistencyTimeout, GraphError, ReplicaUnavailable
from graph_service.freshness import (
    DEFAULT_MAX_LAG_BYTES,
    DEFAULT_MAX_REPLAY_AGE_S,
    DEFAULT_PRIMARY_GRACE_S,
    Freshness,
)
from graph_service.queries import replica as queries
from mirrortree import dbloss
from mirrortree.lsn import format_lsn, parse_lsn

log = logging.getLogger("graph_service.replicas")
T = TypeVar("T")

# How long one health check or one connection attempt may take before the replica counts as down.
CHECK_TIMEOUT_S = 2.0
# Pause between polls of the replicas while a read waits for its consistency token.
TOKEN_POLL_S = 0.002
# Pause between looks at the monitor's figures while a read waits for an eligible replica.
LAG_POLL_S = 0.02


@dataclass
class Replica:
    name: str
    dsn: str
    pool: asyncpg.Pool | None = None
    healthy: bool = False
    replay_lsn: int = 0
    receive_lsn: int = 0
    checked_at: float = 0.0
    is_primary: bool = False
    lag_bytes: int = 0
    # When (monotonic) the last commit it replayed was made, as of its last answered check (by
    # its own clock); None when it has replayed none since it started, or is a primary.
    replayed_at: float | None = None
    # When (monotonic) a check first found it without a WAL receiver connected to the primary;
    # None while it has one, and on a primary.
    cut_at: float | None = None
    inflight: int = 0
    served: int = 0  # reads answered
    lost: int = 0  # reads (and checks) that found the replica gone


class PrimaryNotAllowed(Exception):
    """A configured read DSN points at a primary and that was not explicitly allowed."""


class _ReplicaLost(Exception):
    """A read's replica went away under it; the read may be retried on another one."""


class ReplicaRouter:
    """Owns one pool per replica and picks where each read runs."""

    def __init__(
        self,
        dsns: tuple[str, ...],
        *,
        allow_primary: bool = False,
        pool_max: int = 20,
        health_interval_s: float = 0.5,
        max_lag_bytes: int = DEFAULT_MAX_LAG_BYTES,
        primary_dsn: str = "",
        max_replay_age_s: float = DEFAULT_MAX_REPLAY_AGE_S,
        primary_grace_s: float = DEFAULT_PRIMARY_GRACE_S,
    ) -> None:
        self._replicas = [Replica(f"replica{i}", dsn) for i, dsn in enumerate(dsns)]
        self._allow_primary = allow_primary
        self._pool_max = pool_max
        self._interval = health_interval_s
        self._primary_dsn = primary_dsn
        self._freshness = Freshness(
            max_lag_bytes, max_replay_age_s, primary_grace_s, has_primary=bool(primary_dsn)
        )
        self._primary_conn: asyncpg.Connection | None = None
        # The primary's WAL position at its last answer (0 before any).
        self.primary_lsn = 0
        self._monitor: asyncio.Task[None] | None = None
        self._turn = itertools.count()
        # Reads answered whose transaction is still being ended (see `run`).
        self._ending: set[asyncio.Task[None]] = set()

    @property
    def replicas(self) -> list[Replica]:
        return list(self._replicas)

    @property
    def max_lag_bytes(self) -> int:
        return self._freshness.max_lag_bytes

    @property
    def primary_unreachable_s(self) -> float | None:
        return self._freshness.primary_unreachable_s()

    def replay_age(self, replica: Replica) -> float | None:
        return self._freshness.replay_age(replica)

    def cut_from_primary_s(self, replica: Replica) -> float | None:
        return self._freshness.cut_from_primary_s(replica)

    def fresh(self, replica: Replica) -> bool:
        return self._freshness.fresh(replica)

    def eligible(self, replica: Replica) -> bool:
        """Takes reads without a token: up and fresh."""
        return replica.healthy and replica.pool is not None and self.fresh(replica)

    async def start(self) -> None:
        """Connect to every replica; refuse primaries unless allowed; start monitoring."""
        await asyncio.gather(self._sample_primary(), *(self._check(r) for r in self._replicas))
        for replica in self._replicas:
            if replica.is_primary and not self._allow_primary:
                await self.close()
                raise PrimaryNotAllowed(
                    f"{replica.name} is a primary, not a streaming replica; graph_service reads "
                    "from replicas only (set MIRRORTREE_GRAPH_ALLOW_PRIMARY=true to override)"
                )
        if not any(r.healthy for r in self._replicas):
            log.warning("no replica is reachable yet; reads fail until one is")
        if not self._primary_dsn:
            log.warning(
                "no primary DSN (MIRRORTREE_GRAPH_PRIMARY_DSN or MIRRORTREE_GRAPH_GATE_DSN): "
                "replica lag is measured against the replicas only"
            )
        self._monitor = asyncio.create_task(self._watch(), name="replica-monitor")

    async def _connect(self, replica: Replica) -> asyncpg.Pool:
        return await asyncpg.create_pool(
            replica.dsn,
            min_size=1,
            max_size=self._pool_max,
            command_timeout=30,
            timeout=CHECK_TIMEOUT_S,  # per connection attempt; a replica that hangs is down
            # Records the connections each call uses, so a lost one is told from a bug.
            setup=dbloss.track_connections,
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
        if self._primary_conn is not None:
            self._primary_conn.terminate()
            self._primary_conn = None
        for replica in self._replicas:
            if replica.pool is not None:
                try:
                    await asyncio.wait_for(replica.pool.close(), CHECK_TIMEOUT_S)
                except Exception:  # a replica that hangs or is gone: drop its connections
                    replica.pool.terminate()
                replica.pool = None

    # ---- health ------------------------------------------------------------------------

    async def _check(self, replica: Replica) -> None:
        """Ask the replica where it stands. Any failure marks it down: a monitor that stopped
        on an unexpected error would keep a replica out (or in) for good."""
        was = replica.healthy
        try:
            try:
                row = await self._position(replica)
            except Exception:
                if replica.pool is None:
                    raise
                # The pool may only hold connections the server dropped (it restarted): replace
                # them and ask once more, so a replica that is back rejoins at once.
                await self._expire(replica)
                row = await self._position(replica)
            replica.is_primary = not row["standby"]
            replica.replay_lsn = parse_lsn(row["lsn"]) if row["lsn"] else 0
            replica.receive_lsn = parse_lsn(row["received"]) if row["received"] else 0
            age = row["replay_age_s"]
            replica.replayed_at = None if age is None else time.monotonic() - age
            self._note_receiver(replica, receiving=not row["standby"] or row["receiving"])
            replica.healthy = bool(row["standby"]) or self._allow_primary
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            replica.healthy = False
            if was:
                replica.lost += 1
                log.warning(
                    "replica check failed: %s: %s",
                    type(exc).__name__,
                    exc,
                    extra={"replica": replica.name},
                )
        replica.checked_at = time.monotonic()
        self._update_lag()
        if was != replica.healthy:
            log.warning(
                "replica health changed",
                extra={"replica": replica.name, "healthy": replica.healthy},
            )

    def _note_receiver(self, replica: Replica, *, receiving: bool) -> None:
        if receiving and replica.cut_at is not None:
            replica.cut_at = None
            log.warning("replica connected to the primary again", extra={"replica": replica.name})
        elif not receiving and replica.cut_at is None:
            replica.cut_at = time.monotonic()
            log.warning(
                "replica has no WAL receiver connected to the primary",
                extra={"replica": replica.name},
            )

    async def _position(self, replica: Replica) -> asyncpg.Record:
        pool = replica.pool
        if pool is None:
            pool = await asyncio.wait_for(self._connect(replica), CHECK_TIMEOUT_S * 2)
            replica.pool = pool
        assert pool is not None
        row: asyncpg.Record = await pool.fetchrow(queries.REPLICA_POSITION, timeout=CHECK_TIMEOUT_S)
        return row

    async def _sample_primary(self) -> None:
        """Read the primary's current WAL position; any failure counts as unreachable (from the
        first failure on) and drops the connection, so the next round connects afresh."""
        if not self._primary_dsn:
            return
        try:
            self.primary_lsn = parse_lsn(
                await asyncio.wait_for(self._primary_position(), CHECK_TIMEOUT_S * 2)
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if self._primary_conn is not None:
                self._primary_conn.terminate()
                self._primary_conn = None
            if self._freshness.primary_lost_at is None:
                self._freshness.primary_lost_at = time.monotonic()
                log.warning(
                    "primary unreachable; lag is measured against its last known position: %s: %s",
                    type(exc).__name__,
                    exc,
                )
            return
        if self._freshness.primary_lost_at is not None:
            log.warning("primary reachable again")
            self._freshness.primary_lost_at = None
        self._update_lag()

    async def _primary_position(self) -> str:
        conn = self._primary_conn
        if conn is None or conn.is_closed():
            conn = await asyncpg.connect(self._primary_dsn, timeout=CHECK_TIMEOUT_S)
            self._primary_conn = conn
        lsn: str = await conn.fetchval(queries.PRIMARY_POSITION, timeout=CHECK_TIMEOUT_S)
        return lsn

    def _update_lag(self) -> None:
        up = [r for r in self._replicas if r.healthy]
        # The primary's position when known; a replica that received beyond the last sample
        # shows WAL that exists even so.
        front = max((max(r.replay_lsn, r.receive_lsn) for r in up), default=0)
        front = max(front, self.primary_lsn)
        for replica in self._replicas:
            replica.lag_bytes = max(front - replica.replay_lsn, 0) if replica.healthy else 0

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await asyncio.gather(
                    self._sample_primary(), *(self._check(r) for r in self._replicas)
                )
            except asyncio.CancelledError:
                raise
            except Exception:  # _check already catches everything; never let the loop end
                log.exception("replica monitor round failed; continuing")

    async def _expire(self, replica: Replica) -> None:
        if replica.pool is not None:
            with contextlib.suppress(Exception):
                await replica.pool.expire_connections()

    async def _mark_down(self, replica: Replica, error: BaseException) -> None:
        if replica.healthy:
            log.warning(
                "replica lost under a read: %s: %s",
                type(error).__name__,
                error,
                extra={"replica": replica.name},
            )
        replica.healthy = False
        replica.lost += 1
        self._update_lag()
        await self._expire(replica)

    # ---- choice ------------------------------------------------------------------------

    def _up(self) -> list[Replica]:
        return [r for r in self._replicas if r.healthy and r.pool is not None]

    def _least_busy(self, options: list[Replica]) -> Replica:
        """Fewest reads in flight; among equals, each in turn."""
        start = next(self._turn) % len(options)
        rotated = options[start:] + options[:start]
        return min(rotated, key=lambda r: r.inflight)

    async def _choose(self, wanted: int, deadline: float, tried: set[str]) -> tuple[Replica, bool]:
        """Where the read runs, and whether that replica was just seen to have replayed the
        token (then the read need not confirm it again on its connection)."""
        if not wanted:
            while True:
                up = [r for r in self._up() if r.name not in tried]
                if not up:
                    raise ReplicaUnavailable(
                        "no healthy replica is available to read from; retry shortly"
                    )
                options = [r for r in up if self.fresh(r)]
                if options:
                    return self._least_busy(options), False
                if time.monotonic() >= deadline:
                    raise self._freshness.too_stale(up)
                # The monitor's next round may find one caught up.
                await asyncio.sleep(LAG_POLL_S)
        while True:
            up = [r for r in self._up() if r.name not in tried]
            if not up:
                raise ReplicaUnavailable(
                    "no healthy replica is available to read from; retry shortly"
                )
            reached = [r for r in up if r.replay_lsn >= wanted]
            if reached:
                return self._least_busy(reached), False
            polled = await asyncio.gather(*(self._poll(r, wanted) for r in up))
            confirmed = [r for r, ok in zip(up, polled, strict=True) if ok]
            if confirmed:
                return self._least_busy(confirmed), True
            if time.monotonic() >= deadline:
                raise ConsistencyTimeout(
                    f"no replica has replayed the write at {format_lsn(wanted)} yet; retry shortly",
                    {"lsn": format_lsn(wanted), "replicas": ",".join(r.name for r in up)},
                )
            await asyncio.sleep(TOKEN_POLL_S)

    async def _poll(self, replica: Replica, wanted: int) -> bool:
        """Whether `replica` has replayed `wanted` (a waiting read's fresher view than the
        monitor's)."""
        pool = replica.pool
        if pool is None:
            return False
        try:
            reached = await pool.fetchval(
                queries.REPLAYED_AT_LEAST, wanted, timeout=CHECK_TIMEOUT_S
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._mark_down(replica, exc)
            return False
        if reached:
            replica.replay_lsn = max(replica.replay_lsn, wanted)
        return bool(reached)

    # ---- reads -------------------------------------------------------------------------

    async def run(
        self,
        read: Callable[[asyncpg.Connection], Awaitable[T]],
        *,
        min_lsn: str = "",
        wait_s: float = 2.0,
        begin: str | None = None,
    ) -> T:
        """Run `read` on a chosen replica, failing over when its replica is lost.

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
            try:
                replica, confirmed = await self._choose(wanted, deadline, tried)
            except ReplicaUnavailable as exc:
                if last_error is not None:
                    raise exc from last_error
                raise
            tried.add(replica.name)
            try:
                confirm = 0 if confirmed else wanted
                return await self._run_on(replica, read, confirm, deadline, begin)
            except _ReplicaLost as lost:
                last_error = lost.__cause__
                await self._mark_down(replica, lost.__cause__ or lost)
                log.warning("retrying a read on another replica", extra={"replica": replica.name})

    async def _run_on(
        self,
        replica: Replica,
        read: Callable[[asyncpg.Connection], Awaitable[T]],
        wanted: int,
        deadline: float,
        begin: str | None,
    ) -> T:
        pool = replica.pool
        if pool is None:
            raise _ReplicaLost() from ConnectionError(f"{replica.name} has no connections")
        replica.inflight += 1
        conn: asyncpg.Connection | None = None
        # The connection behind the pool's proxy: what tells a lost session from a bug below.
        session: asyncpg.Connection | None = None
        released_later = False
        try:
            conn = await pool.acquire()
            session = dbloss.unwrapped(conn)
            if wanted:
                # The monitor's view may be stale (a restarted replica replays from its last
                # restart point): confirm on the very connection the read uses.
                await self._wait_for_lsn(replica, conn, wanted, deadline)
            if begin is None:
                result = await read(conn)
            else:
                await conn.execute(begin)
                try:
                    result = await read(conn)
                except BaseException:
                    await _roll_back(conn, session)
                    raise
                self._end_later(pool, conn)
                released_later = True
            replica.served += 1
            return result
        except GraphError:
            raise
        except Exception as exc:
            lost = dbloss.database_lost(exc, session)
            # A statement cancelled past its timeout is the read's own doing, not a lost replica.
            timed_out = (
                isinstance(lost, TimeoutError) and session is not None and not session.is_closed()
            )
            if lost is not None and not timed_out:
                raise _ReplicaLost() from exc
            raise
        finally:
            replica.inflight -= 1
            if conn is not None and not released_later:
                with contextlib.suppress(Exception):
                    await pool.release(conn)

    async def _wait_for_lsn(
        self, replica: Replica, conn: asyncpg.Connection, wanted: int, deadline: float
    ) -> None:
        while True:
            # asyncpg's pg_lsn codec takes the integer form.
            if await conn.fetchval(queries.REPLAYED_AT_LEAST, wanted):
                return
            if time.monotonic() >= deadline:
                raise ConsistencyTimeout(
                    f"no replica has replayed the write at {format_lsn(wanted)} yet; retry shortly",
                    {"lsn": format_lsn(wanted), "replica": replica.name},
                )
            await asyncio.sleep(TOKEN_POLL_S)

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
        except Exception:
            # The read has been answered and wrote nothing. A broken connection is dropped
            # on release (and its replica marked down by the monitor or the next read).
            log.warning("ending a read's transaction failed", exc_info=True)
        finally:
            try:
                await pool.release(conn)
            except Exception:
                log.warning("releasing a read's connection failed", exc_info=True)


async def _roll_back(conn: asyncpg.Connection, session: asyncpg.Connection | None) -> None:
    """End a failed read's transaction (`conn`, the pool's proxy of `session`) before its
    error is raised. Its error is the one to raise: a closed session has nothing to roll back,
    and one whose ROLLBACK fails is not reused with its transaction open (the pool rolls back,
    or drops it, on release). The session is asked, not the proxy: asyncpg takes a closed
    connection back to its pool at once, and its proxy then refuses every call."""
    if session is None or session.is_closed():
        return
    with contextlib.suppress(Exception):
        await conn.execute("ROLLBACK")


async def keep_session(conn: asyncpg.Connection) -> None:
    """Pool reset hook for connections that only read: nothing to reset (see the replica
    pools)."""
