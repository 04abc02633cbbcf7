"""Context assembly on the primary: caller-written summaries, and contexts assembled and
recorded as immutable versions."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from mirrortree.scopes import ScopeValue
from tree_service import canon_projection, rules
from tree_service.citations.grants import revoked_among
from tree_service.commitments import HOLDING_KINDS, commitment_from_row, effect_scope, holds_in
from tree_service.context_assembly import layers, queries
from tree_service.context_assembly.layers import (
    Assembled,
    Budget,
    Fact,
    Fragment,
    Memory,
    Summary,
)
from tree_service.domain import CanonicalScope, Node, Realm
from tree_service.errors import InvalidInput, NotFound, RevisionConflict
from tree_service.nodes.store import NodeStore

MAX_PATH = 1_000_000  # a path is read whole: every ancestor belongs to the context


@dataclass(frozen=True)
class StoredSummary:
    subject: str
    version: int
    text: str
    token_estimate: int
    written_by: str
    created_at: datetime


@dataclass(frozen=True)
class NewSummary:
    subject: str
    text: str
    expected_version: int
    written_by: str
    token_estimate: int


@dataclass(frozen=True)
class ContextRequest:
    node_id: str
    budget: Budget
    boundaries: tuple[str, ...]
    fragments: tuple[Fragment, ...]
    parent_chain: int


@dataclass(frozen=True)
class ContextVersion:
    id: str
    node_id: str
    budget: int
    token_budget: int
    assembled: Assembled
    created_at: datetime


def _world_canon(node: Node, project: str | None) -> str | None:
    """The scope of the canon of the node's world, whose accepted world memory it remembers."""
    if node.realm is not Realm.WORLD:
        return None
    return canon_projection.canon_scope(CanonicalScope.WORLD_CANON, node.world or "", project).key


class ContextStore:
    """Summaries and context versions of trees."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def record_summary(conn: asyncpg.Connection, new: NewSummary) -> StoredSummary:
        parsed = layers.parse_subject(new.subject)
        if parsed is None:
            raise InvalidInput.one(
                "subject", "must be node:<id>, tool:<id>:<index> or citation:<id>:<index>"
            )
        kind, node_id, index = parsed
        node = await NodeStore.load(conn, node_id, "subject")
        held = {"tool": len(node.tool_trace), "citation": len(node.citations)}.get(kind)
        if index is not None and held is not None and index >= held:
            raise InvalidInput.one(
                "subject",
                f"node {node.id!r} holds {held} {kind} item(s); index {index} is past them",
            )
        latest = await conn.fetchval(queries.LATEST_SUMMARY_VERSION, new.subject)
        row = None
        if latest == new.expected_version:
            row = await conn.fetchrow(
                queries.INSERT_SUMMARY,
                new.subject,
                new.expected_version + 1,
                uuid.UUID(node.tree_id),
                uuid.UUID(node.id),
                new.text,
                new.token_estimate,
                new.written_by,
            )
        if row is None:  # moved on, before this read or concurrently with the insert
            current = await conn.fetchval(queries.LATEST_SUMMARY_VERSION, new.subject)
            raise RevisionConflict("summary", new.subject, new.expected_version, current)
        return StoredSummary(**dict(row))

    async def assemble(self, conn: asyncpg.Connection, request: ContextRequest) -> ContextVersion:
        """Assemble the node's context and record it as a new context version."""
        node_uuid = rules.parse_id(request.node_id, "node_id")
        path, _ = await NodeStore.path(conn, node_uuid, 0, MAX_PATH)
        if not path:
            raise NotFound("node", request.node_id)
        node = path[-1]
        on_path = {n.id: n for n in path}
        for i, fragment in enumerate(request.fragments):
            holder = on_path.get(fragment.node_id)
            if holder is None:
                raise InvalidInput.one(
                    f"fragments[{i}].node_id", "is not a node on the path of this context"
                )
            if all(a["id"] != fragment.attachment_id for a in holder.attachments):
                raise InvalidInput.one(
                    f"fragments[{i}].attachment_id", "is not an attachment of that node"
                )
        project = await conn.fetchval(queries.SELECT_TREE_PROJECT, uuid.UUID(node.tree_id))
        scope_key = ScopeValue.of_projects([project]).key if project else "global"
        memory = [
            Memory(r["id"], r["subject"], r["text"])
            for r in await conn.fetch(queries.MEMORY, scope_key, _world_canon(node, project))
        ]
        facts, unread = await self._facts(conn, node, project)
        items = layers.candidates(
            path,
            request.boundaries,
            memory,
            request.fragments,
            request.parent_chain,
            facts=facts,
            facts_unread=unread,
        )
        summaries = {
            r["subject"]: Summary(r["subject"], r["version"], r["text"], r["token_estimate"])
            for r in await conn.fetch(queries.LATEST_SUMMARIES, [i.subject for i in items])
        }
        assembled = layers.assemble(items, summaries, request.budget)
        version_id = uuid.uuid4()
        created_at = await conn.fetchval(
            queries.INSERT_CONTEXT_VERSION,
            version_id,
            uuid.UUID(node.tree_id),
            node_uuid,
            request.budget.code_points,
            request.budget.tokens,
            assembled.used,
            assembled.used_tokens,
            assembled.stored,
            assembled.digest,
        )
        return ContextVersion(
            str(version_id),
            node.id,
            request.budget.code_points,
            request.budget.tokens,
            assembled,
            created_at,
        )

    @staticmethod
    async def _facts(
        conn: asyncpg.Connection, node: Node, project: str | None
    ) -> tuple[list[Fact], bool]:
        """The facts in effect that hold for `node` (commitments.holds_in), oldest first, and
        whether older statements were left unread. They are read where canon of the node's
        realm is shared, as preferences are: the real realm's, or its world's, statements in
        the trees of its tree's project; in its own tree alone when that has no project (a
        fact stated in a conversation never becomes Global memory by itself)."""
        if effect_scope(node.realm, node.world) is None:
            return [], False  # nothing takes effect in a rehearsal
        kinds = sorted(kind.value for kind in HOLDING_KINDS)
        where = (node.realm.value, node.world, kinds, layers.MAX_FACT_STATEMENTS + 1)
        if project:
            rows = await conn.fetch(queries.FACTS_OF_PROJECT, project, *where)
        else:
            rows = await conn.fetch(queries.FACTS_OF_TREE, uuid.UUID(node.tree_id), *where)
        facts = []
        for row in reversed(rows[: layers.MAX_FACT_STATEMENTS]):
            stated = commitment_from_row(row)
            effect = holds_in(stated, node.realm, node.world)
            if effect is not None:
                facts.append(
                    Fact(stated.id, stated.node_id, stated.kind, effect.scope, stated.statement)
                )
        return facts, len(rows) > layers.MAX_FACT_STATEMENTS

    async def summary(self, subject: str, version: int) -> StoredSummary | None:
        """A summary as it is stored now (None once it is gone: a purge deletes it)."""
        row = await self._pool.fetchrow(queries.SELECT_SUMMARY, subject, version)
        return StoredSummary(**dict(row)) if row is not None else None

    async def get_version(self, version_id: str) -> ContextVersion:
        version_uuid = rules.parse_id(version_id, "context_version_id")
        row = await self._pool.fetchrow(queries.SELECT_CONTEXT_VERSION, version_uuid)
        if row is None:
            raise NotFound("context version", version_id)
        items = tuple(layers.item_from_json(i) for i in json.loads(row["items"]))
        # Recorded items are immutable, but a revoked grant stops every later read of what it
        # let in: those items read as tombstones.
        gone = await revoked_among(
            self._pool, {i.authorization_id for i in items if i.authorization_id}
        )
        items = tuple(
            layers.revoked(i, {"source_description": i.subject})
            if i.authorization_id in gone
            else i
            for i in items
        )
        return ContextVersion(
            row["id"],
            row["node_id"],
            row["budget"],
            row["token_budget"],
            Assembled(items, row["used"], row["used_tokens"], row["digest"]),
            row["created_at"],
        )
