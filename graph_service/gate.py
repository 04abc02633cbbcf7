"""M3: whether the story-graph tools may answer a caller right now.

Four switches must all be on: the supervisor app, the `story-graph` capability, the runtime's
assignment to it (bindings only: a trusted caller names no runtime) and the session's own
switch (missing = on). Every query checks them after reading its data and before answering, so
a result in flight when a switch flips is withheld.

The switches are read from the primary when a gate DSN is configured: then a call that starts
after the disabling write has returned sees it on every instance, whatever the replica lag.
Without one they are read from the replica, and a switch takes effect once replicated.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from graph_service.errors import Disabled
from graph_service.queries.access import GATE_SWITCHES
from graph_service.replicas import keep_session
from graph_service.views import Caller
from mirrortree.switches import switches_off

Reader = Callable[[Callable[[asyncpg.Connection], Awaitable[Any]]], Awaitable[Any]]


def disabled_reason(row: asyncpg.Record | None, caller: Caller) -> str:
    """Which switch is off, the first that applies ("" when the tools may answer)."""
    off = switches_off(
        app=row is not None and row["heartbeat_enabled"],
        capability=row is not None and row["enabled"],
        assignments=row["assignments"] if row is not None else (),
        runtime=caller.runtime,
        session=row is None or row["session_switch"] != "false",
    )
    return off[0] if off else ""


class Gate:
    def __init__(self, read: Reader, pool: asyncpg.Pool | None = None) -> None:
        self._read = read
        self._pool = pool

    @classmethod
    async def connect(cls, dsn: str, fallback: Reader) -> Gate:
        """On the primary at `dsn`, or through `fallback` (the replicas) when dsn is empty."""
        if not dsn:
            return cls(fallback)
        pool = await asyncpg.create_pool(
            dsn,
            min_size=1,
            max_size=4,
            reset=keep_session,
            server_settings={"default_transaction_read_only": "on"},
        )

        async def read(query: Callable[[asyncpg.Connection], Awaitable[Any]]) -> Any:
            async with pool.acquire() as conn:
                return await query(conn)

        return cls(read, pool)

    async def reason(self, caller: Caller) -> str:
        session: uuid.UUID | None = None
        if caller.session_id:
            try:
                session = uuid.UUID(caller.session_id)
            except ValueError:
                session = None

        async def query(conn: asyncpg.Connection) -> asyncpg.Record | None:
            row: asyncpg.Record | None = await conn.fetchrow(GATE_SWITCHES, session)
            return row

        return disabled_reason(await self._read(query), caller)

    async def require(self, caller: Caller) -> None:
        """Raise Disabled unless every switch is on for this caller."""
        why = await self.reason(caller)
        if why:
            raise Disabled(
                f"the story-graph tools are off: {why}; nothing was returned",
                {"disabled_reason": why},
            )

    @property
    def pool(self) -> asyncpg.Pool | None:
        """The primary's pool, or None when the gate reads through the replicas."""
        return self._pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
