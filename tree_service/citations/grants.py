"""The reads and links of citation grants the conversation needs while it cites (kept apart
from the citation store, which builds on the conversation)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg

from tree_service import rules
from tree_service.citations.anchors import Grant, tombstone_revoked
from tree_service.domain import Node

# FOR SHARE: a revocation (which locks the grant to update it) waits for citations being
# made under it, and every later citation sees it revoked.
SELECT_GRANT = """
SELECT id::text, tree_id::text, grantor, grantee, redactions, revoked_at IS NOT NULL AS revoked
FROM citation_authorizations WHERE id = $1 FOR SHARE
"""

INSERT_LINK = """
INSERT INTO authorized_citations (authorization_id, node_id, position) VALUES ($1, $2, $3)
"""


async def grant_for_citation(conn: asyncpg.Connection, grant_id: str, field: str) -> Grant | None:
    row = await conn.fetchrow(SELECT_GRANT, rules.parse_id(grant_id, field))
    if row is None:
        return None
    return Grant(
        row["id"],
        row["tree_id"],
        row["grantor"],
        row["grantee"],
        tuple(row["redactions"]),
        row["revoked"],
    )


async def link_authorized(
    conn: asyncpg.Connection, node_id: str, citations: Sequence[dict[str, Any]]
) -> None:
    """Record which of a new node's citations were made under a grant."""
    for position, citation in enumerate(citations):
        if citation.get("authorization_id"):
            await conn.execute(
                INSERT_LINK,
                uuid.UUID(citation["authorization_id"]),
                uuid.UUID(node_id),
                position,
            )


REVOKED_AMONG = """
SELECT id::text FROM citation_authorizations
WHERE id = any($1::uuid[]) AND revoked_at IS NOT NULL
"""


async def revoked_among(conn: asyncpg.Connection | asyncpg.Pool, grant_ids: set[str]) -> set[str]:
    """Which of `grant_ids` are revoked (reads of immutable snapshots tombstone by these)."""
    if not grant_ids:
        return set()
    rows = await conn.fetch(REVOKED_AMONG, [uuid.UUID(g) for g in grant_ids])
    return {r["id"] for r in rows}


async def without_revoked(conn: asyncpg.Connection | asyncpg.Pool, nodes: list[Node]) -> list[Node]:
    """`nodes` with every citation made under a since-revoked grant read as a tombstone."""
    granted = {
        c["authorization_id"] for n in nodes for c in n.citations if c.get("authorization_id")
    }
    revoked = await revoked_among(conn, granted)
    if not revoked:
        return nodes
    return [
        dataclasses.replace(n, citations=tombstone_revoked(n.citations, revoked))
        if any(c.get("authorization_id") in revoked for c in n.citations)
        else n
        for n in nodes
    ]
