"""Buds: answers streamed chunk by chunk. A bud is opened as a streaming answer under a lease
its stream renews, and ends once, sealed or frozen, with the chunks acknowledged so far."""

from __future__ import annotations

import uuid

import asyncpg

from mirrortree import counters
from tree_service.buds import queries
from tree_service.conversation.store import ConversationStore
from tree_service.domain import AnswerState, Generated, NewAnswer, Node, StopReason
from tree_service.errors import PreconditionFailed
from tree_service.ingestion.store import IngestionStore
from tree_service.nodes.rows import generated_json, node_from_row
from tree_service.nodes.store import NodeStore
from tree_service.primary import Primary

# A live stream renews its bud's lease every BUD_LEASE_S / 3 seconds; a bud whose lease ran
# out lost its stream (the serving process died) and is frozen by whichever instance sweeps.
BUD_LEASE_S = 30.0


async def _end(
    conn: asyncpg.Connection,
    node_id: uuid.UUID,
    state: AnswerState,
    stop_reason: str | None,
    generated: Generated,
) -> Node | None:
    """Seal or freeze a locked bud and record it as a message source (None: it had ended)."""
    _, summary, evidence, tool_trace = generated_json(generated)
    row = await conn.fetchrow(
        queries.END_BUD, node_id, state.value, stop_reason, summary, evidence, tool_trace
    )
    if row is None:
        return None
    node = node_from_row(row)
    tree = await NodeStore.tree(conn, node.tree_id)
    await IngestionStore.record_message(conn, node, tree.project_id)
    return node


class BudStore:
    """Opening, renewing and ending buds on the primary (their chunks: ChunkCommitter)."""

    def __init__(self, primary: Primary) -> None:
        self._primary = primary
        # Buds this process is freezing with their real reason, retrying while the database
        # is away: the sweeper leaves them alone although their lease ran out meanwhile.
        self.freezing: set[str] = set()

    async def open_bud(self, conn: asyncpg.Connection, answer: NewAnswer) -> Node:
        """Add a streaming answer and start its lease."""
        node, _ = await ConversationStore.add_answer(conn, answer)
        await conn.execute(queries.RENEW_BUD_LEASE, uuid.UUID(node.id), BUD_LEASE_S)
        return node

    async def get(self, node_id: str) -> Node:
        """The bud as it is stored now."""
        async with self._primary.pool.acquire() as conn:
            return await NodeStore.load(conn, node_id, "answer_id")

    async def renew_bud_lease(self, node_id: str) -> bool:
        """Extend the lease of a streaming bud; False once it has ended."""
        status = await self._primary.pool.execute(
            queries.RENEW_BUD_LEASE, uuid.UUID(node_id), BUD_LEASE_S
        )
        return bool(status == "UPDATE 1")

    async def freeze_expired_buds(self, limit: int = 100) -> list[str]:
        """Freeze buds whose stream stopped renewing its lease; returns their ids."""
        expired = [r["id"] for r in await self._primary.pool.fetch(queries.EXPIRED_BUDS, limit)]
        frozen = []
        for node_id in expired:
            if str(node_id) in self.freezing:
                continue
            try:
                await self.end_bud(node_id, AnswerState.FROZEN, StopReason.SERVER_LOST, Generated())
            except PreconditionFailed:
                continue  # it ended another way meanwhile
            frozen.append(node_id)
        return frozen

    @staticmethod
    async def freeze_for_safety_stop(conn: asyncpg.Connection, tree_id: str) -> int:
        """Freeze every bud streaming in the tree, in the transaction stating a safety stop
        (their streams' next chunk is refused); how many."""
        streaming = await conn.fetch(queries.STREAMING_IN_TREE, uuid.UUID(tree_id))
        for row in streaming:
            await _end(conn, row["id"], AnswerState.FROZEN, StopReason.SAFETY_STOP, Generated())
        counters.BUDS_ENDED.labels(AnswerState.FROZEN.value, StopReason.SAFETY_STOP.value).inc(
            len(streaming)
        )
        return len(streaming)

    async def end_bud(
        self, node_id: str, state: AnswerState, stop_reason: str | None, generated: Generated
    ) -> tuple[Node, str]:
        """Seal or freeze a streaming bud with its acknowledged chunks; returns it and the LSN."""
        async with self._primary.pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute(queries.LOCK_STREAMING_BUD, uuid.UUID(node_id))
                node = await _end(conn, uuid.UUID(node_id), state, stop_reason, generated)
                if node is None:
                    current = await NodeStore.load(conn, node_id, "answer_id")
                    raise PreconditionFailed(
                        f"bud {node_id!r} is already {current.answer_state}; it cannot end twice",
                        {"answer_state": str(current.answer_state)},
                    )
            lsn = await self._primary.commit_lsn(conn)
        counters.BUDS_ENDED.labels(state.value, stop_reason or "").inc()
        return node, lsn
