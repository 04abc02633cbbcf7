"""Domain types of the tree service: frozen dataclasses, free of grpc, asyncpg and proto code."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from mirrortree.object_types import OBJECT_TYPE_RANKS
from mirrortree.scopes import ScopeValue

MAX_TITLE = 500
MAX_LIST = 100  # attachments, citations, evidence items, tool-trace entries, parameters
MAX_SHORT = 2_000  # names, notes, summaries of one tool step, parameter values
MAX_OWNER = 200
MAX_QUESTION = 100_000
MAX_GRAPH_TEXT = 100_000
MAX_GRAPH_OBJECTS = 10_000


class Realm(StrEnum):
    REAL = "real"
    WORLD = "world"
    REHEARSAL = "rehearsal"


class NodeKind(StrEnum):
    QUESTION = "question"
    ANSWER = "answer"
    CONTINUATION = "continuation"
    COMPARISON = "comparison"
    OBSERVATION = "observation"  # a delegated task's result on its branch (T19)


class ObjectType(StrEnum):
    """Story-graph object types; their tie-break rank in search results is in object_types."""

    STORY_LINE = "story_line"
    EVENT = "event"
    ENTITY = "entity"
    ENTITY_CHANGE = "entity_change"
    RELATION = "relation"
    SUMMARY = "summary"
    SOURCE_REFERENCE = "source_reference"
    LEAF_FACT = "leaf_fact"

    @property
    def rank(self) -> int:
        return OBJECT_TYPE_RANKS[self.value]


class ContinuationKind(StrEnum):
    ELABORATION = "elaboration"
    VERIFICATION = "verification"
    TOOL_WORK = "tool_work"
    DEEPER_REASONING = "deeper_reasoning"


class AnswerState(StrEnum):
    STREAMING = "streaming"
    SEALED = "sealed"
    FROZEN = "frozen"


class CanonicalScope(StrEnum):
    REAL_EXPERIENCE = "real_experience"
    WORLD_CANON = "world_canon"
    REHEARSAL = "rehearsal"


class StopReason(StrEnum):
    CLIENT_CLOSED = "client_closed"
    CANCELLED = "cancelled"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    SERVER_LOST = "server_lost"  # the process serving the stream died; its lease ran out
    SAFETY_STOP = "safety_stop"  # a safety stop was stated in the tree while it streamed


class AnswerLifecycle(StrEnum):
    """An answer's place in its question's life (T22), derived from the tree on every read."""

    CANDIDATE = "candidate"
    ADOPTED = "adopted"
    IN_EXPLORATION = "in_exploration"
    CANONICALIZED = "canonicalized"


class BranchState(StrEnum):
    """The state of the branch under a node (T13); a node in no moved branch is active."""

    ACTIVE = "active"
    PAUSED = "paused"
    CONCLUDED = "concluded"
    ARCHIVED = "archived"
    PURGED = "purged"  # reached only by a purge (T16), and final


@dataclass(frozen=True)
class CanonPolicy:
    """What canonicalizing into one scope may produce and may never cause (the canonical-scope
    table of the mirror-tree model)."""

    candidate_kinds: tuple[str, ...]  # what a caller may propose, each awaiting review
    manual_extractions: tuple[str, ...]  # what a user may later extract by hand
    forbidden_effects: tuple[str, ...]


CANON_POLICIES: dict[CanonicalScope, CanonPolicy] = {
    CanonicalScope.REAL_EXPERIENCE: CanonPolicy(
        candidate_kinds=("real_record", "heart_trace", "memory_candidate"),
        manual_extractions=(),
        forbidden_effects=(
            "memory_reconsolidation_approval",
            "bond",
            "persona_change",
            "authorization",
            "real_world_action",
        ),
    ),
    CanonicalScope.WORLD_CANON: CanonPolicy(
        candidate_kinds=("world_record", "world_memory", "world_relationship_meaning"),
        manual_extractions=(),
        forbidden_effects=(
            "real_truth_update",
            "real_bond",
            "real_authorization",
            "cost",
            "external_consequence",
        ),
    ),
    CanonicalScope.REHEARSAL: CanonPolicy(
        candidate_kinds=("rehearsal_record",),
        manual_extractions=("insight", "opinion", "hypothesis"),
        forbidden_effects=(
            "real_record",
            "real_bond",
            "real_authorization",
            "persona_truth",
            "external_action",
        ),
    ),
}

REALM_SCOPES = {
    Realm.REAL: CanonicalScope.REAL_EXPERIENCE,
    Realm.WORLD: CanonicalScope.WORLD_CANON,
    Realm.REHEARSAL: CanonicalScope.REHEARSAL,
}


class RealmPolicyError(ValueError):
    """The selected nodes cannot be canonicalized together; the message says why."""


def rule_canonical_scope(realms: list[tuple[Realm, str | None]]) -> tuple[CanonicalScope, str]:
    """The realm policy: one realm (and one world) → its scope; anything mixed is refused.

    Canon established in a world or a rehearsal holds only there ("words may enter illusion,
    actions must return to truth"), so a selection spanning realms has no single scope.
    """
    kinds = {realm for realm, _ in realms}
    if len(kinds) != 1:
        names = ", ".join(sorted(r.value for r in kinds))
        raise RealmPolicyError(
            f"the selection mixes realms ({names}); canonicalize each realm's nodes separately"
        )
    realm = kinds.pop()
    worlds = {world or "" for _, world in realms}
    if len(worlds) != 1:
        raise RealmPolicyError(
            f"the selection spans worlds ({', '.join(sorted(worlds))}); a world canon holds "
            "for one world only"
        )
    return REALM_SCOPES[realm], worlds.pop()


@dataclass(frozen=True)
class Tree:
    id: str
    title: str
    owner: str
    project_id: str | None
    default_realm: Realm
    revision: int
    created_at: datetime
    updated_at: datetime
    default_world: str | None = None


@dataclass(frozen=True)
class ToolTraceEntry:
    tool: str
    input_summary: str
    output_summary: str


@dataclass(frozen=True)
class Generated:
    """How an answer or continuation came about (readable reasoning only)."""

    conditions: dict[str, Any] = field(default_factory=dict)
    reasoning_summary: str = ""
    evidence: tuple[str, ...] = ()
    tool_trace: tuple[ToolTraceEntry, ...] = ()


@dataclass(frozen=True)
class Attachment:
    id: str
    name: str
    media_type: str
    size_bytes: int
    width: int = 0
    height: int = 0
    page_count: int = 0
    duration_ms: int = 0
    text_length: int = 0


@dataclass(frozen=True)
class CitationRequest:
    node_id: str
    start: int
    end: int  # 0 with start 0: the whole text
    note: str
    # An attachment region instead of a text range: {"attachment_id": …, <kind>: {…}}.
    anchor: dict[str, Any] | None = None
    excerpt: str = ""  # the anchored content as text, when the caller gives it
    authorization_id: str = ""  # a cross-person grant


@dataclass(frozen=True)
class Node:
    id: str
    tree_id: str
    parent_id: str | None
    kind: NodeKind
    realm: Realm
    text: str
    revision: int
    ordinal: int
    created_at: datetime
    world: str | None = None
    conditions: dict[str, Any] = field(default_factory=dict)
    attachments: tuple[dict[str, Any], ...] = ()
    citations: tuple[dict[str, Any], ...] = ()
    version_of: str | None = None
    version: int = 1
    adopted_answer_id: str | None = None
    answer_state: AnswerState | None = None
    stop_reason: str | None = None
    acked_chunks: int = 0
    extends_answer_id: str | None = None
    continuation_kind: ContinuationKind | None = None
    reasoning_summary: str = ""
    evidence: tuple[str, ...] = ()
    tool_trace: tuple[dict[str, Any], ...] = ()
    context_version_id: str | None = None
    lifecycle: str | None = None  # answers: an AnswerLifecycle value
    branch_state: str | None = None  # a BranchState value, on reads that place the node
    branch_id: str | None = None
    comparison: dict[str, Any] | None = None  # comparisons: answer_ids, criteria, preferred


@dataclass(frozen=True)
class NewTree:
    title: str
    owner: str
    project_id: str | None
    default_realm: Realm
    default_world: str | None = None


@dataclass(frozen=True)
class RealmChoice:
    """An explicit realm switch (None: inherit from the parent, else the tree default)."""

    realm: Realm | None
    world: str | None


@dataclass(frozen=True)
class NewQuestion:
    tree_id: str
    parent_id: str | None
    text: str
    realm: RealmChoice = field(default_factory=lambda: RealmChoice(None, None))
    conditions: dict[str, Any] = field(default_factory=dict)
    attachments: tuple[Attachment, ...] = ()
    citations: tuple[CitationRequest, ...] = ()


@dataclass(frozen=True)
class QuestionEdit:
    question_id: str
    expected_revision: int
    text: str
    conditions: dict[str, Any]
    attachments: tuple[Attachment, ...]
    citations: tuple[CitationRequest, ...]


@dataclass(frozen=True)
class NewAnswer:
    question_id: str
    text: str
    generated: Generated
    realm: RealmChoice
    state: AnswerState = AnswerState.SEALED
    extends_answer_id: str | None = None
    context_version_id: str | None = None


@dataclass(frozen=True)
class NewContinuation:
    answer_id: str
    kind: ContinuationKind
    text: str
    generated: Generated
    realm: RealmChoice


@dataclass(frozen=True)
class CandidateProposal:
    """A canon candidate as the caller proposes it (seed 001 §6)."""

    kind: str
    tier: str  # a memory candidate's tier, else ""
    subject: str  # what a memory is about, else ""
    text: str


@dataclass(frozen=True)
class Canonicalization:
    tree_id: str
    leaf_node_id: str | None  # path mode
    node_ids: tuple[str, ...]  # selection mode
    confirmed_by: str
    invitation_id: str | None
    expected_version: int
    candidates: tuple[CandidateProposal, ...] = ()


@dataclass(frozen=True)
class CanonCandidate:
    id: str
    kind: str
    detail: str
    status: str
    revision: int = 1
    reviewed_by: str | None = None
    review_reason: str = ""
    reviewed_at: datetime | None = None
    version_id: str = ""
    subject: str = ""
    text: str = ""
    memory_id: str | None = None


@dataclass(frozen=True)
class MainLineVersion:
    id: str
    tree_id: str
    scope: CanonicalScope
    world: str
    version: int
    node_ids: tuple[str, ...]
    snapshot: tuple[Node, ...]
    confirmed_by: str
    created_at: datetime
    candidates: tuple[CanonCandidate, ...]
    replaces_version_id: str | None
    # The story-graph scope the version is projected into (its canon scope), when known.
    graph_scope: ScopeValue | None = None
    invitation_id: str | None = None  # the invitation it accepted (T10)

    @property
    def policy(self) -> CanonPolicy:
        return CANON_POLICIES[self.scope]


@dataclass(frozen=True)
class EventTimeValue:
    """When something happened; `start` None means unknown (never filled from review time)."""

    start: datetime | None = None
    end: datetime | None = None
    precision: str = ""
    basis: str = ""


@dataclass(frozen=True)
class StoryObject:
    """One searchable object of a review result, in the shape the read side stores."""

    object_type: ObjectType
    object_id: str
    title: str
    body: str
    kind: str | None = None
    object_revision: str | None = None  # None: unknown
    confirmation_state: str | None = None
    event_time: EventTimeValue = field(default_factory=EventTimeValue)
    details: dict[str, Any] = field(default_factory=dict)
    # (link, to_type, to_id): what this object points at (see graph_links).
    links: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class EndReference:
    """An object a result points at by stable id; it must exist in this result or in an
    earlier result of the same scope (or be a preference that applies to the scope)."""

    field: str  # the request field that names it, for the error message
    object_type: str
    object_id: str


# ---- a review's declared leaf extraction (shared leaves, G9) ----


@dataclass(frozen=True)
class Part:
    """A part of a source version; `end` None means the whole version."""

    field: str  # the request field that named it, e.g. "leaf_extraction.parts[0]"
    source_type: str
    source_id: str
    source_version: str
    start: int
    end: int | None

    @property
    def source(self) -> tuple[str, str, str]:
        return (self.source_type, self.source_id, self.source_version)


@dataclass(frozen=True)
class LeafKey:
    """What one leaf fact of a review was extracted from, and its text's digest."""

    field: str  # "leaf_facts[2]"
    object_id: str
    source_type: str
    source_id: str
    source_version: str
    start: int
    end: int
    text: str
    text_hash: bytes

    @property
    def source(self) -> tuple[str, str, str]:
        return (self.source_type, self.source_id, self.source_version)


@dataclass(frozen=True)
class LeafExtraction:
    contract_version: str
    reanalysis: bool
    parts: tuple[Part, ...]
    leaves: tuple[LeafKey, ...]


@dataclass(frozen=True)
class ReviewResult:
    result_id: str
    scope: ScopeValue
    phase: str
    covered_from: datetime | None
    covered_to: datetime | None
    review_generated_at: datetime
    objects: tuple[StoryObject, ...]
    excluded_source_types: tuple[str, ...]
    external_references: tuple[EndReference, ...] = ()  # ends outside this result
    coverage_gaps: tuple[str, ...] = ()
    # The request element each object came from, (type, id) → "source_references[2]", so
    # that a refusal the store decides names the field; empty for results built in-process.
    fields: dict[tuple[str, str], str] = field(default_factory=dict)
    # How its coverage is known: "interval" (covered_from..covered_to), "counts" (only the
    # counts, (what, count) pairs) or "unknown".
    coverage_basis: str = "interval"
    coverage_counts: tuple[tuple[str, int], ...] = ()
    # G9: the extraction the review declared, its leaf facts keyed; None = scope-local leaves.
    leaf_extraction: LeafExtraction | None = None


@dataclass(frozen=True)
class RecordedReview:
    result_id: str
    recorded_at: datetime
    graph_revision: int
    object_count: int


@dataclass(frozen=True)
class IssuedBinding:
    binding_id: str
    token: str  # "" when replayed: the secret is shown once
    session_id: str
    runtime: str
    project_id: str | None


@dataclass(frozen=True)
class NewSourceRevision:
    source_id: str
    source_type: str
    project_id: str | None
    title: str
    text: str | None  # None: the source is deleted
    expected_revision: int  # 0: create


@dataclass(frozen=True)
class SourceRecord:
    source_id: str
    revision: int
    updated_at: datetime


@dataclass(frozen=True)
class NewPreference:
    preference_id: str
    scope: ScopeValue
    subject: str
    text: str
    about: tuple[dict[str, str], ...]
    confirmed_by: str
    expected_revision: int  # 0: create


@dataclass(frozen=True)
class PreferenceRecord:
    preference_id: str
    scope: ScopeValue
    subject: str
    text: str
    about: tuple[dict[str, str], ...]
    confirmed_by: str
    revision: int
    updated_at: datetime


# The one gated capability, and the key of a session's own switch in its context state.
CAPABILITY_ID = "story-graph"
SESSION_SWITCH = "story_graph_enabled"


@dataclass(frozen=True)
class AppSettings:
    """The switches that gate the story-graph tools, each row with its own revision."""

    heartbeat_enabled: bool
    app_revision: int
    story_graph_enabled: bool
    assignments: tuple[str, ...]
    capability_revision: int


@dataclass(frozen=True)
class SessionContext:
    session_id: str
    story_graph_enabled: bool
    context_state: str  # a JSON object
    revision: int
