"""Cross-person citation grants, their revocation (which leaves tombstones), and the reads of
a node's citations with what became of their sources."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from tree_service import rules
from tree_service.citations import anchors, queries
from tree_service.errors import NotFound, PreconditionFailed
from tree_service.nodes.store import NodeStore
from tree_service.stored_responses import strip_stored


@dataclass(frozen=True)
class StoredGrant:
    id: str
    tree_id: str
    grantor: str
    grantee: str
    redactions: tuple[str, ...]
    created_at: datetime
    revoked_at: datetime | None
    revoked_by: str | None


@dataclass(frozen=True)
class NewGrant:
    tree_id: str
    grantor: str
    grantee: str
    redactions: tuple[str, ...]


def _without_grant(nodes_json: str, grant_id: str) -> str:
    """Stored nodes (JSON) with the citations made under the grant turned into tombstones."""
    nodes = [
        {**n, "citations": list(anchors.tombstone_revoked(n.get("citations", []), {grant_id}))}
        for n in json.loads(nodes_json)
    ]
    return json.dumps(nodes, ensure_ascii=False)


def grant_from_row(row: asyncpg.Record) -> StoredGrant:
    values = dict(row)
    values["redactions"] = tuple(values["redactions"])
    return StoredGrant(**values)


class CitationStore:
    """Grants and citation reads on the primary."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def grant(conn: asyncpg.Connection, new: NewGrant) -> StoredGrant:
        tree_uuid = rules.parse_id(new.tree_id, "tree_id")
        owner = await conn.fetchval(queries.TREE_OWNER, tree_uuid)
        if owner is None:
            raise NotFound("tree", new.tree_id)
        if owner != new.grantor:
            raise PreconditionFailed(
                f"only the tree's owner may let others cite it; {new.grantor!r} is not its owner",
                {"field": "grantor"},
            )
        row = await conn.fetchrow(
            queries.INSERT_GRANT,
            uuid.uuid4(),
            tree_uuid,
            new.grantor,
            new.grantee,
            list(new.redactions),
        )
        return grant_from_row(row)

    @staticmethod
    async def revoke(
        conn: asyncpg.Connection, grant_id: str, revoked_by: str
    ) -> tuple[StoredGrant, int]:
        """Revoke a grant and turn every citation made under it into a tombstone, in the nodes
        and in every copy of them; the summaries written of those citations go."""
        grant_uuid = rules.parse_id(grant_id, "authorization_id")
        row = await conn.fetchrow(queries.LOCK_GRANT, grant_uuid)
        if row is None:
            raise NotFound("citation authorization", grant_id)
        if row["grantor"] != revoked_by:
            raise PreconditionFailed(
                f"only the grantor {row['grantor']!r} may revoke this authorization",
                {"field": "revoked_by"},
            )
        if row["revoked_at"] is not None:
            raise PreconditionFailed(
                f"authorization {grant_id!r} was already revoked by {row['revoked_by']!r}",
                {"field": "authorization_id"},
            )
        revoked = grant_from_row(await conn.fetchrow(queries.REVOKE_GRANT, grant_uuid, revoked_by))
        summarized: list[str] = []  # context summaries of the revoked citations
        for node in await conn.fetch(queries.GRANTED_NODES, grant_uuid):
            citations = json.loads(node["citations"])
            rewritten = anchors.tombstone_revoked(citations, {revoked.id})
            summarized += [
                anchors.citation_subject(str(node["id"]), position)
                for position, (old, new) in enumerate(zip(citations, rewritten, strict=True))
                if old != new
            ]
            await conn.execute(
                queries.REWRITE_CITATIONS, node["id"], json.dumps(rewritten, ensure_ascii=False)
            )
        await conn.execute(queries.DELETE_CITATION_SUMMARIES, summarized)
        # The copies: transplanted trees' origins, main-line snapshots, recorded contexts.
        await conn.execute(queries.NAME_FORGETTING, f"revocation {revoked.id}")
        for origin in await conn.fetch(queries.GRANTED_ORIGINS, revoked.id):
            path = _without_grant(origin["ancestor_path"], revoked.id)
            await conn.execute(queries.REWRITE_ORIGIN, origin["tree_id"], path)
        for version in await conn.fetch(queries.GRANTED_SNAPSHOTS, revoked.id):
            snapshot = _without_grant(version["snapshot"], revoked.id)
            await conn.execute(queries.REWRITE_SNAPSHOT, version["id"], snapshot)
        await conn.execute(queries.OMIT_GRANTED_ITEMS, revoked.id)
        # Responses stored before stripping began may hold the cited words; none may survive.
        await strip_stored(conn)
        return revoked, len(summarized)

    async def citations_of(self, node_id: str) -> list[tuple[dict[str, object], str]]:
        """A node's citations as they read now, each with the successor of its source ("" when
        the source was not superseded)."""
        async with self._pool.acquire() as conn:
            node = await NodeStore.load(conn, node_id, "node_id")
            cited = [uuid.UUID(str(c["node_id"])) for c in node.citations]
            successors = {
                r["cited"]: r["successor"] for r in await conn.fetch(queries.SUCCESSORS, cited)
            }
        read = []
        for citation in node.citations:
            successor = successors.get(str(citation["node_id"]), "")
            status = citation.get("status") or ("superseded" if successor else "")
            read.append(({**citation, "status": status}, successor))
        return read
