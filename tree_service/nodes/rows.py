"""The row contract of trees and nodes: the columns every statement returning a node selects,
the rows as domain values, and the JSON a snapshot keeps of a node.

NODE_COLUMNS and ANSWER_LIFECYCLE are public so that an aggregate's own statement that returns
nodes (a bud ending, a comparison) or filters by lifecycle reads them exactly as the node core
does; node_from_row reads what NODE_COLUMNS selects."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import Any

import asyncpg

from tree_service.domain import (
    AnswerState,
    ContinuationKind,
    Generated,
    Node,
    NodeKind,
    Realm,
    Tree,
)

# An answer's lifecycle, derived from the tree so that it can never drift from it; once a
# main-line version holds the answer it stays canonicalized whatever is adopted later.
ANSWER_LIFECYCLE = """
CASE WHEN n.kind <> 'answer' THEN NULL
     WHEN EXISTS (SELECT 1 FROM main_line_versions v WHERE v.node_ids @> ARRAY[n.id])
     THEN 'canonicalized'
     WHEN NOT EXISTS (SELECT 1 FROM nodes q WHERE q.id = n.parent_id
                                              AND q.adopted_answer_id = n.id)
     THEN 'candidate'
     WHEN EXISTS (SELECT 1 FROM nodes c WHERE c.parent_id = n.id) THEN 'in_exploration'
     ELSE 'adopted' END
"""

# Every read of a node goes through these columns (of `nodes n`); a streaming bud shows the
# text and count of its acknowledged chunks so far (ending it stores both in its row).
NODE_COLUMNS = (
    """
n.id::text, n.tree_id::text, n.parent_id::text, n.kind, n.realm, n.world,
CASE WHEN n.answer_state = 'streaming'
     THEN coalesce((SELECT string_agg(c.text, '' ORDER BY c.seq)
                    FROM bud_chunks c WHERE c.node_id = n.id), '')
     ELSE n.text END AS text,
n.revision, n.ordinal, n.created_at, n.conditions, n.attachments, n.citations,
n.version_of::text, n.version, n.adopted_answer_id::text, n.answer_state, n.stop_reason,
CASE WHEN n.answer_state = 'streaming'
     THEN coalesce((SELECT max(c.seq) FROM bud_chunks c WHERE c.node_id = n.id), 0)
     ELSE n.acked_chunks END AS acked_chunks,
n.extends_answer_id::text, n.continuation_kind, n.reasoning_summary,
n.evidence, n.tool_trace, n.context_version_id::text, n.comparison, ("""
    + ANSWER_LIFECYCLE
    + """) AS lifecycle
"""
)

# The columns tree_from_row reads.
TREE_COLUMNS = """
id::text, title, owner, project_id, default_realm, default_world, revision, created_at,
updated_at
"""


def tree_from_row(row: asyncpg.Record) -> Tree:
    return Tree(
        id=row["id"],
        title=row["title"],
        owner=row["owner"],
        project_id=row["project_id"],
        default_realm=Realm(row["default_realm"]),
        revision=row["revision"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        default_world=row["default_world"],
    )


def node_from_row(row: asyncpg.Record) -> Node:
    return Node(
        id=row["id"],
        tree_id=row["tree_id"],
        parent_id=row["parent_id"],
        kind=NodeKind(row["kind"]),
        realm=Realm(row["realm"]),
        text=row["text"],
        revision=row["revision"],
        ordinal=row["ordinal"],
        created_at=row["created_at"],
        world=row["world"],
        conditions=json.loads(row["conditions"]),
        attachments=tuple(json.loads(row["attachments"])),
        citations=tuple(json.loads(row["citations"])),
        version_of=row["version_of"],
        version=row["version"],
        adopted_answer_id=row["adopted_answer_id"],
        answer_state=AnswerState(row["answer_state"]) if row["answer_state"] else None,
        stop_reason=row["stop_reason"],
        acked_chunks=row["acked_chunks"],
        extends_answer_id=row["extends_answer_id"],
        continuation_kind=(
            ContinuationKind(row["continuation_kind"]) if row["continuation_kind"] else None
        ),
        reasoning_summary=row["reasoning_summary"],
        evidence=tuple(json.loads(row["evidence"])),
        tool_trace=tuple(json.loads(row["tool_trace"])),
        context_version_id=row["context_version_id"],
        lifecycle=row.get("lifecycle"),
        comparison=json.loads(row["comparison"]) if row.get("comparison") else None,
    )


def node_to_json(node: Node) -> dict[str, Any]:
    """A node as stored in a main-line snapshot (JSON-safe)."""
    data = dataclasses.asdict(node)
    data["created_at"] = node.created_at.isoformat()
    return data


def node_from_json(data: dict[str, Any]) -> Node:
    values = dict(data)
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    values["kind"] = NodeKind(values["kind"])
    values["realm"] = Realm(values["realm"])
    values["answer_state"] = AnswerState(values["answer_state"]) if values["answer_state"] else None
    kind = values["continuation_kind"]
    values["continuation_kind"] = ContinuationKind(kind) if kind else None
    for key in ("attachments", "citations", "evidence", "tool_trace"):
        values[key] = tuple(values[key])
    return Node(**values)


def generated_json(generated: Generated) -> tuple[str, str, str, str]:
    return (
        json.dumps(generated.conditions, ensure_ascii=False),
        generated.reasoning_summary,
        json.dumps(list(generated.evidence), ensure_ascii=False),
        json.dumps([dataclasses.asdict(t) for t in generated.tool_trace], ensure_ascii=False),
    )
