"""Proto ↔ domain conversion for the tree service, with input validation at the edge.

Validation collects every violation (dotted field paths such as `events[2].title`) before
raising, so a client sees all of its mistakes at once and nothing is written.
"""

from __future__ import annotations

import uuid

from mirrortree.protoscope import scope_to_proto
from mirrortree.timefmt import format_utc
from mirrortree.v1 import common_pb2, costs_pb2, tree_pb2
from mirrortree.validation import FieldChecker, shown
from mirrortree.violations import FieldViolation
from tree_service import canon_projection
from tree_service.citations import messages as citation_messages
from tree_service.domain import (
    MAX_LIST,
    MAX_OWNER,
    MAX_QUESTION,
    MAX_SHORT,
    MAX_TITLE,
    AnswerState,
    Attachment,
    Canonicalization,
    CanonicalScope,
    ContinuationKind,
    Generated,
    IssuedBinding,
    MainLineVersion,
    NewAnswer,
    NewContinuation,
    NewQuestion,
    NewTree,
    Node,
    NodeKind,
    PreferenceRecord,
    QuestionEdit,
    Realm,
    RealmChoice,
    RecordedReview,
    SourceRecord,
    ToolTraceEntry,
    Tree,
)
from tree_service.errors import InvalidInput
from tree_service.lifecycle.enums import LIFECYCLE_TO_PROTO, STATE_TO_PROTO
from tree_service.lifecycle.rules import AnswerLifecycle, BranchState

MAX_IDEMPOTENCY_KEY = 128
MAX_ANSWER = 1_000_000  # code points, also of all of a streamed answer's chunks together
MAX_CHUNK = 16_000
MAX_SUMMARY = 20_000
MAX_WORLD = 200
KNOWN_RUNTIMES = ("Model", "OpenCode", "Continue", "DeepSeek Harness")

_REALM_FROM_PROTO = {
    tree_pb2.REAL: Realm.REAL,
    tree_pb2.WORLD: Realm.WORLD,
    tree_pb2.REHEARSAL: Realm.REHEARSAL,
}
_REALM_TO_PROTO = {v: k for k, v in _REALM_FROM_PROTO.items()}
_CONTINUATION_KINDS = {
    tree_pb2.ELABORATION: ContinuationKind.ELABORATION,
    tree_pb2.VERIFICATION: ContinuationKind.VERIFICATION,
    tree_pb2.TOOL_WORK: ContinuationKind.TOOL_WORK,
    tree_pb2.DEEPER_REASONING: ContinuationKind.DEEPER_REASONING,
}
_CONTINUATION_TO_PROTO = {v: k for k, v in _CONTINUATION_KINDS.items()}
_ANSWER_STATE_TO_PROTO = {
    AnswerState.STREAMING: tree_pb2.STREAMING,
    AnswerState.SEALED: tree_pb2.SEALED,
    AnswerState.FROZEN: tree_pb2.FROZEN,
}
_SCOPE_TO_PROTO = {
    CanonicalScope.REAL_EXPERIENCE: tree_pb2.REAL_EXPERIENCE,
    CanonicalScope.WORLD_CANON: tree_pb2.WORLD_CANON,
    CanonicalScope.REHEARSAL: tree_pb2.REHEARSAL_RECORD,
}
_SCOPE_FROM_PROTO = {v: k for k, v in _SCOPE_TO_PROTO.items()}
_KIND_TO_PROTO = {
    NodeKind.QUESTION: tree_pb2.QUESTION,
    NodeKind.ANSWER: tree_pb2.ANSWER,
    NodeKind.CONTINUATION: tree_pb2.CONTINUATION,
    NodeKind.COMPARISON: tree_pb2.COMPARISON,
    NodeKind.OBSERVATION: tree_pb2.OBSERVATION,
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


# ---- requests → domain ------------------------------------------------------------------


def new_tree(request: tree_pb2.CreateTreeRequest) -> NewTree:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.text("title", request.title, MAX_TITLE)
    check.text("owner", request.owner, MAX_OWNER)
    check.identifier("project_id", request.project_id, required=False)
    if canon_projection.is_reserved_project(request.project_id):
        check.fail("project_id", canon_projection.RESERVED_PROJECT_ADVICE)
    choice = realm_choice(check, request.default_realm, request.default_world, "default_")
    check.done()
    return NewTree(
        request.title,
        request.owner,
        request.project_id or None,
        choice.realm or Realm.REAL,
        choice.world,
    )


def new_question(request: tree_pb2.AskQuestionRequest) -> NewQuestion:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    check.identifier("parent_id", request.parent_id, required=False)
    check.text("text", request.text, MAX_QUESTION)
    choice = realm_choice(check, request.realm, request.world)
    run = conditions(check, "conditions", request.conditions)
    ungenerated(check, "conditions", request.conditions)
    attached = attachments(check, list(request.attachments))
    cited = citation_messages.citations(check, list(request.citations))
    check.done()
    return NewQuestion(
        request.tree_id,
        request.parent_id or None,
        request.text,
        choice,
        run,
        attached,
        cited,
    )


def question_edit(request: tree_pb2.EditQuestionRequest) -> QuestionEdit:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the question's current revision")
    check.text("text", request.text, MAX_QUESTION)
    run = conditions(check, "conditions", request.conditions)
    ungenerated(check, "conditions", request.conditions)
    attached = attachments(check, list(request.attachments))
    cited = citation_messages.citations(check, list(request.citations))
    check.done()
    return QuestionEdit(
        request.question_id, request.expected_revision, request.text, run, attached, cited
    )


def new_answer(request: tree_pb2.AddAnswerRequest) -> NewAnswer:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    check.text("text", request.text, MAX_ANSWER)
    made = generated(check, "content", request.content)
    choice = realm_choice(check, request.realm, request.world)
    check.identifier("context_version_id", request.context_version_id, required=False)
    check.done()
    return NewAnswer(
        request.question_id,
        request.text,
        made,
        choice,
        context_version_id=request.context_version_id or None,
    )


def bud_open(message: tree_pb2.StreamAnswerRequest.Open) -> NewAnswer:
    check = Checker()
    check.idempotency_key(message.idempotency_key)
    check.identifier("open.question_id", message.question_id)
    check.identifier("open.extends_answer_id", message.extends_answer_id, required=False)
    made = generated(check, "open.content", message.content)
    choice = realm_choice(check, message.realm, message.world, "open.")
    check.identifier("open.context_version_id", message.context_version_id, required=False)
    check.done()
    return NewAnswer(
        message.question_id,
        "",
        made,
        choice,
        AnswerState.STREAMING,
        message.extends_answer_id or None,
        message.context_version_id or None,
    )


def chunk(message: tree_pb2.StreamAnswerRequest.Chunk, expected_seq: int, length: int) -> None:
    """A chunk must be the next in sequence (or a re-send of an acknowledged one), and the
    bud's text (`length` code points so far) may not outgrow an answer's limit: a sealed or
    frozen answer is then read whole in one response."""
    check = Checker()
    if message.seq < 1 or message.seq > expected_seq:
        check.fail(
            "chunk.seq",
            f"is {message.seq}; the next chunk is {expected_seq} (1-based, without gaps)",
        )
    # Not Checker.text: whitespace is content inside a stream ("\n\n" between paragraphs),
    # so any non-empty text is a chunk.
    if not message.text:
        check.fail("chunk.text", "must not be empty")
    elif len(message.text) > MAX_CHUNK:
        check.fail(
            "chunk.text", f"is {len(message.text)} characters long; the limit is {MAX_CHUNK}"
        )
    elif "\x00" in message.text:
        check.fail("chunk.text", "contains a NUL character")
    elif message.seq == expected_seq and length + len(message.text) > MAX_ANSWER:
        check.fail(
            "chunk.text",
            f"would make the answer {length + len(message.text)} characters long; the limit "
            f"is {MAX_ANSWER} (continue in a new answer that extends this one)",
        )
    check.done()


def bud_complete(message: tree_pb2.StreamAnswerRequest.Complete) -> Generated:
    check = Checker()
    made = generated(check, "complete.content", message.content)
    check.done()
    return made


def new_continuation(request: tree_pb2.AddContinuationRequest) -> NewContinuation:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("answer_id", request.answer_id)
    kind = _CONTINUATION_KINDS.get(request.kind)
    if kind is None:
        check.fail("kind", "is required: elaboration, verification, tool_work or deeper_reasoning")
    check.text("text", request.text, MAX_ANSWER)
    made = generated(check, "content", request.content)
    choice = realm_choice(check, request.realm, request.world)
    check.done()
    assert kind is not None
    return NewContinuation(request.answer_id, kind, request.text, made, choice)


def adoption(request: tree_pb2.AdoptAnswerRequest) -> tuple[str, str, int]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    check.identifier("answer_id", request.answer_id)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the question's current revision")
    check.done()
    return request.question_id, request.answer_id, request.expected_revision


def canonicalization(request: tree_pb2.CanonicalizeRequest) -> Canonicalization:
    """Only a user's explicit confirmation canonicalizes (T9/T10)."""
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    if not request.confirmation.confirmed:
        check.fail(
            "confirmation.confirmed",
            "must be true: canonicalization happens only on a user's confirmation",
        )
    check.identifier("confirmation.user_id", request.confirmation.user_id)
    if request.confirmation.invitation_id:
        try:
            uuid.UUID(request.confirmation.invitation_id)
        except ValueError:
            check.fail("confirmation.invitation_id", "is not a valid id (a UUID)")
    if request.expected_version < 0:
        check.fail("expected_version", "must be the main line's current version (0 = none)")
    which = request.WhichOneof("selection")
    node_ids: tuple[str, ...] = ()
    if which is None:
        check.fail("selection", "name leaf_node_id (a path) or nodes (selected nodes)")
    elif which == "leaf_node_id":
        check.identifier("leaf_node_id", request.leaf_node_id)
    else:
        node_ids = tuple(request.nodes.node_ids)
        if not node_ids:
            check.fail("nodes.node_ids", "must name at least one node")
        if len(node_ids) > 1000:
            check.fail("nodes.node_ids", "holds more than 1000 nodes")
        if len(set(node_ids)) != len(node_ids):
            check.fail("nodes.node_ids", "names a node twice")
        for i, node_id in enumerate(node_ids):
            check.identifier(f"nodes.node_ids[{i}]", node_id)
    check.done()
    return Canonicalization(
        tree_id=request.tree_id,
        leaf_node_id=request.leaf_node_id if which == "leaf_node_id" else None,
        node_ids=node_ids,
        confirmed_by=request.confirmation.user_id,
        invitation_id=request.confirmation.invitation_id or None,
        expected_version=request.expected_version,
    )


def page_token(check: Checker, value: str) -> int:
    """Tokens are positions this service issued (a path never changes, ordinals never move)."""
    return check.counter("page_token", value, required=False) or 0


def scope_filter(value: int) -> CanonicalScope | None:
    if value == tree_pb2.CANONICAL_SCOPE_UNSPECIFIED:
        return None
    scope: CanonicalScope | None = _SCOPE_FROM_PROTO.get(value)  # type: ignore[call-overload]
    if scope is None:
        raise InvalidInput.one("scope", f"unknown canonical scope {value}")
    return scope


def binding_request(request: tree_pb2.CreateBindingRequest) -> tuple[str, str, list[str]]:
    """(session, runtime, scope keys the binding may also name explicitly)."""
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("session_id", request.session_id)
    if request.runtime not in KNOWN_RUNTIMES:
        check.fail("runtime", f"must be one of {', '.join(KNOWN_RUNTIMES)}")
    allowed = [
        check.scope(f"allowed_scopes[{i}]", scope, required=True)
        for i, scope in enumerate(request.allowed_scopes)
    ]
    check.done()
    return (
        request.session_id,
        request.runtime,
        sorted({scope.key for scope in allowed if scope is not None}),
    )


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
        default_world=tree.default_world or "",
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
        world=node.world or "",
        conditions=tree_pb2.RunConditions(
            model_strategy=str(node.conditions.get("model_strategy", "")),
            parameters=node.conditions.get("parameters", {}),
            estimate_id=str(node.conditions.get("estimate_id", "")),
        ),
        attachments=[tree_pb2.Attachment(**a) for a in node.attachments],
        citations=[citation_messages.citation_to_proto(c) for c in node.citations],
        version_of=node.version_of or "",
        version=node.version if node.kind is NodeKind.QUESTION else 0,
        adopted_answer_id=node.adopted_answer_id or "",
        answer_state=_ANSWER_STATE_TO_PROTO.get(node.answer_state, 0),  # type: ignore[arg-type]
        stop_reason=node.stop_reason or "",
        acknowledged_chunks=node.acked_chunks,
        extends_answer_id=node.extends_answer_id or "",
        continuation_kind=_CONTINUATION_TO_PROTO.get(node.continuation_kind, 0),  # type: ignore[arg-type]
        reasoning_summary=node.reasoning_summary,
        evidence=list(node.evidence),
        tool_trace=[tree_pb2.ToolTraceEntry(**t) for t in node.tool_trace],
        context_version_id=node.context_version_id or "",
        lifecycle=LIFECYCLE_TO_PROTO.get(AnswerLifecycle(node.lifecycle), 0)  # type: ignore[arg-type]
        if node.lifecycle
        else 0,
        branch_state=STATE_TO_PROTO[BranchState(node.branch_state)]
        if node.branch_state
        else tree_pb2.BRANCH_STATE_UNSPECIFIED,
        branch_id=node.branch_id or "",
        comparison=_comparison_to_proto(node),
    )


def _comparison_to_proto(node: Node) -> costs_pb2.Comparison | None:
    if node.comparison is None:
        return None
    return costs_pb2.Comparison(
        answer_ids=node.comparison["answer_ids"],
        criteria=node.comparison["criteria"],
        verdict=node.text,
        preferred_answer_id=node.comparison.get("preferred_answer_id") or "",
    )


def version_to_proto(version: MainLineVersion) -> tree_pb2.MainLineVersion:
    policy = version.policy
    return tree_pb2.MainLineVersion(
        id=version.id,
        tree_id=version.tree_id,
        scope=_SCOPE_TO_PROTO[version.scope],
        world=version.world,
        version=version.version,
        node_ids=list(version.node_ids),
        snapshot=[node_to_proto(n) for n in version.snapshot],
        confirmed_by=version.confirmed_by,
        created_at=format_utc(version.created_at),
        candidates=[
            tree_pb2.CanonCandidate(
                id=c.id, kind=c.kind, detail=c.detail, status=c.status, version_id=version.id
            )
            for c in version.candidates
        ],
        forbidden_effects=list(policy.forbidden_effects),
        manual_extractions=list(policy.manual_extractions),
        replaces_version_id=version.replaces_version_id or "",
        story_graph_scope=scope_to_proto(version.graph_scope) if version.graph_scope else None,
        invitation_id=version.invitation_id or "",
    )


def recorded_to_proto(recorded: RecordedReview) -> tree_pb2.RecordReviewResponse:
    return tree_pb2.RecordReviewResponse(
        result_id=recorded.result_id,
        recorded_at=format_utc(recorded.recorded_at),
        graph_revision=recorded.graph_revision,
        object_count=recorded.object_count,
    )


def source_record_to_proto(record: SourceRecord) -> tree_pb2.RecordSourceResponse:
    return tree_pb2.RecordSourceResponse(
        source_id=record.source_id,
        revision=record.revision,
        updated_at=format_utc(record.updated_at),
    )


def preference_to_proto(record: PreferenceRecord) -> tree_pb2.Preference:
    return tree_pb2.Preference(
        id=record.preference_id,
        scope=scope_to_proto(record.scope),
        subject=record.subject,
        text=record.text,
        about=[common_pb2.ObjectRef(type=a["type"].upper(), id=a["id"]) for a in record.about],
        confirmed_by=record.confirmed_by,
        revision=record.revision,
        updated_at=format_utc(record.updated_at),
    )


def binding_to_proto(binding: IssuedBinding) -> tree_pb2.CreateBindingResponse:
    return tree_pb2.CreateBindingResponse(
        binding_id=binding.binding_id,
        token=binding.token,
        session_id=binding.session_id,
        runtime=binding.runtime,
        project_id=binding.project_id or "",
    )
