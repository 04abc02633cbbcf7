"""Rows of the conversation tree as domain values, and the JSON a main-line snapshot keeps."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from tree_service import canon_projection
from tree_service.domain import (
    AnswerState,
    CanonCandidate,
    CanonicalScope,
    ContinuationKind,
    Generated,
    MainLineVersion,
    Node,
    NodeKind,
    Realm,
    Tree,
)


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


@dataclass(frozen=True)
class ListedVersion:
    """A main-line version as listed: without its snapshot (MainLineVersion.snapshot is
    empty until MainLineStore.with_snapshots reads it), and the size that snapshot is stored in."""

    version: MainLineVersion
    snapshot_stored_bytes: int


def listed_version(row: asyncpg.Record, project_id: str | None) -> ListedVersion:
    scope = CanonicalScope(row["scope"])
    version = MainLineVersion(
        id=row["id"],
        tree_id=row["tree_id"],
        scope=scope,
        world=row["world"],
        version=row["version"],
        node_ids=tuple(row["node_ids"]),
        snapshot=(),
        confirmed_by=row["confirmed_by"],
        created_at=row["created_at"],
        candidates=tuple(CanonCandidate(**c) for c in json.loads(row["candidates"])),
        replaces_version_id=row["replaces_version_id"],
        graph_scope=canon_projection.canon_scope(scope, row["world"], project_id),
        invitation_id=row["invitation_id"],
    )
    return ListedVersion(version, row["snapshot_stored_bytes"])


def generated_json(generated: Generated) -> tuple[str, str, str, str]:
    return (
        json.dumps(generated.conditions, ensure_ascii=False),
        generated.reasoning_summary,
        json.dumps(list(generated.evidence), ensure_ascii=False),
        json.dumps([dataclasses.asdict(t) for t in generated.tool_trace], ensure_ascii=False),
    )
