"""The node store: what every aggregate shares about trees and nodes — loading them, appending a
node, paths, the branch a node is in, the purge guard — and the reads behind GetTree, GetNode,
GetPath and ListNodes. An aggregate's own writes to a node's columns (adoption, a bud's end, a
comparison's details, a purge's clearing) stay with the aggregate whose rule they carry out.

Writes take the caller's connection (they run inside its idempotent write's transaction);
reads of whole nodes for an RPC take the pool. A node read for an RPC is placed in its branch
(`branch_id`, `branch_state`), so that an archived or purged branch shows on every node in it.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg

from tree_service import rules
from tree_service.domain import (
    AnswerLifecycle,
    AnswerState,
    Attachment,
    BranchState,
    ContinuationKind,
    Generated,
    NewTree,
    Node,
    NodeKind,
    RealmChoice,
    Tree,
)
from tree_service.errors import NotFound, PreconditionFailed
from tree_service.nodes import queries
from tree_service.nodes.rows import generated_json, node_from_row, tree_from_row


def _placed(node: Node, branch_id: str | None, state: str | None) -> Node:
    """A node placed by a read (no state: no moved branch holds it, so it reads as written)."""
    return dataclasses.replace(node, branch_id=branch_id, branch_state=state)


class NodeStore:
    """Trees and their nodes on the primary."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    # ---- trees ----------------------------------------------------------------------------

    @staticmethod
    async def create_tree(conn: asyncpg.Connection, new: NewTree) -> Tree:
        row = await conn.fetchrow(
            queries.INSERT_TREE,
            uuid.uuid4(),
            new.title,
            new.owner,
            new.project_id,
            new.default_realm.value,
            new.default_world,
        )
        return tree_from_row(row)

    @staticmethod
    async def tree(
        conn: asyncpg.Connection, tree_id: str, field: str = "tree_id", *, held: bool = False
    ) -> Tree:
        """The tree `field` names; NotFound when there is none. `held`: its row is held
        against a purge until the transaction ends (a write copying its nodes)."""
        statement = queries.SELECT_TREE_HELD if held else queries.SELECT_TREE
        row = await conn.fetchrow(statement, rules.parse_id(tree_id, field))
        if row is None:
            raise NotFound("tree", tree_id)
        return tree_from_row(row)

    async def get_tree(self, tree_id: str) -> Tree:
        async with self._pool.acquire() as conn:
            return await self.tree(conn, tree_id)

    @staticmethod
    async def expect_tree(
        conn: asyncpg.Connection | asyncpg.Pool, tree_id: str, field: str = "tree_id"
    ) -> uuid.UUID:
        """The id of the tree `field` names; NotFound when there is none."""
        tree_uuid = rules.parse_id(tree_id, field)
        if await conn.fetchval(queries.TREE_EXISTS, tree_uuid) is None:
            raise NotFound("tree", tree_id)
        return tree_uuid

    # ---- nodes ----------------------------------------------------------------------------

    @staticmethod
    async def load(conn: asyncpg.Connection, node_id: str, field: str) -> Node:
        """The node `field` names; NotFound when there is none."""
        row = await conn.fetchrow(queries.SELECT_NODE, rules.parse_id(node_id, field))
        if row is None:
            raise NotFound("node", node_id)
        return node_from_row(row)

    @staticmethod
    async def load_many(conn: asyncpg.Connection, ids: Sequence[uuid.UUID]) -> dict[str, Node]:
        """The nodes of `ids` that exist, by id."""
        return {r["id"]: node_from_row(r) for r in await conn.fetch(queries.SELECT_NODES, ids)}

    @staticmethod
    async def exists(conn: asyncpg.Connection | asyncpg.Pool, node_id: uuid.UUID) -> bool:
        return await conn.fetchval(queries.NODE_EXISTS, node_id) is not None

    @staticmethod
    async def purged_among(conn: asyncpg.Connection, ids: list[uuid.UUID]) -> set[str]:
        """Which of the nodes `ids` were purged."""
        return {r[0] for r in await conn.fetch(queries.PURGED_AMONG, ids)}

    @staticmethod
    async def expect_not_purged(conn: asyncpg.Connection, node_id: str, field: str) -> None:
        """Refuse a write that would build on purged content."""
        if await conn.fetchval(queries.IS_PURGED, uuid.UUID(node_id)) is not None:
            raise PreconditionFailed(
                f"{field} {node_id} was purged: only its tombstone remains (GetPurgeTombstone), "
                "nothing can be added to, cite or reference it",
                {"field": field, "node_id": node_id, "state": "purged"},
            )

    @staticmethod
    async def append(
        conn: asyncpg.Connection,
        *,
        tree_id: str,
        parent: Node | None,
        kind: NodeKind,
        text: str,
        realm: RealmChoice,
        conditions: dict[str, Any] | None = None,
        attachments: tuple[Attachment, ...] = (),
        citations: tuple[dict[str, Any], ...] = (),
        lineage: tuple[uuid.UUID, str | None, int] | None = None,
        answer_state: AnswerState | None = None,
        extends_answer_id: str | None = None,
        continuation_kind: ContinuationKind | None = None,
        generated: Generated | None = None,
        context_version_id: str | None = None,
    ) -> tuple[Node, int]:
        """Insert one node under `parent` (already validated by the caller's rules); returns it
        and the tree's revision.

        A node is also recorded as a story-graph message source unless it is a bud still
        streaming (its text is not final until it ends) or an observation.
        """
        tree_uuid = rules.parse_id(tree_id, "tree_id")
        # Known here unless the node takes the tree's default realm (None: the statement does).
        node_realm: str | None = None
        world: str | None = None
        if realm.realm is not None or parent is not None:
            chosen, world = rules.node_realm(realm, parent, RealmChoice(None, None))
            node_realm = chosen.value
        node_id = uuid.uuid4()
        lineage_id, version_of, version = lineage or (
            (node_id, None, 1) if kind is NodeKind.QUESTION else (None, None, 1)
        )
        made = generated or Generated(conditions=conditions or {})
        conditions_json, summary, evidence, tool_trace = generated_json(made)
        is_question = kind is NodeKind.QUESTION
        row = await conn.fetchrow(
            queries.APPEND_NODE,
            node_id,
            tree_uuid,
            rules.parse_id(parent.id, "parent_id") if parent else None,
            kind.value,
            node_realm,
            world,
            text,
            conditions_json,
            json.dumps([dataclasses.asdict(a) for a in attachments], ensure_ascii=False),
            json.dumps(list(citations), ensure_ascii=False),
            lineage_id,
            rules.parse_id(version_of, "question_id") if version_of else None,
            version,
            answer_state.value if answer_state else None,
            rules.parse_id(extends_answer_id, "extends_answer_id") if extends_answer_id else None,
            continuation_kind.value if continuation_kind else None,
            summary,
            evidence,
            tool_trace,
            uuid.UUID(context_version_id) if context_version_id else None,
            lineage_id if is_question and lineage_id else node_id,
            version if is_question else 1,
            "user" if is_question else "assistant",
        )
        if row is None:
            raise NotFound("tree", tree_id)
        if parent is not None:  # checked once the statement holds the tree, as a purge does
            await NodeStore.expect_not_purged(conn, parent.id, "parent")
        return node_from_row(row), row["tree_revision"]

    # ---- paths and placements -------------------------------------------------------------

    @staticmethod
    async def path(
        conn: asyncpg.Connection, node_id: uuid.UUID, offset: int, limit: int
    ) -> tuple[list[Node], int]:
        """One page of the path root → node (as stored, not placed), and the path's length;
        ([], 0) when there is no such node."""
        rows = await conn.fetch(queries.SELECT_PATH, node_id, offset, limit)
        if rows:
            return [node_from_row(r) for r in rows], rows[0]["path_length"]
        if offset == 0:  # from the root, nothing: no such node
            return [], 0
        first = await conn.fetchrow(queries.SELECT_PATH, node_id, 0, 1)  # past the end
        return [], first["path_length"] if first is not None else 0

    @staticmethod
    async def on_path_to(
        conn: asyncpg.Connection, leaf_id: uuid.UUID, ids: Sequence[uuid.UUID]
    ) -> set[str]:
        """Which of `ids` lie on the path root → leaf (the leaf itself included)."""
        return {r["id"] for r in await conn.fetch(queries.ON_PATH_TO, leaf_id, ids)}

    @staticmethod
    async def place(conn: asyncpg.Connection | asyncpg.Pool, nodes: Sequence[Node]) -> list[Node]:
        """The nodes with the branch each is in and that branch's state."""
        rows = await conn.fetch(queries.PLACEMENTS, [uuid.UUID(n.id) for n in nodes])
        placed = {r["id"]: (r["branch_id"], r["state"]) for r in rows}
        return [_placed(n, *placed[n.id]) for n in nodes]

    @staticmethod
    async def branch_state(conn: asyncpg.Connection, node_id: str) -> BranchState:
        """The state of the branch `node_id` is in (active when no moved branch holds it)."""
        row = await conn.fetchrow(queries.PLACEMENTS, [uuid.UUID(node_id)])
        return BranchState(row["state"]) if row["state"] else BranchState.ACTIVE

    # ---- reads for an RPC, placed in their branches ---------------------------------------

    async def get_node(self, node_id: str) -> Node:
        async with self._pool.acquire() as conn:
            node = await self.load(conn, node_id, "node_id")
            return (await self.place(conn, [node]))[0]

    async def get_nodes(self, node_ids: Sequence[str]) -> dict[str, Node]:
        """The nodes of `node_ids` that exist, each placed in its branch, by id."""
        async with self._pool.acquire() as conn:
            found = await self.load_many(conn, [uuid.UUID(n) for n in node_ids])
            placed = await self.place(conn, list(found.values()))
        return {n.id: n for n in placed}

    async def get_path(self, node_id: str, offset: int, limit: int) -> tuple[list[Node], int]:
        """One page of the path root → node, each placed in its branch, and the path's length."""
        node_uuid = rules.parse_id(node_id, "node_id")
        async with self._pool.acquire() as conn:
            nodes, length = await self.path(conn, node_uuid, offset, limit)
            if length == 0:
                raise NotFound("node", node_id)
            if not nodes:
                return nodes, length
            return await self.place(conn, nodes), length

    async def list_nodes(
        self,
        tree_id: str,
        after_ordinal: int,
        limit: int,
        include_archived: bool,
        lifecycles: Sequence[AnswerLifecycle],
    ) -> list[Node]:
        tree_uuid = rules.parse_id(tree_id, "tree_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(
                queries.LIST_NODES,
                tree_uuid,
                after_ordinal,
                limit,
                include_archived,
                [v.value for v in lifecycles],
            )
            if not rows:
                await self.expect_tree(conn, tree_id)
        return [_placed(node_from_row(r), r["branch_id"], r["branch_state"]) for r in rows]
