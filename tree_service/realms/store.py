"""Arbiter rulings, real-world actions (the effects ledger) and commitments on the primary."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from tree_service import gate
from tree_service import rules as tree_rules
from tree_service.buds.store import BudStore
from tree_service.commitments import CommitmentKind, StoredCommitment, commitment_from_row
from tree_service.errors import NotFound
from tree_service.nodes.store import NodeStore
from tree_service.realms import queries, rules
from tree_service.realms.rules import ActionRequest, Effect, Ruling, RulingRequest
from tree_service.tasks.store import TaskStore


def ruling_from_row(row: asyncpg.Record) -> Ruling:
    return Ruling(**dict(row))


def effect_from_row(row: asyncpg.Record) -> Effect:
    values = dict(row)
    values.pop("position", None)
    values["parameters_json"] = values.pop("parameters")
    return Effect(**values)


class RealmStore:
    """Rulings, real-world actions and commitments of trees."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def record_ruling(conn: asyncpg.Connection, wanted: RulingRequest) -> Ruling:
        node = await NodeStore.load(conn, wanted.node_id, "node_id")
        row = await conn.fetchrow(
            queries.INSERT_RULING,
            uuid.uuid4(),
            uuid.UUID(node.tree_id),
            uuid.UUID(node.id),
            wanted.arbiter,
            wanted.action,
            wanted.allowed,
            wanted.reason,
        )
        return ruling_from_row(row)

    @staticmethod
    async def record_action(conn: asyncpg.Connection, wanted: ActionRequest) -> Effect:
        """Write one real-world action to the ledger, or refuse it and write nothing."""
        node = await NodeStore.load(conn, wanted.node_id, "node_id")
        ruling_uuid = tree_rules.parse_id(wanted.ruling_id, "ruling_id")
        tree_uuid = uuid.UUID(node.tree_id)
        version = await gate.admit_real_action(conn, node, wanted.ruling_id, wanted.action)
        created = await conn.fetchrow(
            queries.INSERT_EFFECT,
            uuid.uuid4(),
            tree_uuid,
            uuid.UUID(node.id),
            ruling_uuid,
            wanted.tool,
            wanted.action,
            wanted.parameters_json,
            wanted.recorded_by,
            uuid.UUID(version),
        )
        return effect_from_row(created)

    async def list_effects(self, tree_id: str, after: int, limit: int) -> list[Effect]:
        async with self._pool.acquire() as conn:
            tree_uuid = await NodeStore.expect_tree(conn, tree_id)
            rows = await conn.fetch(queries.LIST_EFFECTS, tree_uuid, after, limit)
        return [effect_from_row(r) for r in rows]

    @staticmethod
    async def record_commitment(
        conn: asyncpg.Connection, node_id: str, kind: CommitmentKind, statement: str, by: str
    ) -> StoredCommitment:
        node = await NodeStore.load(conn, node_id, "node_id")
        tree_uuid = uuid.UUID(node.tree_id)
        if kind is CommitmentKind.SAFETY_STOP:
            # Serializes with real-world actions: one that began before the stop commits
            # first; every later one sees it.
            await conn.execute(gate.LOCK_TREE, tree_uuid)
        commitment_id = uuid.uuid4()
        await conn.execute(
            queries.INSERT_COMMITMENT,
            commitment_id,
            tree_uuid,
            uuid.UUID(node.id),
            kind.value,
            statement,
            node.realm.value,
            node.world,
            by,
        )
        if kind is CommitmentKind.SAFETY_STOP:
            # In effect at once: the tree's delegated tasks and streaming answers stop with it.
            await TaskStore.hold_for_safety_stop(conn, node.tree_id)
            await BudStore.freeze_for_safety_stop(conn, node.tree_id)
        return commitment_from_row(await conn.fetchrow(queries.SELECT_COMMITMENT, commitment_id))

    @staticmethod
    async def _locked(conn: asyncpg.Connection, commitment_id: str) -> StoredCommitment:
        commitment_uuid = tree_rules.parse_id(commitment_id, "commitment_id")
        row = await conn.fetchrow(queries.SELECT_COMMITMENT, commitment_uuid)
        if row is None:
            raise NotFound("commitment", commitment_id)
        if row["kind"] == CommitmentKind.SAFETY_STOP.value:
            await conn.execute(gate.LOCK_TREE, uuid.UUID(row["tree_id"]))
        await conn.execute(queries.LOCK_COMMITMENT, commitment_uuid)
        row = await conn.fetchrow(queries.SELECT_COMMITMENT, commitment_uuid)
        return commitment_from_row(row)

    async def confirm(
        self, conn: asyncpg.Connection, commitment_id: str, user: str
    ) -> StoredCommitment:
        commitment = await self._locked(conn, commitment_id)
        rules.expect_confirmable(commitment)
        if commitment.confirmed_by is None:  # a second confirmation changes nothing
            await conn.execute(queries.CONFIRM_COMMITMENT, uuid.UUID(commitment.id), user)
        row = await conn.fetchrow(queries.SELECT_COMMITMENT, uuid.UUID(commitment.id))
        return commitment_from_row(row)

    async def withdraw(
        self, conn: asyncpg.Connection, commitment_id: str, user: str
    ) -> StoredCommitment:
        commitment = await self._locked(conn, commitment_id)
        rules.expect_withdrawable(commitment)
        await conn.execute(queries.WITHDRAW_COMMITMENT, uuid.UUID(commitment.id), user)
        row = await conn.fetchrow(queries.SELECT_COMMITMENT, uuid.UUID(commitment.id))
        return commitment_from_row(row)

    @staticmethod
    async def stated_at(
        conn: asyncpg.Connection, node_ids: Sequence[str]
    ) -> list[StoredCommitment]:
        """The commitments stated at `node_ids`, in the order they were stated, each with the
        main-line versions holding its node as this transaction sees them."""
        rows = await conn.fetch(queries.STATED_AT, [uuid.UUID(n) for n in node_ids])
        return [commitment_from_row(r) for r in rows]

    async def list_commitments(
        self, tree_id: str, after: int, limit: int
    ) -> list[StoredCommitment]:
        async with self._pool.acquire() as conn:
            tree_uuid = await NodeStore.expect_tree(conn, tree_id)
            rows = await conn.fetch(queries.LIST_COMMITMENTS, tree_uuid, after, limit)
        return [commitment_from_row(r) for r in rows]

    # ---- reads by id (a replayed response's words, as they are now) ------------------------

    async def rulings(self, ids: list[str]) -> list[Ruling]:
        rows = await self._pool.fetch(queries.SELECT_RULINGS, [uuid.UUID(i) for i in ids])
        return [ruling_from_row(r) for r in rows]

    async def effects(self, ids: list[str]) -> list[Effect]:
        rows = await self._pool.fetch(queries.SELECT_EFFECTS, [uuid.UUID(i) for i in ids])
        return [effect_from_row(r) for r in rows]

    async def commitments(self, ids: list[str]) -> list[StoredCommitment]:
        rows = await self._pool.fetch(queries.SELECT_COMMITMENTS, [uuid.UUID(i) for i in ids])
        return [commitment_from_row(r) for r in rows]
