"""Branch states on the primary, and node reads placed in their branches."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence

import asyncpg

from tree_service import rules as tree_rules
from tree_service.conversation import queries as conversation_queries
from tree_service.conversation.rows import node_from_row
from tree_service.conversation.store import ConversationStore
from tree_service.domain import Node, NodeKind
from tree_service.errors import NotFound, RevisionConflict
from tree_service.lifecycle import queries, rules
from tree_service.lifecycle.rules import (
    AnswerLifecycle,
    Branch,
    BranchState,
    StateChange,
    Transition,
)
from tree_service.store import TreeStore

# Nodes of tree $1 after ordinal $2, at most $3, placed in their branches; archived branches'
# nodes only when $4; only answers in lifecycles $5 when it is not empty.
LIST_NODES = (
    "WITH RECURSIVE "
    + queries.PLACED
    + "SELECT "
    + conversation_queries.NODE_COLUMNS
    + """, p.branch_id::text AS branch_id, p.state AS branch_state
FROM nodes n LEFT JOIN placed p ON p.id = n.id
WHERE n.tree_id = $1 AND n.ordinal > $2
  AND ($4 OR p.state IS NULL OR p.state NOT IN ('archived', 'purged'))
  AND (cardinality($5::text[]) = 0 OR ("""
    + queries.LIFECYCLE
    + """) = any($5::text[]))
ORDER BY n.ordinal
LIMIT $3
"""
)


def transition_from_row(row: asyncpg.Record) -> Transition:
    return Transition(
        revision=row["revision"],
        from_state=BranchState(row["from_state"]),
        to_state=BranchState(row["to_state"]),
        changed_by=row["changed_by"],
        reason=row["reason"],
        changed_at=row["created_at"],
        summary=row["summary"],
        open_question_ids=tuple(row["open_ids"]),
        candidate_answer_ids=tuple(row["candidate_ids"]),
    )


async def _branches(conn: asyncpg.Connection, rows: Sequence[asyncpg.Record]) -> list[Branch]:
    """Branch rows with their transitions."""
    history: dict[str, list[Transition]] = {}
    ids = [uuid.UUID(r["node_id"]) for r in rows]
    for t in await conn.fetch(queries.SELECT_TRANSITIONS, ids):
        history.setdefault(t["node_id"], []).append(transition_from_row(t))
    return [
        Branch(
            node_id=r["node_id"],
            tree_id=r["tree_id"],
            state=BranchState(r["state"]),
            revision=r["revision"],
            transitions=tuple(history.get(r["node_id"], ())),
        )
        for r in rows
    ]


def _placed(node: Node, branch_id: str | None, state: str | None) -> Node:
    """A node placed by a read (no state: no moved branch holds it, so it reads as written)."""
    return dataclasses.replace(node, branch_id=branch_id, branch_state=state)


class LifecycleStore:
    """Branch transitions and the reads that place nodes in their branches."""

    def __init__(self, core: TreeStore, conversation: ConversationStore) -> None:
        self._pool = core.pool
        self._conversation = conversation

    @staticmethod
    async def _branch(conn: asyncpg.Connection, node: Node) -> Branch:
        row = await conn.fetchrow(queries.SELECT_BRANCH, uuid.UUID(node.id))
        if row is None:  # never moved: active at its first revision
            return Branch(node.id, node.tree_id, BranchState.ACTIVE, 1)
        return (await _branches(conn, [row]))[0]

    async def set_state(self, conn: asyncpg.Connection, change: StateChange) -> Branch:
        """Move a branch at its expected revision; of concurrent moves one applies."""
        node = await ConversationStore.load(conn, change.node_id, "node_id")
        node_uuid = uuid.UUID(node.id)
        await conn.execute(queries.OPEN_BRANCH, node_uuid, uuid.UUID(node.tree_id))
        locked = await conn.fetchrow(queries.LOCK_BRANCH, node_uuid)
        if locked["revision"] != change.expected_revision:
            raise RevisionConflict("branch", node.id, change.expected_revision, locked["revision"])
        current = BranchState(locked["state"])
        rules.expect_transition(node.id, current, change.state)
        open_ids: list[uuid.UUID] | None = None
        candidate_ids: list[uuid.UUID] | None = None
        if change.state is BranchState.CONCLUDED:
            open_ids, candidate_ids = [], []
            for row in await conn.fetch(queries.BRANCH_OPEN_ENDS, node_uuid):
                if row["kind"] == NodeKind.QUESTION.value and row["unanswered"]:
                    open_ids.append(row["id"])
                elif row["lifecycle"] == AnswerLifecycle.CANDIDATE.value:
                    candidate_ids.append(row["id"])
        revision = await conn.fetchval(queries.MOVE_BRANCH, node_uuid, change.state.value)
        await conn.execute(
            queries.INSERT_TRANSITION,
            node_uuid,
            revision,
            current.value,
            change.state.value,
            change.changed_by,
            change.reason,
            change.summary,
            open_ids,
            candidate_ids,
        )
        return await self._branch(conn, node)

    async def get_branch(self, node_id: str) -> Branch:
        async with self._pool.acquire() as conn:
            node = await ConversationStore.load(conn, node_id, "node_id")
            return await self._branch(conn, node)

    async def list_branches(
        self,
        tree_id: str,
        after_ordinal: int,
        limit: int,
        include_archived: bool,
        states: Sequence[BranchState],
    ) -> list[tuple[Branch, int]]:
        """Moved branches, each with its root node's ordinal (the paging position)."""
        tree_uuid = tree_rules.parse_id(tree_id, "tree_id")
        async with self._pool.acquire() as conn:
            if await conn.fetchval(queries.TREE_EXISTS, tree_uuid) is None:
                raise NotFound("tree", tree_id)
            rows = await conn.fetch(
                queries.LIST_BRANCHES,
                tree_uuid,
                after_ordinal,
                include_archived,
                limit,
                [s.value for s in states],
            )
            branches = await _branches(conn, rows)
        return [(b, r["ordinal"]) for b, r in zip(branches, rows, strict=True)]

    async def get_node(self, node_id: str) -> Node:
        """A node with the state of the branch it is in."""
        async with self._pool.acquire() as conn:
            node = await ConversationStore.load(conn, node_id, "node_id")
            return (await self.place(conn, [node]))[0]

    @staticmethod
    async def place(conn: asyncpg.Connection, nodes: Sequence[Node]) -> list[Node]:
        """The nodes with the state of the branch each is in."""
        rows = await conn.fetch(queries.PLACEMENTS, [uuid.UUID(n.id) for n in nodes])
        placed = {r["id"]: (r["branch_id"], r["state"]) for r in rows}
        return [_placed(n, *placed[n.id]) for n in nodes]

    async def get_path(self, node_id: str, offset: int, limit: int) -> tuple[list[Node], int]:
        """One page of the path root → node, each placed in its branch, and the length."""
        nodes, length = await self._conversation.get_path(node_id, offset, limit)
        if not nodes:
            return nodes, length
        async with self._pool.acquire() as conn:
            return await self.place(conn, nodes), length

    async def list_nodes(
        self,
        tree_id: str,
        after_ordinal: int,
        limit: int,
        include_archived: bool,
        lifecycles: Sequence[AnswerLifecycle],
    ) -> list[Node]:
        tree_uuid = tree_rules.parse_id(tree_id, "tree_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(
                LIST_NODES,
                tree_uuid,
                after_ordinal,
                limit,
                include_archived,
                [v.value for v in lifecycles],
            )
            if not rows and await conn.fetchval(queries.TREE_EXISTS, tree_uuid) is None:
                raise NotFound("tree", tree_id)
        return [_placed(node_from_row(r), r["branch_id"], r["branch_state"]) for r in rows]
