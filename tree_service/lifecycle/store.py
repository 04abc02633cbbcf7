"""Branch states on the primary: their transitions and the reads of branches."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from tree_service.domain import AnswerLifecycle, BranchState, Node, NodeKind
from tree_service.errors import RevisionConflict
from tree_service.lifecycle import queries, rules
from tree_service.lifecycle.rules import Branch, StateChange, Transition
from tree_service.nodes.store import NodeStore


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


class LifecycleStore:
    """Branch transitions and the reads of branches with their history."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def _branch(conn: asyncpg.Connection, node: Node) -> Branch:
        row = await conn.fetchrow(queries.SELECT_BRANCH, uuid.UUID(node.id))
        if row is None:  # never moved: active at its first revision
            return Branch(node.id, node.tree_id, BranchState.ACTIVE, 1)
        return (await _branches(conn, [row]))[0]

    async def set_state(self, conn: asyncpg.Connection, change: StateChange) -> Branch:
        """Move a branch at its expected revision; of concurrent moves one applies."""
        node = await NodeStore.load(conn, change.node_id, "node_id")
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
            node = await NodeStore.load(conn, node_id, "node_id")
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
        async with self._pool.acquire() as conn:
            tree_uuid = await NodeStore.expect_tree(conn, tree_id)
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
