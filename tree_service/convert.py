"""Proto ↔ domain conversion for the tree service, with input validation at the edge.

Validation collects every violation (dotted field paths such as `events[2].title`) before
raising, so a client sees all of its mistakes at once and nothing is written.
"""

from __future__ import annotations

from mirrortree.rpcstatus import FieldViolation
from mirrortree.timefmt import format_utc
from mirrortree.v1 import common_pb2, tree_pb2
from mirrortree.validation import FieldChecker
from tree_service.domain import (
    MAX_GRAPH_OBJECTS,
    MAX_GRAPH_TEXT,
    MAX_OWNER,
    MAX_QUESTION,
    MAX_TITLE,
    EventTimeValue,
    IssuedBinding,
    NewQuestion,
    NewTree,
    Node,
    NodeKind,
    ObjectType,
    Realm,
    RecordedReview,
    ReviewResult,
    StoryObject,
    Tree,
)
from tree_service.errors import InvalidInput

MAX_IDEMPOTENCY_KEY = 128
KNOWN_RUNTIMES = ("Model", "OpenCode", "Continue", "DeepSeek Harness")

_REALM_FROM_PROTO = {
    tree_pb2.REAL: Realm.REAL,
    tree_pb2.WORLD: Realm.WORLD,
    tree_pb2.REHEARSAL: Realm.REHEARSAL,
}
_REALM_TO_PROTO = {v: k for k, v in _REALM_FROM_PROTO.items()}
_KIND_TO_PROTO = {
    NodeKind.QUESTION: tree_pb2.QUESTION,
    NodeKind.ANSWER: tree_pb2.ANSWER,
    NodeKind.CONTINUATION: tree_pb2.CONTINUATION,
}
_EVENT_KINDS = {
    tree_pb2.DECISION: "decision",
    tree_pb2.DISCUSSION: "discussion",
    tree_pb2.CHANGE: "change",
    tree_pb2.MILESTONE: "milestone",
}
_CONFIRMATION = {
    common_pb2.AUTO_GENERATED: "auto_generated",
    common_pb2.CONFIRMED: "confirmed",
    common_pb2.USER_REVISED: "user_revised",
    common_pb2.RETRACTED: "retracted",
}
_PRECISION = {
    common_pb2.INSTANT: "instant",
    common_pb2.MINUTE: "minute",
    common_pb2.HOUR: "hour",
    common_pb2.DAY: "day",
    common_pb2.MONTH: "month",
    common_pb2.YEAR: "year",
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
    realm: Realm | None = _REALM_FROM_PROTO.get(value)  # type: ignore[call-overload]
    if realm is None:
        check.fail(field, f"unknown realm {value}")
    return realm


# ---- requests → domain ------------------------------------------------------------------


def new_tree(request: tree_pb2.CreateTreeRequest) -> NewTree:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.text("title", request.title, MAX_TITLE)
    check.text("owner", request.owner, MAX_OWNER)
    check.identifier("project_id", request.project_id, required=False)
    realm = realm_from_proto(check, "default_realm", request.default_realm) or Realm.REAL
    check.done()
    return NewTree(request.title, request.owner, request.project_id or None, realm)


def new_question(request: tree_pb2.AskQuestionRequest) -> NewQuestion:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    check.text("text", request.text, MAX_QUESTION)
    realm = realm_from_proto(check, "realm", request.realm)
    check.done()
    return NewQuestion(request.tree_id, request.parent_id or None, request.text, realm)


def _event_time(check: Checker, field: str, value: common_pb2.EventTime) -> EventTimeValue:
    if not value.start:
        if value.end:
            check.fail(f"{field}.end", "is set but start is unknown")
        return EventTimeValue(basis=value.basis)
    start = check.time(f"{field}.start", value.start)
    end = check.time(f"{field}.end", value.end)
    if start and end and end < start:
        check.fail(f"{field}.end", "is before start")
    precision = _PRECISION.get(value.precision, "")
    return EventTimeValue(start, end, precision, value.basis)


def review_result(request: tree_pb2.RecordReviewRequest) -> ReviewResult:
    """Validate a review result and flatten it into searchable objects."""
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("result_id", request.result_id)
    scope = check.scope("scope", request.scope, required=True)
    check.text("phase", request.phase, 100)
    generated = check.time("review_generated_at", request.review_generated_at, required=True)
    covered_from = check.time("covered.from", getattr(request.covered, "from"))
    covered_to = check.time("covered.to", request.covered.to)
    if covered_from and covered_to and covered_to < covered_from:
        check.fail("covered.to", "is before covered.from")

    objects: list[StoryObject] = []
    seen: set[tuple[ObjectType, str]] = set()

    def add(field: str, obj: StoryObject) -> None:
        check.identifier(f"{field}.id", obj.object_id)
        check.text(f"{field}.title", obj.title, MAX_TITLE, required=False)
        check.text(f"{field}.body", obj.body, MAX_GRAPH_TEXT, required=False)
        if not obj.title.strip() and not obj.body.strip():
            check.fail(f"{field}", "needs a title, label or text")
        key = (obj.object_type, obj.object_id)
        if key in seen:
            check.fail(f"{field}.id", f"duplicates another {obj.object_type.value} in this result")
        seen.add(key)
        objects.append(obj)

    source_ids = {ref.id for ref in request.source_references}

    def sources(field: str, ids: list[str]) -> list[str]:
        for i, ref_id in enumerate(ids):
            if ref_id not in source_ids:
                check.fail(f"{field}[{i}]", f"names source reference {ref_id!r} not in this result")
        return ids

    for i, ref in enumerate(request.source_references):
        field = f"source_references[{i}]"
        check.identifier(f"{field}.source_type", ref.source_type)
        if ref.fragment_end < ref.fragment_start or ref.fragment_start < 0:
            check.fail(f"{field}.fragment_end", "must be >= fragment_start >= 0")
        add(
            field,
            StoryObject(
                ObjectType.SOURCE_REFERENCE,
                ref.id,
                title=f"{ref.source_type} {ref.source_id}".strip(),
                body=ref.fragment,
                object_revision=ref.source_version or None,
                details={
                    "source_type": ref.source_type,
                    "source_id": ref.source_id,
                    "source_version": ref.source_version,
                    "fragment_start": ref.fragment_start,
                    "fragment_end": ref.fragment_end,
                    "locator": {
                        "project_id": ref.locator.project_id,
                        "session_id": ref.locator.session_id,
                        "message_id": ref.locator.message_id,
                        "order": ref.locator.order,
                        "role": ref.locator.role,
                        "known": ref.locator.known,
                    },
                },
            ),
        )
    for i, line in enumerate(request.story_lines):
        field = f"story_lines[{i}]"
        add(
            field,
            StoryObject(
                ObjectType.STORY_LINE,
                line.id,
                title=line.title,
                body="",
                details={"event_ids": list(line.event_ids), "entity_ids": list(line.entity_ids)},
            ),
        )
    for i, event in enumerate(request.events):
        field = f"events[{i}]"
        if event.kind not in _EVENT_KINDS:
            check.fail(f"{field}.kind", "is required: decision, discussion, change or milestone")
        add(
            field,
            StoryObject(
                ObjectType.EVENT,
                event.id,
                title=event.title,
                body=event.description,
                kind=_EVENT_KINDS.get(event.kind),
                confirmation_state=_CONFIRMATION.get(event.confirmation_state),
                event_time=_event_time(check, f"{field}.event_time", event.event_time),
                details={
                    "entity_ids": list(event.entity_ids),
                    "source_reference_ids": sources(
                        f"{field}.source_reference_ids", list(event.source_reference_ids)
                    ),
                },
            ),
        )
    for i, entity in enumerate(request.entities):
        field = f"entities[{i}]"
        add(
            field,
            StoryObject(
                ObjectType.ENTITY,
                entity.id,
                title=entity.label,
                body=entity.description,
                object_revision=entity.revision or None,
                confirmation_state=_CONFIRMATION.get(entity.confirmation_state),
                details={
                    "source_reference_ids": sources(
                        f"{field}.source_reference_ids", list(entity.source_reference_ids)
                    )
                },
            ),
        )
    for i, summary in enumerate(request.summaries):
        field = f"summaries[{i}]"
        add(
            field,
            StoryObject(
                ObjectType.SUMMARY,
                summary.id,
                title=summary.title,
                body=summary.text,
                details={
                    "fact_refs": [
                        {"type": common_pb2.ObjectType.Name(r.type).lower(), "id": r.id}
                        for r in summary.fact_refs
                    ]
                },
            ),
        )
    if len(objects) > MAX_GRAPH_OBJECTS:
        check.fail("events", f"a result holds at most {MAX_GRAPH_OBJECTS} objects")
    for i, source_type in enumerate(request.excluded_source_types):
        check.identifier(f"excluded_source_types[{i}]", source_type)
    check.done()
    assert scope is not None and generated is not None  # guaranteed by check.done()
    return ReviewResult(
        result_id=request.result_id,
        scope=scope,
        phase=request.phase,
        covered_from=covered_from,
        covered_to=covered_to,
        review_generated_at=generated,
        objects=tuple(objects),
        excluded_source_types=tuple(request.excluded_source_types),
    )


def binding_request(request: tree_pb2.CreateBindingRequest) -> tuple[str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("session_id", request.session_id)
    if request.runtime not in KNOWN_RUNTIMES:
        check.fail("runtime", f"must be one of {', '.join(KNOWN_RUNTIMES)}")
    check.done()
    return request.session_id, request.runtime


# ---- domain → responses -----------------------------------------------------------------


def tree_to_proto(tree: Tree) -> tree_pb2.Tree:
    return tree_pb2.Tree(
        id=tree.id,
        title=tree.title,
        owner=tree.owner,
        project_id=tree.project_id or "",
        default_realm=_REALM_TO_PROTO[tree.default_realm],
        revision=tree.revision,
        created_at=format_utc(tree.created_at),
        updated_at=format_utc(tree.updated_at),
    )


def node_to_proto(node: Node) -> tree_pb2.Node:
    return tree_pb2.Node(
        id=node.id,
        tree_id=node.tree_id,
        parent_id=node.parent_id or "",
        kind=_KIND_TO_PROTO[node.kind],
        realm=_REALM_TO_PROTO[node.realm],
        text=node.text,
        revision=node.revision,
        ordinal=node.ordinal,
        created_at=format_utc(node.created_at),
    )


def recorded_to_proto(recorded: RecordedReview) -> tree_pb2.RecordReviewResponse:
    return tree_pb2.RecordReviewResponse(
        result_id=recorded.result_id,
        recorded_at=format_utc(recorded.recorded_at),
        graph_revision=recorded.graph_revision,
        object_count=recorded.object_count,
    )


def binding_to_proto(binding: IssuedBinding) -> tree_pb2.CreateBindingResponse:
    return tree_pb2.CreateBindingResponse(
        binding_id=binding.binding_id,
        token=binding.token,
        session_id=binding.session_id,
        runtime=binding.runtime,
        project_id=binding.project_id or "",
    )
