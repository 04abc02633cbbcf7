"""Purging an archived branch (T16): the impact preview, and the purge that does what the
preview listed as the caller chose, leaving tombstones where content was.

The branch's own content, records and history always go. Of the copies elsewhere the caller
chooses any subset (seed 001: the user decides by impact scope); a chosen copy becomes a
tombstone or a retraction, an unchosen one stays, marked as resting on purged content.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import asyncpg

from mirrortree.v1 import common_pb2, purge_pb2
from tree_service import rules as tree_rules
from tree_service.citations.anchors import citation_subject
from tree_service.context_assembly.layers import memory_subject
from tree_service.domain import BranchState, Node
from tree_service.errors import InvalidInput, NotFound, PreconditionFailed
from tree_service.lifecycle import purge_queries as q
from tree_service.lifecycle import queries as lifecycle_queries
from tree_service.lifecycle.purge_impact import TOMBSTONE, Scope, impact_of
from tree_service.lifecycle.purge_rules import (
    PurgePreviewStale,
    Quotes,
    Tombstone,
    expect_token_for,
    in_purged_branch,
    parse_token,
    purged_citation,
    purged_entry,
    purged_item,
    source_purged,
    token_of,
)
from tree_service.nodes.store import NodeStore
from tree_service.stored_responses import strip_stored


@dataclass(frozen=True)
class PurgeOrder:
    tree_id: str
    node_id: str
    preview_token: str
    choice: purge_pb2.PurgeChoice
    purged_by: str
    reason: str


def _tombstone(row: asyncpg.Record) -> Tombstone:
    return Tombstone(
        row["id"], row["branch_id"], row["tree_id"], row["purged_by"], row["reason"],
        row["purged_at"],
    )  # fmt: skip


class PurgeStore:
    """Purge previews, purges, and the tombstones they leave."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def _archived(conn: asyncpg.Connection, node: Node, state: str) -> None:
        if state == BranchState.PURGED.value:
            row = await conn.fetchrow(q.SELECT_PURGE, uuid.UUID(node.id))
            done = _tombstone(row) if row is not None else None
            raise PreconditionFailed(
                f"branch {node.id} is purged already" + (f" (by {done.purged_by})" if done else ""),
                {"branch_id": node.id, "state": state},
            )
        if state != BranchState.ARCHIVED.value:
            raise PreconditionFailed(
                f"branch {node.id} is {state}: only an archived branch can be purged; archive "
                "it first (SetBranchState ARCHIVED)",
                {"branch_id": node.id, "state": state},
            )

    async def preview(
        self, node_id: str, include_copies: bool
    ) -> tuple[purge_pb2.PurgeImpact, str]:
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            node = await NodeStore.load(conn, node_id, "node_id")
            row = await conn.fetchrow(lifecycle_queries.SELECT_BRANCH, uuid.UUID(node.id))
            state, revision = (row["state"], row["revision"]) if row else ("active", 1)
            await self._archived(conn, node, state)
            impact, _ = await impact_of(conn, node, revision, include_copies)
        return impact, token_of(impact, include_copies)

    async def purge(self, conn: asyncpg.Connection, order: PurgeOrder) -> purge_pb2.PurgeResponse:
        """Purge as previewed, or refuse and write nothing; the same preview purged again
        answers the first purge's response."""
        token = parse_token(order.preview_token)
        assert token is not None  # checked with the request
        node = await NodeStore.load(conn, order.node_id, "node_id")
        if node.tree_id != order.tree_id:
            raise InvalidInput.one(
                "tree_id", f"node {node.id} is in tree {node.tree_id}, not in {order.tree_id}"
            )
        expect_token_for(token, node.id, order.choice.transplant_copies)
        node_uuid = uuid.UUID(node.id)
        await conn.execute(lifecycle_queries.OPEN_BRANCH, node_uuid, uuid.UUID(node.tree_id))
        locked = await conn.fetchrow(lifecycle_queries.LOCK_BRANCH, node_uuid)
        if locked["state"] == BranchState.PURGED.value:
            done = await conn.fetchrow(q.SELECT_PURGE, node_uuid)
            if done is not None and done["preview_token"] == order.preview_token:
                return purge_pb2.PurgeResponse.FromString(done["response"])
        await self._archived(conn, node, locked["state"])
        # Appends to the tree wait for this lock, so that what is read next is what is purged.
        await conn.execute(q.LOCK_TREES, [uuid.UUID(node.tree_id)])
        impact, scope = await impact_of(conn, node, locked["revision"], token.include_copies)
        if token_of(impact, token.include_copies) != order.preview_token:
            raise PurgePreviewStale(node.id, locked["revision"])
        purge_id = str(uuid.uuid4())
        response = purge_pb2.PurgeResponse(impact=impact)
        purged_at = await conn.fetchval(
            q.INSERT_PURGE,
            uuid.UUID(purge_id),
            node_uuid,
            uuid.UUID(node.tree_id),
            order.preview_token,
            order.purged_by,
            order.reason,
            b"",
        )
        done_stone = Tombstone(
            purge_id, node.id, node.tree_id, order.purged_by, order.reason, purged_at
        )
        await _apply(conn, impact, scope, done_stone, order.choice)
        response.tombstone.CopyFrom(done_stone.to_proto())
        # Kept to answer a retry, it names retracted preferences by id (the preview named their
        # subjects, which the retraction forgets).
        for preference in response.impact.preferences:
            preference.subject = ""
        await conn.execute(
            q.SET_PURGE_RESPONSE,
            uuid.UUID(purge_id),
            response.SerializeToString(deterministic=True),
        )
        return response

    async def tombstone(self, node_id: str) -> purge_pb2.PurgeTombstone:
        node_uuid = tree_rules.parse_id(node_id, "node_id")
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(q.TOMBSTONE_OF, node_uuid)
            if row is None:
                if not await NodeStore.exists(conn, node_uuid):
                    raise NotFound("node", node_id)
                raise NotFound("purge tombstone", node_id)
        return _tombstone(row).to_proto(str(node_uuid))


async def _apply(
    conn: asyncpg.Connection,
    impact: purge_pb2.PurgeImpact,
    scope: Scope,
    stone: Tombstone,
    choice: purge_pb2.PurgeChoice,
) -> None:
    """Do what `impact` lists, as `choice` says for the copies elsewhere."""
    ids = scope.ids
    await conn.execute(q.NAME_PURGE, stone.purge_id)
    await conn.execute(q.INSERT_PURGED_NODES, ids, uuid.UUID(stone.purge_id))
    for statement in OWN_CONTENT:
        await conn.execute(statement, ids)
    await conn.execute(q.CLEAR_TRANSITIONS, [uuid.UUID(r) for r in scope.branch_roots])
    cited = await _apply_citations(conn, impact, stone, choice.citations)
    await _apply_canon(conn, impact, scope, stone, cited, chosen=choice.canon_entries)
    await _apply_graph(conn, impact, scope, stone, choice.graph_facts)
    if choice.conclusions:
        for t in impact.transitions:
            if not t.inside:
                await conn.execute(
                    q.RETRACT_TRANSITION, uuid.UUID(t.branch_id), t.revision, stone.retraction()
                )
    await _apply_origins(conn, impact, scope, stone, choice.transplant_origins)
    # Responses stored before stripping began hold words; none may survive the purge.
    await strip_stored(conn)
    await _apply_contexts(conn, impact, choice)
    roots = [(stone.branch_id, stone.tree_id)]
    roots += [(b, stone.tree_id) for b in impact.sub_branch_ids]
    roots += sorted(scope.copy_roots.items())
    for root, tree in roots:
        await _move_to_purged(conn, root, tree, stone)
    for tree_uuid in scope.trees:
        await conn.execute(q.BUMP_TREE, tree_uuid)


# The purged nodes' own content and records (user_content.CONTENT, treatment PURGED/CLEARED).
OWN_CONTENT = (
    q.CLEAR_NODES,
    q.CLEAR_CHUNKS,
    q.CLEAR_TASK_REPORTS,
    q.CLEAR_TASKS,
    q.CLEAR_SOURCE_REVISIONS,
    q.CLEAR_SUMMARIES,
    q.CLEAR_COMMITMENTS,
    q.CLEAR_RULINGS,
    q.CLEAR_EFFECTS,
    q.CLEAR_INVITATIONS,
)


def _citation_subjects(impact: purge_pb2.PurgeImpact) -> list[str]:
    return [citation_subject(c.citing_node_id, c.position) for c in impact.citations]


async def _apply_citations(
    conn: asyncpg.Connection, impact: purge_pb2.PurgeImpact, stone: Tombstone, chosen: bool
) -> dict[str, list[dict[str, object]]]:
    """Citations pointing in: tombstones if chosen (their summaries go too), else kept and
    marked. Returns each citing node's citations as rewritten."""
    cited: dict[str, set[int]] = {}
    for c in impact.citations:
        cited.setdefault(c.citing_node_id, set()).add(c.position)
    mark = purged_citation if chosen else source_purged
    rewritten: dict[str, list[dict[str, object]]] = {}
    for citing, positions in sorted(cited.items()):
        stored = json.loads(await conn.fetchval(q.SELECT_CITATIONS, uuid.UUID(citing)))
        rewritten[citing] = [mark(c, stone) if i in positions else c for i, c in enumerate(stored)]
        await conn.execute(q.REWRITE_CITATIONS, uuid.UUID(citing), json.dumps(rewritten[citing]))
    if chosen:
        await conn.execute(q.CLEAR_CITATION_SUMMARIES, _citation_subjects(impact))
    return rewritten


async def _apply_canon(
    conn: asyncpg.Connection,
    impact: purge_pb2.PurgeImpact,
    scope: Scope,
    stone: Tombstone,
    cited: dict[str, list[dict[str, object]]],
    *,
    chosen: bool,
) -> None:
    """Main-line entries of purged nodes lose their content if chosen, else read as lying in
    the purged branch; entries of citing nodes follow their citations. Chosen, the candidates
    proposed with a version holding purged nodes lose their content too (whether it quotes
    them or not cannot be told from a paraphrase)."""
    for entry in impact.canon_entries:
        if chosen and entry.node_ids:
            await conn.execute(
                q.TOMBSTONE_CANDIDATES, uuid.UUID(entry.version_id), stone.retraction()
            )
        snapshot = json.loads(await conn.fetchval(q.SELECT_SNAPSHOT, uuid.UUID(entry.version_id)))
        for i, node in enumerate(snapshot):
            if node["id"] in scope.nodes:
                snapshot[i] = (
                    purged_entry(node, stone.branch_id)
                    if chosen
                    else {**node, **in_purged_branch(stone.branch_id)}
                )
            elif node["id"] in cited:
                snapshot[i] = {**node, "citations": cited[node["id"]]}
        await conn.execute(q.REWRITE_SNAPSHOT, uuid.UUID(entry.version_id), json.dumps(snapshot))


async def _apply_graph(
    conn: asyncpg.Connection,
    impact: purge_pb2.PurgeImpact,
    scope: Scope,
    stone: Tombstone,
    chosen: bool,
) -> None:
    """Memory: source references tombstoned and what rests on them retracted if chosen (a
    title kept unless it quotes the content), else the references only say that their message
    was purged."""
    record = json.dumps(stone.record())
    quotes = Quotes(scope.texts)
    for g in impact.graph_objects:
        type_name = common_pb2.ObjectType.Name(g.object_type).lower()
        if not chosen:
            if g.action == TOMBSTONE:
                await conn.execute(q.MARK_REFERENCE, g.result_id, g.object_id, record)
        elif g.action == TOMBSTONE:
            await conn.execute(q.TOMBSTONE_REFERENCE, g.result_id, g.object_id, record)
        else:
            key = (g.result_id, type_name, g.object_id)
            title = await conn.fetchval(q.OBJECT_TITLE, *key)
            await conn.execute(
                q.RETRACT_OBJECT, *key, stone.retraction(), record, quotes(title or "")
            )
            if type_name == "leaf_fact":
                await conn.execute(q.RETRACT_LEAF, g.result_id, g.object_id, stone.retraction())
    if chosen:
        for p in impact.preferences:
            await conn.execute(q.RETRACT_PREFERENCE, p.preference_id, stone.retraction())


async def _apply_origins(
    conn: asyncpg.Connection,
    impact: purge_pb2.PurgeImpact,
    scope: Scope,
    stone: Tombstone,
    chosen: bool,
) -> None:
    """Exports: a transplanted tree's origin keeps its purged ancestors' frames if chosen, else
    their words, read as lying in the purged branch."""
    for origin in impact.transplant_origins:
        tree = uuid.UUID(origin.tree_id)
        path = json.loads(await conn.fetchval(q.SELECT_ANCESTORS, tree))
        path = [
            (
                purged_entry(n, stone.branch_id)
                if chosen
                else {**n, **in_purged_branch(stone.branch_id)}
            )
            if n["id"] in scope.nodes
            else n
            for n in path
        ]
        await conn.execute(q.REWRITE_ANCESTORS, tree, json.dumps(path))


async def _apply_contexts(
    conn: asyncpg.Connection, impact: purge_pb2.PurgeImpact, choice: purge_pb2.PurgeChoice
) -> None:
    """Recorded contexts: the purged nodes' items read as omitted, and so do the items of
    citations pointing in, and of the preferences retracted, when those are chosen."""
    kept = set() if choice.citations else set(_citation_subjects(impact))
    if not choice.graph_facts:
        kept |= {memory_subject(p.preference_id) for p in impact.preferences}
    items: dict[str, set[str]] = {}
    for copy in impact.context_copies:
        if copy.subject not in kept:
            items.setdefault(copy.context_version_id, set()).add(copy.subject)
    for version_id, subjects in sorted(items.items()):
        stored = json.loads(await conn.fetchval(q.SELECT_CONTEXT_ITEMS, uuid.UUID(version_id)))
        stored = [purged_item(i) if i.get("subject") in subjects else i for i in stored]
        await conn.execute(q.REWRITE_CONTEXT_ITEMS, uuid.UUID(version_id), json.dumps(stored))


async def _move_to_purged(conn: asyncpg.Connection, root: str, tree: str, stone: Tombstone) -> None:
    root_uuid = uuid.UUID(root)
    await conn.execute(q.OPEN_PURGED_BRANCH, root_uuid, uuid.UUID(tree))
    current = await conn.fetchrow(lifecycle_queries.LOCK_BRANCH, root_uuid)
    revision = await conn.fetchval(q.PURGE_BRANCH, root_uuid)
    await conn.execute(
        lifecycle_queries.INSERT_TRANSITION,
        root_uuid,
        revision,
        current["state"],
        BranchState.PURGED.value,
        stone.purged_by,
        stone.reason,
        None,
        None,
        None,
    )
