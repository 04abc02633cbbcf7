"""The tree's event stream (WatchTree): events read from the tree_events table in position
order, woken by PostgreSQL notifications.

The table, not the notification, is the truth: positions are drawn per tree in commit order
(migration 0027), so "events after n" is a complete, duplicate-free resume point whatever was
missed while disconnected. One LISTEN connection per process wakes the streams of the tree a
notification names (NOTIFY is sent at commit, so a woken stream finds the event committed);
each stream also re-reads every POLL_S, so a lost listener connection only delays delivery.
That keeps idle streams off the database (no per-stream polling at a rate fit for a UI) without
a connection per stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from tree_service import rules as tree_rules
from tree_service.nodes.store import NodeStore
from tree_service.tasks import queries

CHANNEL = "tree_events"
POLL_S = 1.0
BATCH = 500
log = logging.getLogger("tree_service.watch")


@dataclass(frozen=True)
class TreeEvent:
    position: int
    kind: str
    subject_id: str
    detail_json: str
    created_at: datetime


@dataclass(frozen=True)
class Heartbeat:
    position: int
    caught_up: bool


class EventHub:
    """Wakes the streams watching a tree when a change to it commits."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._conn: Any = None
        self._guard = asyncio.Lock()

    def _notified(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        for waiter in self._waiters.get(payload, ()):
            waiter.set()

    async def _listen(self) -> None:
        async with self._guard:
            if self._conn is not None and not self._conn.is_closed():
                return
            try:
                conn = await self._pool.acquire()
                await conn.add_listener(CHANNEL, self._notified)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                log.warning("listening for tree events failed; streams poll", exc_info=True)
                return
            self._conn = conn

    async def _unlisten(self) -> None:
        async with self._guard:
            if self._waiters or self._conn is None:
                return
            conn, self._conn = self._conn, None
            with contextlib.suppress(Exception):
                await conn.remove_listener(CHANNEL, self._notified)
            with contextlib.suppress(Exception):
                await self._pool.release(conn)

    async def subscribe(self, tree_id: str) -> asyncio.Event:
        waiter = asyncio.Event()
        self._waiters.setdefault(tree_id, set()).add(waiter)
        await self._listen()
        return waiter

    async def unsubscribe(self, tree_id: str, waiter: asyncio.Event) -> None:
        waiters = self._waiters.get(tree_id)
        if waiters is not None:
            waiters.discard(waiter)
            if not waiters:
                del self._waiters[tree_id]
        if not self._waiters:
            await self._unlisten()

    async def events(
        self, tree_id: str, after: int, heartbeat_s: float
    ) -> AsyncIterator[TreeEvent | Heartbeat]:
        """Events of the tree after position `after`, then live; a heartbeat marks catching up
        and every `heartbeat_s` without events."""
        tree_uuid = tree_rules.parse_id(tree_id, "tree_id")
        tree_id = str(tree_uuid)  # the spelling notifications carry
        await NodeStore.expect_tree(self._pool, tree_id)
        waiter = await self.subscribe(tree_id)
        loop = asyncio.get_running_loop()
        try:
            position, caught_up = after, False
            last_sent = loop.time()
            while True:
                # Clear before reading: a notification during the read wakes the next wait.
                waiter.clear()
                rows = await self._pool.fetch(queries.EVENTS_AFTER, tree_uuid, position, BATCH)
                for row in rows:
                    position = row["seq"]
                    yield TreeEvent(
                        position,
                        row["kind"],
                        row["subject_id"],
                        row["detail"],
                        row["created_at"],
                    )
                if rows:
                    last_sent = loop.time()
                if len(rows) == BATCH:
                    continue
                if not caught_up:
                    caught_up = True
                    last_sent = loop.time()
                    yield Heartbeat(position, True)
                idle = loop.time() - last_sent
                if idle >= heartbeat_s:
                    last_sent = loop.time()
                    yield Heartbeat(position, False)
                    idle = 0.0
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), min(POLL_S, heartbeat_s - idle))
        finally:
            await self.unsubscribe(tree_id, waiter)
