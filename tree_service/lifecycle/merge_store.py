"""Merging trees by reference (T15): a question of the target tree naming source nodes."""

from __future__ import annotations

import uuid

import asyncpg

from tree_service import rules as tree_rules
from tree_service.conversation.store import ConversationStore
from tree_service.domain import NewQuestion, Node
from tree_service.errors import NotFound, PreconditionFailed
from tree_service.lifecycle.rules import MergeReference, MergeRequest, MergeSourceState
from tree_service.nodes.store import NodeStore

INSERT_REFERENCE = """
INSERT INTO merge_references (question_id, position, tree_id, source_node_id, source_tree_id,
                              merged_by)
VALUES ($1, $2, $3, $4, $5, $6)
"""

# Each reference with whether its source now lies in an archived branch, or was purged.
SELECT_REFERENCES = """
SELECT r.question_id::text, r.position, r.source_node_id::text, r.source_tree_id::text,
       r.merged_by, r.created_at,
       EXISTS (
           WITH RECURSIVE up AS (
               SELECT id, parent_id FROM nodes WHERE id = r.source_node_id
               UNION ALL
               SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
           )
           SELECT 1 FROM up JOIN branches b ON b.node_id = up.id WHERE b.state = 'archived'
       ) AS archived,
       EXISTS (SELECT 1 FROM purged_nodes p WHERE p.node_id = r.source_node_id) AS purged
FROM merge_references r
WHERE r.question_id = $1
ORDER BY r.position
"""


def reference_from_row(row: asyncpg.Record) -> MergeReference:
    return MergeReference(
        question_id=row["question_id"],
        position=row["position"],
        source_node_id=row["source_node_id"],
        source_tree_id=row["source_tree_id"],
        source_state=(
            MergeSourceState.PURGED
            if row["purged"]
            else MergeSourceState.ARCHIVED
            if row["archived"]
            else MergeSourceState.AVAILABLE
        ),
        merged_by=row["merged_by"],
        created_at=row["created_at"],
    )


class MergeStore:
    """Merge questions and their references to source nodes."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def merge(
        self, conn: asyncpg.Connection, wanted: MergeRequest
    ) -> tuple[Node, int, list[MergeReference]]:
        """Append the merge question and its references, or refuse and write nothing."""
        target = await NodeStore.tree(conn, wanted.tree_id)
        target_uuid = uuid.UUID(target.id)
        sources: list[Node] = []
        for i, source_id in enumerate(wanted.source_node_ids):
            field = f"source_node_ids[{i}]"
            source = await NodeStore.load(conn, source_id, field)
            await NodeStore.expect_not_purged(conn, source.id, field)
            if source.tree_id == str(target_uuid):
                raise PreconditionFailed(
                    f"{field} {source.id} is in the target tree: a merge references other trees",
                    {"field": field},
                )
            if (await NodeStore.tree(conn, source.tree_id)).owner != target.owner:
                raise PreconditionFailed(
                    f"{field} {source.id} belongs to another owner's tree",
                    {"field": field},
                )
            sources.append(source)
        question, revision = await ConversationStore.ask_question(
            conn, NewQuestion(wanted.tree_id, wanted.parent_id, wanted.text)
        )
        for position, source in enumerate(sources):
            await conn.execute(
                INSERT_REFERENCE,
                uuid.UUID(question.id),
                position,
                target_uuid,
                uuid.UUID(source.id),
                uuid.UUID(source.tree_id),
                wanted.merged_by,
            )
        rows = await conn.fetch(SELECT_REFERENCES, uuid.UUID(question.id))
        return question, revision, [reference_from_row(r) for r in rows]

    async def list_references(self, question_id: str) -> list[MergeReference]:
        question_uuid = tree_rules.parse_id(question_id, "question_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(SELECT_REFERENCES, question_uuid)
            if not rows and not await NodeStore.exists(conn, question_uuid):
                raise NotFound("node", question_id)
        return [reference_from_row(r) for r in rows]
