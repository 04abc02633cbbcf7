"""Citing, as every write that makes a node with citations does it (AskQuestion, EditQuestion,
a merge's question): the immutable snapshot of each cited range under its grant, the links of
citations made under a grant, and the tombstoning of citations whose grant was revoked since."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg

from tree_service import rules
from tree_service.citations import anchors
from tree_service.citations.anchors import Grant, tombstone_revoked
from tree_service.domain import CitationRequest, Node
from tree_service.errors import InvalidInput
from tree_service.nodes.store import NodeStore

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


async def snapshot_citations(
    conn: asyncpg.Connection, requested: tuple[CitationRequest, ...], owner_tree: str
) -> tuple[dict[str, Any], ...]:
    """Snapshot each cited range as it is now; the snapshot never changes afterwards."""
    if not requested:
        return ()
    tree = await NodeStore.tree(conn, owner_tree)
    owners = {tree.id: tree.owner}  # most citations stay in one or two trees
    snapshots: list[dict[str, Any]] = []
    cited_length = 0
    for i, citation in enumerate(requested):
        cited = await NodeStore.load(conn, citation.node_id, f"citations[{i}].node_id")
        await NodeStore.expect_not_purged(conn, cited.id, f"citations[{i}].node_id")
        if cited.tree_id not in owners:
            owners[cited.tree_id] = (await NodeStore.tree(conn, cited.tree_id)).owner
        same_owner = owners[cited.tree_id] == tree.owner
        redactions = None
        if citation.authorization_id:
            field = f"citations[{i}].authorization_id"
            if same_owner:
                raise InvalidInput.one(field, "is only for citing another person's tree")
            grant = await grant_for_citation(conn, citation.authorization_id, field)
            redactions = anchors.expect_grant(
                grant,
                citation.authorization_id,
                cited_tree=cited.tree_id,
                cited_owner=owners[cited.tree_id],
                citing_owner=tree.owner,
                field=field,
            ).redactions
        snapshot = anchors.citation_snapshot(
            i, citation, cited, same_owner, cited_length, redactions=redactions
        )
        cited_length += len(snapshot["snapshot"])
        snapshots.append(snapshot)
    return tuple(snapshots)


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
