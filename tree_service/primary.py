"""The primary: the pool every store of the tree service uses, the idempotent write frame every
write runs in, and the commit position a write answers with.

Every write runs in one transaction on the primary. Idempotency is settled inside that same
transaction: the key is claimed first (a concurrent retry blocks on the unique index until the
first commits, then replays its stored response), so a retry can never write twice. Each
aggregate's store runs its statements inside this frame and translates the driver errors it
expects into service errors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import asyncpg
from asyncpg.transaction import Transaction

from mirrortree import dbloss
from mirrortree.lsn import commit_point, format_lsn, parse_lsn
from tree_service import gate
from tree_service.errors import Contention, IdempotencyKeyReused

T = TypeVar("T")

CLAIM_IDEMPOTENCY_KEY = """
INSERT INTO idempotency_keys (key, method, request_hash)
VALUES ($1, $2, $3)
ON CONFLICT (key) DO NOTHING
RETURNING key
"""

READ_IDEMPOTENCY_KEY = """
SELECT method, request_hash, response FROM idempotency_keys WHERE key = $1
"""

# The response is stored stripped of the words a purge may forget (stored_responses.stripped).
STORE_IDEMPOTENT_RESPONSE = """
UPDATE idempotency_keys SET response = $2, words_stripped = true WHERE key = $1
"""

CURRENT_LSN = "SELECT pg_current_wal_insert_lsn()::text"

WAL_GEOMETRY = """
SELECT current_setting('wal_block_size')::int AS block_size,
       (SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size') AS segment_size
"""


@dataclass(frozen=True)
class WriteOutcome(Generic[T]):
    """A write's result: either fresh (`value`) or a replay (`replayed` response bytes)."""

    value: T | None
    replayed: bytes | None
    lsn: str


class Primary:
    """The primary's pool, the idempotent write frame and the commit position of a write."""

    def __init__(self, pool: asyncpg.Pool, wal_block_size: int, wal_segment_size: int) -> None:
        self._pool = pool
        self._wal_geometry = (wal_block_size, wal_segment_size)

    @classmethod
    async def connect(cls, dsn: str, min_size: int = 2, max_size: int = 20) -> Primary:
        pool = await asyncpg.create_pool(
            dsn, min_size=min_size, max_size=max_size, setup=dbloss.track_connections
        )
        geometry = await pool.fetchrow(WAL_GEOMETRY)
        return cls(pool, geometry["block_size"], geometry["segment_size"])

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def close(self) -> None:
        await self._pool.close()

    async def is_replica(self) -> bool:
        return bool(await self._pool.fetchval("SELECT pg_is_in_recovery()"))

    async def write(
        self,
        *,
        key: str,
        method: str,
        request_hash: bytes,
        action: Callable[[asyncpg.Connection], Awaitable[T]],
        encode: Callable[[T], bytes],
    ) -> WriteOutcome[T]:
        """Run `action` in a transaction guarded by an idempotency key.

        The first request with `key` runs `action` and stores `encode(result)`; a later one with
        the same key and the same request hash gets those bytes back without writing; a
        different request under the same key fails with IdempotencyKeyReused.
        """
        try:
            return await self._write(key, method, request_hash, action, encode)
        except (asyncpg.DeadlockDetectedError, asyncpg.SerializationError):
            raise Contention() from None

    async def _write(
        self,
        key: str,
        method: str,
        request_hash: bytes,
        action: Callable[[asyncpg.Connection], Awaitable[T]],
        encode: Callable[[T], bytes],
    ) -> WriteOutcome[T]:
        async with self._pool.acquire() as conn:
            value: T | None = None
            replayed: bytes | None = None
            transaction = conn.transaction()
            await transaction.start()
            try:
                claimed = await conn.fetchval(CLAIM_IDEMPOTENCY_KEY, key, method, request_hash)
                if claimed is None:
                    row = await conn.fetchrow(READ_IDEMPOTENCY_KEY, key)
                    if row["method"] != method or row["request_hash"] != request_hash:
                        raise IdempotencyKeyReused(key, row["method"])
                    replayed = bytes(row["response"])
                else:
                    value = await gate.guarded(method, action, conn)
                    await conn.execute(STORE_IDEMPOTENT_RESPONSE, key, encode(value))
            except BaseException:
                # Nothing was committed; on a lost connection there is nothing to roll back,
                # and the error that lost it is the one to report.
                if not conn.is_closed():
                    await transaction.rollback()
                raise
            lsn = await self._commit(conn, transaction)
        return WriteOutcome(value, replayed, lsn)

    async def _commit(self, conn: asyncpg.Connection, transaction: Transaction) -> str:
        """Commit and return the commit position. Losing the database from the moment COMMIT
        is sent until the position is read leaves the write's outcome unknown."""
        try:
            await transaction.commit()
            return await self.commit_lsn(conn)
        except Exception as exc:
            if dbloss.database_lost(exc, conn) is not None:
                raise dbloss.OutcomeUnknown(f"{type(exc).__name__}: {exc}") from exc
            raise

    async def commit_lsn(self, conn: asyncpg.Connection) -> str:
        """The WAL position a replica must have replayed to see this connection's last commit."""
        inserted = parse_lsn(await conn.fetchval(CURRENT_LSN))
        return format_lsn(commit_point(inserted, *self._wal_geometry))
