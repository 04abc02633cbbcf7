"""Refusing writes that would build on purged content (imports nothing of the service's
stores, so that every write path can use it)."""

from __future__ import annotations

import uuid

import asyncpg

from tree_service.errors import PreconditionFailed

IS_PURGED = "SELECT 1 FROM purged_nodes WHERE node_id = $1"


async def expect_not_purged(conn: asyncpg.Connection, node_id: str, field: str) -> None:
    if await conn.fetchval(IS_PURGED, uuid.UUID(node_id)) is not None:
        raise PreconditionFailed(
            f"{field} {node_id} was purged: only its tombstone remains (GetPurgeTombstone), "
            "nothing can be added to, cite or reference it",
            {"field": field, "node_id": node_id, "state": "purged"},
        )
