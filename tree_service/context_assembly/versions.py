"""The one read of context versions the conversation needs (kept apart from the assembly
store, which builds on the conversation)."""

from __future__ import annotations

import asyncpg

from tree_service import rules

NODE_OF_VERSION = "SELECT node_id::text FROM context_versions WHERE id = $1"


async def node_of_version(conn: asyncpg.Connection, version_id: str, field: str) -> str | None:
    """The node a context version was assembled for; None when there is no such version."""
    found: str | None = await conn.fetchval(NODE_OF_VERSION, rules.parse_id(version_id, field))
    return found
