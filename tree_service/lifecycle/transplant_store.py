"""Transplanting a branch into a new tree (T14): copies, never moves."""

from __future__ import annotations

import dataclasses
import json
import uuid

import asyncpg

from tree_service.citations.grants import without_revoked
from tree_service.domain import AnswerState, NewTree, NodeKind, Realm, Tree
from tree_service.errors import NotFound, PreconditionFailed
from tree_service.lifecycle.rules import TransplantOrigin, TransplantRequest
from tree_service.nodes.rows import TREE_COLUMNS, node_from_json, node_to_json, tree_from_row
from tree_service.nodes.store import NodeStore
from tree_service.rules import parse_id

# Holds appends to the source tree until the copy commits, so that its revision is the copy's.
SOURCE_TREE = """
SELECT title, owner, project_id, default_realm, default_world, revision
FROM trees WHERE id = $1 FOR SHARE
"""

STREAMING_IN_BRANCH = """
WITH RECURSIVE sub AS (
    SELECT id FROM nodes WHERE id = $1
    UNION ALL
    SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id
)
SELECT n.id::text FROM sub JOIN nodes n ON n.id = sub.id WHERE n.answer_state = 'streaming'
LIMIT 1
"""

# Copies the subtree under $1 into tree $2 with fresh ids, in the same order; references
# inside the branch follow their copies, the root becomes an original question (its other
# versions stay behind), and context versions (the source tree's records) are not carried.
COPY_BRANCH = """
WITH RECURSIVE sub AS (
    SELECT id FROM nodes WHERE id = $1
    UNION ALL
    SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id
), map AS (
    SELECT n.id AS old, gen_random_uuid() AS new,
           row_number() OVER (ORDER BY n.ordinal) AS ordinal
    FROM sub JOIN nodes n ON n.id = sub.id
), copied AS (
    INSERT INTO nodes (
        id, tree_id, parent_id, kind, realm, world, text, ordinal, revision, created_at,
        conditions, attachments, citations, lineage_id, version_of, version, adopted_answer_id,
        answer_state, stop_reason, acked_chunks, extends_answer_id, continuation_kind,
        reasoning_summary, evidence, tool_trace, comparison)
    SELECT m.new, $2, p.new, n.kind, n.realm, n.world, n.text, m.ordinal, n.revision,
           n.created_at, n.conditions, n.attachments, n.citations,
           CASE WHEN n.lineage_id IS NULL THEN NULL ELSE coalesce(l.new, m.new) END,
           v.new,
           CASE WHEN n.kind = 'question' AND l.new IS NULL THEN 1 ELSE n.version END,
           a.new, n.answer_state, n.stop_reason, n.acked_chunks, e.new, n.continuation_kind,
           n.reasoning_summary, n.evidence, n.tool_trace,
           -- A comparison compares its sibling answers, which are in the branch with it.
           CASE WHEN n.comparison IS NULL THEN NULL ELSE n.comparison || jsonb_build_object(
               'answer_ids',
               (SELECT jsonb_agg(c.new::text ORDER BY x.i)
                FROM jsonb_array_elements_text(n.comparison -> 'answer_ids')
                     WITH ORDINALITY AS x (id, i)
                JOIN map c ON c.old = x.id::uuid),
               'preferred_answer_id',
               (SELECT c.new::text FROM map c
                WHERE c.old = (n.comparison ->> 'preferred_answer_id')::uuid)) END
    FROM map m
    JOIN nodes n ON n.id = m.old
    LEFT JOIN map p ON p.old = n.parent_id
    LEFT JOIN map l ON l.old = n.lineage_id
    LEFT JOIN map v ON v.old = n.version_of
    LEFT JOIN map a ON a.old = n.adopted_answer_id
    LEFT JOIN map e ON e.old = n.extends_answer_id
    RETURNING id
), granted AS (
    -- A grantor's revocation reaches the copies of what was cited under the grant too.
    INSERT INTO authorized_citations (authorization_id, node_id, position)
    SELECT c.authorization_id, m.new, c.position
    FROM authorized_citations c JOIN map m ON m.old = c.node_id
)
SELECT old::text, new::text FROM map ORDER BY ordinal
"""

SET_TREE_SIZE = (
    """
UPDATE trees SET node_count = $2::bigint, revision = $2::bigint + 1 WHERE id = $1
RETURNING """
    + TREE_COLUMNS
)

INSERT_TRANSPLANT = """
INSERT INTO transplants (tree_id, source_tree_id, source_node_id, source_tree_revision,
                         ancestor_path, copies, transplanted_by)
VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)
"""

SELECT_TRANSPLANT = """
SELECT tree_id::text, source_tree_id::text, source_node_id::text, source_tree_revision,
       ancestor_path::text, copies::text, transplanted_by, created_at
FROM transplants WHERE tree_id = $1
"""


def origin_from_row(row: asyncpg.Record) -> TransplantOrigin:
    return TransplantOrigin(
        tree_id=row["tree_id"],
        source_tree_id=row["source_tree_id"],
        source_node_id=row["source_node_id"],
        source_tree_revision=row["source_tree_revision"],
        ancestor_path=tuple(node_from_json(n) for n in json.loads(row["ancestor_path"])),
        copies=json.loads(row["copies"]),
        transplanted_by=row["transplanted_by"],
        transplanted_at=row["created_at"],
    )


class TransplantStore:
    """Branches copied into trees of their own, with their origins."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def transplant(
        conn: asyncpg.Connection, wanted: TransplantRequest
    ) -> tuple[Tree, TransplantOrigin]:
        root = await NodeStore.load(conn, wanted.node_id, "node_id")
        await NodeStore.expect_not_purged(conn, root.id, "node_id")
        if root.kind is not NodeKind.QUESTION:
            raise PreconditionFailed(
                f"node {root.id} is an {root.kind.value}: a transplanted tree starts with a "
                "question",
                {"node_id": root.id},
            )
        source_uuid = uuid.UUID(root.tree_id)
        source = await conn.fetchrow(SOURCE_TREE, source_uuid)
        streaming = await conn.fetchval(STREAMING_IN_BRANCH, uuid.UUID(root.id))
        if streaming is not None:
            raise PreconditionFailed(
                f"answer {streaming} in the branch is still streaming",
                {"node_id": streaming, "state": AnswerState.STREAMING.value},
            )
        path, _ = await NodeStore.path(conn, uuid.UUID(root.id), 0, 1_000_000)
        ancestors = path[:-1]
        created = await NodeStore.create_tree(
            conn,
            NewTree(
                wanted.title,
                source["owner"],
                source["project_id"],
                Realm(source["default_realm"]),
                source["default_world"],
            ),
        )
        tree_uuid = uuid.UUID(created.id)
        copied = await conn.fetch(COPY_BRANCH, uuid.UUID(root.id), tree_uuid)
        tree = tree_from_row(await conn.fetchrow(SET_TREE_SIZE, tree_uuid, len(copied)))
        copies = {r["old"]: r["new"] for r in copied}
        await conn.execute(
            INSERT_TRANSPLANT,
            tree_uuid,
            source_uuid,
            uuid.UUID(root.id),
            source["revision"],
            json.dumps([node_to_json(n) for n in ancestors], ensure_ascii=False),
            json.dumps(copies),
            wanted.transplanted_by,
        )
        return tree, origin_from_row(await conn.fetchrow(SELECT_TRANSPLANT, tree_uuid))

    async def origin(self, tree_id: str) -> TransplantOrigin:
        tree_uuid = parse_id(tree_id, "tree_id")
        row = await self._pool.fetchrow(SELECT_TRANSPLANT, tree_uuid)
        if row is None:
            raise NotFound("transplant origin of tree", tree_id)
        origin = origin_from_row(row)
        # The path is a snapshot: a citation in it whose grant was since revoked reads as one.
        ancestors = await without_revoked(self._pool, list(origin.ancestor_path))
        return dataclasses.replace(origin, ancestor_path=tuple(ancestors))
