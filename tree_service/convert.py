"""Proto ↔ domain conversion for the tree service, with input validation at the edge.

Validation collects every violation (dotted field paths such as `events[2].title`) before
raising, so a client sees all of its mistakes at once and nothing is written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import costs_pb2, tree_pb2
from mirrortree.validation import FieldChecker, shown
from mirrortree.violations import FieldViolation
from tree_service.domain import (
    MAX_LIST,
    MAX_SHORT,
    AnswerLifecycle,
    AnswerState,
    Attachment,
    BranchState,
    ContinuationKind,
    Generated,
    Node,
    NodeKind,
    Realm,
    RealmChoice,
    ToolTraceEntry,
    Tree,
)
from tree_service.errors import InvalidInput

MAX_IDEMPOTENCY_KEY = 128
MAX_ANSWER = 1_000_000  # code points, also of all of a streamed answer's chunks together
MAX_SUMMARY = 20_000
MAX_WORLD = 200

REALM_FROM_PROTO = {
    tree_pb2.REAL: Realm.REAL,
    tree_pb2.WORLD: Realm.WORLD,
    tree_pb2.REHEARSAL: Realm.REHEARSAL,
}
REALM_TO_PROTO = {v: k for k, v in REALM_FROM_PROTO.items()}
CONTINUATION_FROM_PROTO = {
    tree_pb2.ELABORATION: ContinuationKind.ELABORATION,
    tree_pb2.VERIFICATION: ContinuationKind.VERIFICATION,
    tree_pb2.TOOL_WORK: ContinuationKind.TOOL_WORK,
    tree_pb2.DEEPER_REASONING: ContinuationKind.DEEPER_REASONING,
}
CONTINUATION_TO_PROTO = {v: k for k, v in CONTINUATION_FROM_PROTO.items()}
ANSWER_STATE_TO_PROTO = {
    AnswerState.STREAMING: tree_pb2.STREAMING,
    AnswerState.SEALED: tree_pb2.SEALED,
    AnswerState.FROZEN: tree_pb2.FROZEN,
}
KIND_TO_PROTO = {
    NodeKind.QUESTION: tree_pb2.QUESTION,
    NodeKind.ANSWER: tree_pb2.ANSWER,
    NodeKind.CONTINUATION: tree_pb2.CONTINUATION,
    NodeKind.COMPARISON: tree_pb2.COMPARISON,
    NodeKind.OBSERVATION: tree_pb2.OBSERVATION,
}


LIFECYCLE_TO_PROTO = {
    AnswerLifecycle.CANDIDATE: tree_pb2.CANDIDATE,
    AnswerLifecycle.ADOPTED: tree_pb2.ADOPTED,
    AnswerLifecycle.IN_EXPLORATION: tree_pb2.IN_EXPLORATION,
    AnswerLifecycle.CANONICALIZED: tree_pb2.CANONICALIZED,
}
LIFECYCLE_FROM_PROTO: dict[int, AnswerLifecycle] = {v: k for k, v in LIFECYCLE_TO_PROTO.items()}
BRANCH_STATE_TO_PROTO = {
    BranchState.ACTIVE: tree_pb2.ACTIVE,
    BranchState.PAUSED: tree_pb2.PAUSED,
    BranchState.CONCLUDED: tree_pb2.CONCLUDED,
    BranchState.ARCHIVED: tree_pb2.ARCHIVED,
    BranchState.PURGED: tree_pb2.PURGED,
}
BRANCH_STATE_FROM_PROTO: dict[int, BranchState] = {v: k for k, v in BRANCH_STATE_TO_PROTO.items()}
CITATION_STATUS_TO_PROTO = {
    "revoked": tree_pb2.CITATION_REVOKED,
    "purged": tree_pb2.CITATION_PURGED,
    "superseded": tree_pb2.CITATION_SUPERSEDED,
    "source_purged": tree_pb2.CITATION_SOURCE_PURGED,
}


class Checker(FieldChecker):
    """Field checks of the tree service; fails with InvalidInput."""

    def error(self, violations: list[FieldViolation]) -> Exception:
        return InvalidInput(violations)

    def idempotency_key(self, value: str) -> str:
        if not value:
            self.fail("idempotency_key", "is required for every write")
        elif len(value) > MAX_IDEMPOTENCY_KEY or not all(" " < ch < "\x7f" for ch in value):
            self.fail("idempotency_key", "must be 1..128 printable ASCII characters")
        return value


def realm_from_proto(check: Checker, field: str, value: int) -> Realm | None:
    if value == tree_pb2.REALM_UNSPECIFIED:
        return None
    realm: Realm | None = REALM_FROM_PROTO.get(value)  # type: ignore[call-overload]
    if realm is None:
        check.fail(field, f"unknown realm {value}")
    return realm


def realm_choice(check: Checker, realm_value: int, world: str, prefix: str = "") -> RealmChoice:
    """An explicit realm (WORLD needs its world name), or None to inherit."""
    realm = realm_from_proto(check, f"{prefix}realm", realm_value)
    if realm is Realm.WORLD:
        check.identifier(f"{prefix}world", world)
        return RealmChoice(realm, world)
    if world:
        check.fail(f"{prefix}world", "is only allowed with realm WORLD")
    return RealmChoice(realm, None)


def conditions(check: Checker, field: str, value: tree_pb2.RunConditions) -> dict[str, object]:
    check.text(f"{field}.model_strategy", value.model_strategy, MAX_SHORT, required=False)
    if len(value.parameters) > MAX_LIST:
        check.fail(f"{field}.parameters", f"holds more than {MAX_LIST} entries")
    for key, item in value.parameters.items():
        check.text(f"{field}.parameters[{shown(key)}]", item, MAX_SHORT, required=False)
        check.identifier(f"{field}.parameters key", key)
    data: dict[str, object] = {}
    if value.model_strategy:
        data["model_strategy"] = value.model_strategy
    if value.parameters:
        data["parameters"] = dict(sorted(value.parameters.items()))
    if value.estimate_id:
        check.identifier(f"{field}.estimate_id", value.estimate_id)
        data["estimate_id"] = value.estimate_id
    return data


def ungenerated(check: Checker, field: str, value: tree_pb2.RunConditions) -> None:
    """Questions are the user's: no model run is charged for them (T20)."""
    if value.estimate_id:
        check.fail(
            f"{field}.estimate_id",
            "is only for generated nodes (answers, continuations, comparisons), not questions",
        )


def generated(check: Checker, field: str, value: tree_pb2.GeneratedContent) -> Generated:
    """Readable reasoning only: a hidden chain-of-thought is refused, never stored (T7)."""
    if value.chain_of_thought:
        check.fail(
            f"{field}.chain_of_thought",
            "hidden chain-of-thought is never stored; send a readable reasoning_summary instead",
        )
    check.text(f"{field}.reasoning_summary", value.reasoning_summary, MAX_SUMMARY, required=False)
    for name, items in (("evidence", value.evidence), ("tool_trace", value.tool_trace)):
        if len(items) > MAX_LIST:
            check.fail(f"{field}.{name}", f"holds more than {MAX_LIST} entries")
    for i, item in enumerate(value.evidence):
        check.text(f"{field}.evidence[{i}]", item, MAX_SHORT)
    for i, step in enumerate(value.tool_trace):
        check.identifier(f"{field}.tool_trace[{i}].tool", step.tool)
        check.text(
            f"{field}.tool_trace[{i}].input_summary", step.input_summary, MAX_SHORT, required=False
        )
        check.text(
            f"{field}.tool_trace[{i}].output_summary",
            step.output_summary,
            MAX_SHORT,
            required=False,
        )
    return Generated(
        conditions=conditions(check, f"{field}.conditions", value.conditions),
        reasoning_summary=value.reasoning_summary,
        evidence=tuple(value.evidence),
        tool_trace=tuple(
            ToolTraceEntry(t.tool, t.input_summary, t.output_summary) for t in value.tool_trace
        ),
    )


def attachments(check: Checker, values: list[tree_pb2.Attachment]) -> tuple[Attachment, ...]:
    if len(values) > MAX_LIST:
        check.fail("attachments", f"holds more than {MAX_LIST} entries")
    for i, item in enumerate(values):
        check.identifier(f"attachments[{i}].id", item.id)
        check.text(f"attachments[{i}].name", item.name, MAX_SHORT)
        check.text(f"attachments[{i}].media_type", item.media_type, 200)
        for fact in ATTACHMENT_FACTS:
            if getattr(item, fact) < 0:
                check.fail(f"attachments[{i}].{fact}", "must not be negative")
    return tuple(
        Attachment(a.id, a.name, a.media_type, *(getattr(a, f) for f in ATTACHMENT_FACTS))
        for a in values
    )


ATTACHMENT_FACTS = ("size_bytes", "width", "height", "page_count", "duration_ms", "text_length")


def page_token(check: Checker, value: str) -> int:
    """Tokens are positions this service issued (a path never changes, ordinals never move)."""
    return check.counter("page_token", value, required=False) or 0


# ---- caller-supplied JSON stored as jsonb (a session's context state, an action's parameters)


MAX_CONTEXT_DEPTH = 100  # nested arrays/objects; PostgreSQL's jsonb parser has a stack limit

_UNSTORABLE_CHAR = re.compile("[\x00\ud800-\udfff]")


class NotStorable(ValueError):
    """JSON that Python reads but PostgreSQL's jsonb refuses."""


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NotStorable(f"the number {text[:40]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise NotStorable(f"{name} is not a JSON number")


def parse_storable_json(text: str) -> Any:
    """The JSON value, if PostgreSQL's jsonb can store it too; else NotStorable.

    Python reads NaN, Infinity, numbers beyond a double, "\\u0000" and lone surrogates, none
    of which jsonb accepts, and very deep nesting fails either parser with no useful message.
    """
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise NotStorable(f"nests deeper than {MAX_CONTEXT_DEPTH} levels") from None
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:  # without recursion, so the depth check itself cannot overflow
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_CONTEXT_DEPTH:
                raise NotStorable(f"nests deeper than {MAX_CONTEXT_DEPTH} levels")
            if isinstance(item, dict):
                pending.extend((key, depth + 1) for key in item)
                pending.extend((child, depth + 1) for child in item.values())
            else:
                pending.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and _UNSTORABLE_CHAR.search(item):
            raise NotStorable("holds a NUL character or a lone UTF-16 surrogate in a string")
    return value


# ---- domain → responses -----------------------------------------------------------------


def tree_to_proto(tree: Tree) -> tree_pb2.Tree:
    return tree_pb2.Tree(
        id=tree.id,
        title=tree.title,
        owner=tree.owner,
        project_id=tree.project_id or "",
        default_realm=REALM_TO_PROTO[tree.default_realm],
        revision=tree.revision,
        created_at=format_utc(tree.created_at),
        updated_at=format_utc(tree.updated_at),
        default_world=tree.default_world or "",
    )


def node_to_proto(node: Node) -> tree_pb2.Node:
    return tree_pb2.Node(
        id=node.id,
        tree_id=node.tree_id,
        parent_id=node.parent_id or "",
        kind=KIND_TO_PROTO[node.kind],
        realm=REALM_TO_PROTO[node.realm],
        text=node.text,
        revision=node.revision,
        ordinal=node.ordinal,
        created_at=format_utc(node.created_at),
        world=node.world or "",
        conditions=tree_pb2.RunConditions(
            model_strategy=str(node.conditions.get("model_strategy", "")),
            parameters=node.conditions.get("parameters", {}),
            estimate_id=str(node.conditions.get("estimate_id", "")),
        ),
        attachments=[tree_pb2.Attachment(**a) for a in node.attachments],
        citations=[citation_to_proto(c) for c in node.citations],
        version_of=node.version_of or "",
        version=node.version if node.kind is NodeKind.QUESTION else 0,
        adopted_answer_id=node.adopted_answer_id or "",
        answer_state=ANSWER_STATE_TO_PROTO.get(node.answer_state, 0),  # type: ignore[arg-type]
        stop_reason=node.stop_reason or "",
        acknowledged_chunks=node.acked_chunks,
        extends_answer_id=node.extends_answer_id or "",
        continuation_kind=CONTINUATION_TO_PROTO.get(node.continuation_kind, 0),  # type: ignore[arg-type]
        reasoning_summary=node.reasoning_summary,
        evidence=list(node.evidence),
        tool_trace=[tree_pb2.ToolTraceEntry(**t) for t in node.tool_trace],
        context_version_id=node.context_version_id or "",
        lifecycle=LIFECYCLE_TO_PROTO.get(AnswerLifecycle(node.lifecycle), 0)  # type: ignore[arg-type]
        if node.lifecycle
        else 0,
        branch_state=BRANCH_STATE_TO_PROTO[BranchState(node.branch_state)]
        if node.branch_state
        else tree_pb2.BRANCH_STATE_UNSPECIFIED,
        branch_id=node.branch_id or "",
        comparison=comparison_to_proto(node),
        task_run=task_run_to_proto(node.conditions),
    )


def citation_to_proto(citation: dict[str, Any]) -> tree_pb2.Citation:
    """A stored citation (or tombstone); `status` absent means as cited."""
    anchor = citation.get("anchor")
    message = tree_pb2.Citation(
        node_id=citation["node_id"],
        start=citation.get("start", 0),
        end=citation.get("end", 0),
        note=citation.get("note", ""),
        snapshot=citation.get("snapshot", ""),
        authorization_id=citation.get("authorization_id", ""),
        redacted=citation.get("redacted", False),
        status=CITATION_STATUS_TO_PROTO.get(citation.get("status", ""), tree_pb2.CITATION_CURRENT),
        source_description=citation.get("source_description", ""),
    )
    if anchor is not None:
        message.anchor.CopyFrom(tree_pb2.CitationAnchor(**anchor))
    return message


def task_run_to_proto(conditions: Mapping[str, Any]) -> tree_pb2.TaskRun | None:
    """The delegated task's run an observation's conditions record (None for other nodes)."""
    if "task_id" not in conditions:
        return None
    return tree_pb2.TaskRun(
        task_id=str(conditions["task_id"]),
        worker_id=str(conditions.get("worker_id", "")),
        attempt=int(conditions.get("attempt", 0)),
        spent_tokens=int(conditions.get("spent_tokens", 0)),
        spent_cost_micros=int(conditions.get("spent_cost_micros", 0)),
        currency=str(conditions.get("currency", "")),
        accepted_observation_id=str(conditions.get("accepted_observation_id", "")),
    )


def comparison_to_proto(node: Node) -> costs_pb2.Comparison | None:
    if node.comparison is None:
        return None
    return costs_pb2.Comparison(
        answer_ids=node.comparison["answer_ids"],
        criteria=node.comparison["criteria"],
        verdict=node.text,
        preferred_answer_id=node.comparison.get("preferred_answer_id") or "",
    )
