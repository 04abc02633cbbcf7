from mirrortree.v1 import common_pb2 as _common_pb2
from mirrortree.v1 import costs_pb2 as _costs_pb2
from mirrortree.v1 import leaves_pb2 as _leaves_pb2
from mirrortree.v1 import options_pb2 as _options_pb2
from mirrortree.v1 import purge_pb2 as _purge_pb2
from mirrortree.v1 import tasks_pb2 as _tasks_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Realm(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REALM_UNSPECIFIED: _ClassVar[Realm]
    REAL: _ClassVar[Realm]
    WORLD: _ClassVar[Realm]
    REHEARSAL: _ClassVar[Realm]

class NodeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_KIND_UNSPECIFIED: _ClassVar[NodeKind]
    QUESTION: _ClassVar[NodeKind]
    ANSWER: _ClassVar[NodeKind]
    CONTINUATION: _ClassVar[NodeKind]
    COMPARISON: _ClassVar[NodeKind]
    OBSERVATION: _ClassVar[NodeKind]

class ContinuationKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTINUATION_KIND_UNSPECIFIED: _ClassVar[ContinuationKind]
    ELABORATION: _ClassVar[ContinuationKind]
    VERIFICATION: _ClassVar[ContinuationKind]
    TOOL_WORK: _ClassVar[ContinuationKind]
    DEEPER_REASONING: _ClassVar[ContinuationKind]

class AnswerState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ANSWER_STATE_UNSPECIFIED: _ClassVar[AnswerState]
    STREAMING: _ClassVar[AnswerState]
    SEALED: _ClassVar[AnswerState]
    FROZEN: _ClassVar[AnswerState]

class CitationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CITATION_STATUS_UNSPECIFIED: _ClassVar[CitationStatus]
    CITATION_CURRENT: _ClassVar[CitationStatus]
    CITATION_SUPERSEDED: _ClassVar[CitationStatus]
    CITATION_REVOKED: _ClassVar[CitationStatus]
    CITATION_PURGED: _ClassVar[CitationStatus]
    CITATION_SOURCE_PURGED: _ClassVar[CitationStatus]

class CanonicalScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CANONICAL_SCOPE_UNSPECIFIED: _ClassVar[CanonicalScope]
    REAL_EXPERIENCE: _ClassVar[CanonicalScope]
    WORLD_CANON: _ClassVar[CanonicalScope]
    REHEARSAL_RECORD: _ClassVar[CanonicalScope]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    DECISION: _ClassVar[EventKind]
    DISCUSSION: _ClassVar[EventKind]
    CHANGE: _ClassVar[EventKind]
    MILESTONE: _ClassVar[EventKind]

class RelationKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RELATION_KIND_UNSPECIFIED: _ClassVar[RelationKind]
    REVISED: _ClassVar[RelationKind]
    CONTRASTS: _ClassVar[RelationKind]
    REPLACES: _ClassVar[RelationKind]
    CONTRADICTS: _ClassVar[RelationKind]

class CommitmentKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMMITMENT_KIND_UNSPECIFIED: _ClassVar[CommitmentKind]
    SAFETY_STOP: _ClassVar[CommitmentKind]
    AUTHORIZATION: _ClassVar[CommitmentKind]
    RELATIONSHIP: _ClassVar[CommitmentKind]
    EXPERIENCE: _ClassVar[CommitmentKind]
    STATED_FACT: _ClassVar[CommitmentKind]

class CommitmentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMMITMENT_STATE_UNSPECIFIED: _ClassVar[CommitmentState]
    IN_EFFECT: _ClassVar[CommitmentState]
    AWAITING_CONFIRMATION: _ClassVar[CommitmentState]
    AWAITING_CANONICALIZATION: _ClassVar[CommitmentState]
    NEVER_IN_EFFECT: _ClassVar[CommitmentState]
    WITHDRAWN: _ClassVar[CommitmentState]

class ContextLayer(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTEXT_LAYER_UNSPECIFIED: _ClassVar[ContextLayer]
    HARD_BOUNDARY: _ClassVar[ContextLayer]
    CURRENT_NODE: _ClassVar[ContextLayer]
    PARENT_CHAIN: _ClassVar[ContextLayer]
    EXPLICIT_ANCHOR: _ClassVar[ContextLayer]
    LONG_TERM_MEMORY: _ClassVar[ContextLayer]
    OLDER_ANCESTOR: _ClassVar[ContextLayer]
    TOOL_RESULT: _ClassVar[ContextLayer]
    SIDE_BRANCH_CITATION: _ClassVar[ContextLayer]
    ATTACHMENT: _ClassVar[ContextLayer]

class ContextInclusion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTEXT_INCLUSION_UNSPECIFIED: _ClassVar[ContextInclusion]
    INCLUDED_VERBATIM: _ClassVar[ContextInclusion]
    INCLUDED_AS_SUMMARY: _ClassVar[ContextInclusion]
    INCLUDED_AS_FRAGMENT: _ClassVar[ContextInclusion]
    OMITTED: _ClassVar[ContextInclusion]

class AnswerLifecycle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ANSWER_LIFECYCLE_UNSPECIFIED: _ClassVar[AnswerLifecycle]
    CANDIDATE: _ClassVar[AnswerLifecycle]
    ADOPTED: _ClassVar[AnswerLifecycle]
    IN_EXPLORATION: _ClassVar[AnswerLifecycle]
    CANONICALIZED: _ClassVar[AnswerLifecycle]

class BranchState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BRANCH_STATE_UNSPECIFIED: _ClassVar[BranchState]
    ACTIVE: _ClassVar[BranchState]
    PAUSED: _ClassVar[BranchState]
    CONCLUDED: _ClassVar[BranchState]
    ARCHIVED: _ClassVar[BranchState]
    PURGED: _ClassVar[BranchState]

class InvitationState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INVITATION_STATE_UNSPECIFIED: _ClassVar[InvitationState]
    INVITATION_PENDING: _ClassVar[InvitationState]
    INVITATION_ACCEPTED: _ClassVar[InvitationState]
    INVITATION_DECLINED: _ClassVar[InvitationState]

class MergeSourceState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MERGE_SOURCE_STATE_UNSPECIFIED: _ClassVar[MergeSourceState]
    SOURCE_AVAILABLE: _ClassVar[MergeSourceState]
    SOURCE_ARCHIVED: _ClassVar[MergeSourceState]
    SOURCE_PURGED: _ClassVar[MergeSourceState]
REALM_UNSPECIFIED: Realm
REAL: Realm
WORLD: Realm
REHEARSAL: Realm
NODE_KIND_UNSPECIFIED: NodeKind
QUESTION: NodeKind
ANSWER: NodeKind
CONTINUATION: NodeKind
COMPARISON: NodeKind
OBSERVATION: NodeKind
CONTINUATION_KIND_UNSPECIFIED: ContinuationKind
ELABORATION: ContinuationKind
VERIFICATION: ContinuationKind
TOOL_WORK: ContinuationKind
DEEPER_REASONING: ContinuationKind
ANSWER_STATE_UNSPECIFIED: AnswerState
STREAMING: AnswerState
SEALED: AnswerState
FROZEN: AnswerState
CITATION_STATUS_UNSPECIFIED: CitationStatus
CITATION_CURRENT: CitationStatus
CITATION_SUPERSEDED: CitationStatus
CITATION_REVOKED: CitationStatus
CITATION_PURGED: CitationStatus
CITATION_SOURCE_PURGED: CitationStatus
CANONICAL_SCOPE_UNSPECIFIED: CanonicalScope
REAL_EXPERIENCE: CanonicalScope
WORLD_CANON: CanonicalScope
REHEARSAL_RECORD: CanonicalScope
EVENT_KIND_UNSPECIFIED: EventKind
DECISION: EventKind
DISCUSSION: EventKind
CHANGE: EventKind
MILESTONE: EventKind
RELATION_KIND_UNSPECIFIED: RelationKind
REVISED: RelationKind
CONTRASTS: RelationKind
REPLACES: RelationKind
CONTRADICTS: RelationKind
COMMITMENT_KIND_UNSPECIFIED: CommitmentKind
SAFETY_STOP: CommitmentKind
AUTHORIZATION: CommitmentKind
RELATIONSHIP: CommitmentKind
EXPERIENCE: CommitmentKind
STATED_FACT: CommitmentKind
COMMITMENT_STATE_UNSPECIFIED: CommitmentState
IN_EFFECT: CommitmentState
AWAITING_CONFIRMATION: CommitmentState
AWAITING_CANONICALIZATION: CommitmentState
NEVER_IN_EFFECT: CommitmentState
WITHDRAWN: CommitmentState
CONTEXT_LAYER_UNSPECIFIED: ContextLayer
HARD_BOUNDARY: ContextLayer
CURRENT_NODE: ContextLayer
PARENT_CHAIN: ContextLayer
EXPLICIT_ANCHOR: ContextLayer
LONG_TERM_MEMORY: ContextLayer
OLDER_ANCESTOR: ContextLayer
TOOL_RESULT: ContextLayer
SIDE_BRANCH_CITATION: ContextLayer
ATTACHMENT: ContextLayer
CONTEXT_INCLUSION_UNSPECIFIED: ContextInclusion
INCLUDED_VERBATIM: ContextInclusion
INCLUDED_AS_SUMMARY: ContextInclusion
INCLUDED_AS_FRAGMENT: ContextInclusion
OMITTED: ContextInclusion
ANSWER_LIFECYCLE_UNSPECIFIED: AnswerLifecycle
CANDIDATE: AnswerLifecycle
ADOPTED: AnswerLifecycle
IN_EXPLORATION: AnswerLifecycle
CANONICALIZED: AnswerLifecycle
BRANCH_STATE_UNSPECIFIED: BranchState
ACTIVE: BranchState
PAUSED: BranchState
CONCLUDED: BranchState
ARCHIVED: BranchState
PURGED: BranchState
INVITATION_STATE_UNSPECIFIED: InvitationState
INVITATION_PENDING: InvitationState
INVITATION_ACCEPTED: InvitationState
INVITATION_DECLINED: InvitationState
MERGE_SOURCE_STATE_UNSPECIFIED: MergeSourceState
SOURCE_AVAILABLE: MergeSourceState
SOURCE_ARCHIVED: MergeSourceState
SOURCE_PURGED: MergeSourceState

class Tree(_message.Message):
    __slots__ = ("id", "title", "owner", "project_id", "default_realm", "revision", "created_at", "updated_at", "default_world")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_REALM_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_WORLD_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    owner: str
    project_id: str
    default_realm: Realm
    revision: int
    created_at: str
    updated_at: str
    default_world: str
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., owner: _Optional[str] = ..., project_id: _Optional[str] = ..., default_realm: _Optional[_Union[Realm, str]] = ..., revision: _Optional[int] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ..., default_world: _Optional[str] = ...) -> None: ...

class RunConditions(_message.Message):
    __slots__ = ("model_strategy", "parameters", "estimate_id")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MODEL_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    model_strategy: str
    parameters: _containers.ScalarMap[str, str]
    estimate_id: str
    def __init__(self, model_strategy: _Optional[str] = ..., parameters: _Optional[_Mapping[str, str]] = ..., estimate_id: _Optional[str] = ...) -> None: ...

class Attachment(_message.Message):
    __slots__ = ("id", "name", "media_type", "size_bytes", "width", "height", "page_count", "duration_ms", "text_length")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    PAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    TEXT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    media_type: str
    size_bytes: int
    width: int
    height: int
    page_count: int
    duration_ms: int
    text_length: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., media_type: _Optional[str] = ..., size_bytes: _Optional[int] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., page_count: _Optional[int] = ..., duration_ms: _Optional[int] = ..., text_length: _Optional[int] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("node_id", "start", "end", "note", "snapshot", "anchor", "authorization_id", "redacted", "status", "source_description")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    REDACTED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    start: int
    end: int
    note: str
    snapshot: str
    anchor: CitationAnchor
    authorization_id: str
    redacted: bool
    status: CitationStatus
    source_description: str
    def __init__(self, node_id: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., note: _Optional[str] = ..., snapshot: _Optional[str] = ..., anchor: _Optional[_Union[CitationAnchor, _Mapping]] = ..., authorization_id: _Optional[str] = ..., redacted: _Optional[bool] = ..., status: _Optional[_Union[CitationStatus, str]] = ..., source_description: _Optional[str] = ...) -> None: ...

class CitationAnchor(_message.Message):
    __slots__ = ("attachment_id", "image_region", "pdf_area", "fragment", "media_span", "excerpt")
    ATTACHMENT_ID_FIELD_NUMBER: _ClassVar[int]
    IMAGE_REGION_FIELD_NUMBER: _ClassVar[int]
    PDF_AREA_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    MEDIA_SPAN_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_FIELD_NUMBER: _ClassVar[int]
    attachment_id: str
    image_region: ImageRegion
    pdf_area: PdfPageArea
    fragment: FragmentRange
    media_span: MediaSpan
    excerpt: str
    def __init__(self, attachment_id: _Optional[str] = ..., image_region: _Optional[_Union[ImageRegion, _Mapping]] = ..., pdf_area: _Optional[_Union[PdfPageArea, _Mapping]] = ..., fragment: _Optional[_Union[FragmentRange, _Mapping]] = ..., media_span: _Optional[_Union[MediaSpan, _Mapping]] = ..., excerpt: _Optional[str] = ...) -> None: ...

class ImageRegion(_message.Message):
    __slots__ = ("x", "y", "width", "height")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    x: int
    y: int
    width: int
    height: int
    def __init__(self, x: _Optional[int] = ..., y: _Optional[int] = ..., width: _Optional[int] = ..., height: _Optional[int] = ...) -> None: ...

class PdfPageArea(_message.Message):
    __slots__ = ("page", "x", "y", "width", "height")
    PAGE_FIELD_NUMBER: _ClassVar[int]
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    page: int
    x: float
    y: float
    width: float
    height: float
    def __init__(self, page: _Optional[int] = ..., x: _Optional[float] = ..., y: _Optional[float] = ..., width: _Optional[float] = ..., height: _Optional[float] = ...) -> None: ...

class FragmentRange(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class MediaSpan(_message.Message):
    __slots__ = ("start_ms", "end_ms")
    START_MS_FIELD_NUMBER: _ClassVar[int]
    END_MS_FIELD_NUMBER: _ClassVar[int]
    start_ms: int
    end_ms: int
    def __init__(self, start_ms: _Optional[int] = ..., end_ms: _Optional[int] = ...) -> None: ...

class ToolTraceEntry(_message.Message):
    __slots__ = ("tool", "input_summary", "output_summary")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    INPUT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    tool: str
    input_summary: str
    output_summary: str
    def __init__(self, tool: _Optional[str] = ..., input_summary: _Optional[str] = ..., output_summary: _Optional[str] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("id", "tree_id", "parent_id", "kind", "realm", "text", "revision", "ordinal", "created_at", "world", "conditions", "attachments", "citations", "version_of", "version", "adopted_answer_id", "answer_state", "stop_reason", "acknowledged_chunks", "extends_answer_id", "continuation_kind", "reasoning_summary", "evidence", "tool_trace", "context_version_id", "lifecycle", "branch_state", "branch_id", "comparison", "task_run")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENTS_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    VERSION_OF_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ADOPTED_ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_STATE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EXTENDS_ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    CONTINUATION_KIND_FIELD_NUMBER: _ClassVar[int]
    REASONING_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    TOOL_TRACE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    BRANCH_STATE_FIELD_NUMBER: _ClassVar[int]
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    COMPARISON_FIELD_NUMBER: _ClassVar[int]
    TASK_RUN_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    parent_id: str
    kind: NodeKind
    realm: Realm
    text: str
    revision: int
    ordinal: int
    created_at: str
    world: str
    conditions: RunConditions
    attachments: _containers.RepeatedCompositeFieldContainer[Attachment]
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    version_of: str
    version: int
    adopted_answer_id: str
    answer_state: AnswerState
    stop_reason: str
    acknowledged_chunks: int
    extends_answer_id: str
    continuation_kind: ContinuationKind
    reasoning_summary: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    tool_trace: _containers.RepeatedCompositeFieldContainer[ToolTraceEntry]
    context_version_id: str
    lifecycle: AnswerLifecycle
    branch_state: BranchState
    branch_id: str
    comparison: _costs_pb2.Comparison
    task_run: TaskRun
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., kind: _Optional[_Union[NodeKind, str]] = ..., realm: _Optional[_Union[Realm, str]] = ..., text: _Optional[str] = ..., revision: _Optional[int] = ..., ordinal: _Optional[int] = ..., created_at: _Optional[str] = ..., world: _Optional[str] = ..., conditions: _Optional[_Union[RunConditions, _Mapping]] = ..., attachments: _Optional[_Iterable[_Union[Attachment, _Mapping]]] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., version_of: _Optional[str] = ..., version: _Optional[int] = ..., adopted_answer_id: _Optional[str] = ..., answer_state: _Optional[_Union[AnswerState, str]] = ..., stop_reason: _Optional[str] = ..., acknowledged_chunks: _Optional[int] = ..., extends_answer_id: _Optional[str] = ..., continuation_kind: _Optional[_Union[ContinuationKind, str]] = ..., reasoning_summary: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., tool_trace: _Optional[_Iterable[_Union[ToolTraceEntry, _Mapping]]] = ..., context_version_id: _Optional[str] = ..., lifecycle: _Optional[_Union[AnswerLifecycle, str]] = ..., branch_state: _Optional[_Union[BranchState, str]] = ..., branch_id: _Optional[str] = ..., comparison: _Optional[_Union[_costs_pb2.Comparison, _Mapping]] = ..., task_run: _Optional[_Union[TaskRun, _Mapping]] = ...) -> None: ...

class TaskRun(_message.Message):
    __slots__ = ("task_id", "worker_id", "attempt", "spent_tokens", "spent_cost_micros", "currency", "accepted_observation_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    SPENT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SPENT_COST_MICROS_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_OBSERVATION_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    worker_id: str
    attempt: int
    spent_tokens: int
    spent_cost_micros: int
    currency: str
    accepted_observation_id: str
    def __init__(self, task_id: _Optional[str] = ..., worker_id: _Optional[str] = ..., attempt: _Optional[int] = ..., spent_tokens: _Optional[int] = ..., spent_cost_micros: _Optional[int] = ..., currency: _Optional[str] = ..., accepted_observation_id: _Optional[str] = ...) -> None: ...

class CreateTreeRequest(_message.Message):
    __slots__ = ("idempotency_key", "title", "owner", "project_id", "default_realm", "default_world")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_REALM_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_WORLD_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    title: str
    owner: str
    project_id: str
    default_realm: Realm
    default_world: str
    def __init__(self, idempotency_key: _Optional[str] = ..., title: _Optional[str] = ..., owner: _Optional[str] = ..., project_id: _Optional[str] = ..., default_realm: _Optional[_Union[Realm, str]] = ..., default_world: _Optional[str] = ...) -> None: ...

class CreateTreeResponse(_message.Message):
    __slots__ = ("tree", "consistency")
    TREE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    tree: Tree
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, tree: _Optional[_Union[Tree, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetTreeRequest(_message.Message):
    __slots__ = ("tree_id",)
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    def __init__(self, tree_id: _Optional[str] = ...) -> None: ...

class GetTreeResponse(_message.Message):
    __slots__ = ("tree",)
    TREE_FIELD_NUMBER: _ClassVar[int]
    tree: Tree
    def __init__(self, tree: _Optional[_Union[Tree, _Mapping]] = ...) -> None: ...

class AskQuestionRequest(_message.Message):
    __slots__ = ("idempotency_key", "tree_id", "parent_id", "text", "realm", "world", "conditions", "attachments", "citations")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENTS_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    parent_id: str
    text: str
    realm: Realm
    world: str
    conditions: RunConditions
    attachments: _containers.RepeatedCompositeFieldContainer[Attachment]
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., text: _Optional[str] = ..., realm: _Optional[_Union[Realm, str]] = ..., world: _Optional[str] = ..., conditions: _Optional[_Union[RunConditions, _Mapping]] = ..., attachments: _Optional[_Iterable[_Union[Attachment, _Mapping]]] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ...) -> None: ...

class AskQuestionResponse(_message.Message):
    __slots__ = ("node", "tree_revision", "consistency")
    NODE_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    node: Node
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, node: _Optional[_Union[Node, _Mapping]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class EditQuestionRequest(_message.Message):
    __slots__ = ("idempotency_key", "question_id", "expected_revision", "text", "conditions", "attachments", "citations")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENTS_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    question_id: str
    expected_revision: int
    text: str
    conditions: RunConditions
    attachments: _containers.RepeatedCompositeFieldContainer[Attachment]
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    def __init__(self, idempotency_key: _Optional[str] = ..., question_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., text: _Optional[str] = ..., conditions: _Optional[_Union[RunConditions, _Mapping]] = ..., attachments: _Optional[_Iterable[_Union[Attachment, _Mapping]]] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ...) -> None: ...

class EditQuestionResponse(_message.Message):
    __slots__ = ("node", "tree_revision", "consistency")
    NODE_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    node: Node
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, node: _Optional[_Union[Node, _Mapping]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GeneratedContent(_message.Message):
    __slots__ = ("conditions", "reasoning_summary", "evidence", "tool_trace", "chain_of_thought")
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    REASONING_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    TOOL_TRACE_FIELD_NUMBER: _ClassVar[int]
    CHAIN_OF_THOUGHT_FIELD_NUMBER: _ClassVar[int]
    conditions: RunConditions
    reasoning_summary: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    tool_trace: _containers.RepeatedCompositeFieldContainer[ToolTraceEntry]
    chain_of_thought: str
    def __init__(self, conditions: _Optional[_Union[RunConditions, _Mapping]] = ..., reasoning_summary: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., tool_trace: _Optional[_Iterable[_Union[ToolTraceEntry, _Mapping]]] = ..., chain_of_thought: _Optional[str] = ...) -> None: ...

class AddAnswerRequest(_message.Message):
    __slots__ = ("idempotency_key", "question_id", "text", "content", "realm", "world", "context_version_id")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    question_id: str
    text: str
    content: GeneratedContent
    realm: Realm
    world: str
    context_version_id: str
    def __init__(self, idempotency_key: _Optional[str] = ..., question_id: _Optional[str] = ..., text: _Optional[str] = ..., content: _Optional[_Union[GeneratedContent, _Mapping]] = ..., realm: _Optional[_Union[Realm, str]] = ..., world: _Optional[str] = ..., context_version_id: _Optional[str] = ...) -> None: ...

class AddAnswerResponse(_message.Message):
    __slots__ = ("node", "tree_revision", "consistency")
    NODE_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    node: Node
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, node: _Optional[_Union[Node, _Mapping]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class StreamAnswerRequest(_message.Message):
    __slots__ = ("open", "chunk", "complete")
    class Open(_message.Message):
        __slots__ = ("idempotency_key", "question_id", "extends_answer_id", "content", "realm", "world", "context_version_id")
        IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
        QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
        EXTENDS_ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
        CONTENT_FIELD_NUMBER: _ClassVar[int]
        REALM_FIELD_NUMBER: _ClassVar[int]
        WORLD_FIELD_NUMBER: _ClassVar[int]
        CONTEXT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
        idempotency_key: str
        question_id: str
        extends_answer_id: str
        content: GeneratedContent
        realm: Realm
        world: str
        context_version_id: str
        def __init__(self, idempotency_key: _Optional[str] = ..., question_id: _Optional[str] = ..., extends_answer_id: _Optional[str] = ..., content: _Optional[_Union[GeneratedContent, _Mapping]] = ..., realm: _Optional[_Union[Realm, str]] = ..., world: _Optional[str] = ..., context_version_id: _Optional[str] = ...) -> None: ...
    class Chunk(_message.Message):
        __slots__ = ("seq", "text")
        SEQ_FIELD_NUMBER: _ClassVar[int]
        TEXT_FIELD_NUMBER: _ClassVar[int]
        seq: int
        text: str
        def __init__(self, seq: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...
    class Complete(_message.Message):
        __slots__ = ("content",)
        CONTENT_FIELD_NUMBER: _ClassVar[int]
        content: GeneratedContent
        def __init__(self, content: _Optional[_Union[GeneratedContent, _Mapping]] = ...) -> None: ...
    OPEN_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    open: StreamAnswerRequest.Open
    chunk: StreamAnswerRequest.Chunk
    complete: StreamAnswerRequest.Complete
    def __init__(self, open: _Optional[_Union[StreamAnswerRequest.Open, _Mapping]] = ..., chunk: _Optional[_Union[StreamAnswerRequest.Chunk, _Mapping]] = ..., complete: _Optional[_Union[StreamAnswerRequest.Complete, _Mapping]] = ...) -> None: ...

class StreamAnswerResponse(_message.Message):
    __slots__ = ("opened", "ack", "sealed", "consistency")
    class Ack(_message.Message):
        __slots__ = ("seq",)
        SEQ_FIELD_NUMBER: _ClassVar[int]
        seq: int
        def __init__(self, seq: _Optional[int] = ...) -> None: ...
    OPENED_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    SEALED_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    opened: Node
    ack: StreamAnswerResponse.Ack
    sealed: Node
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, opened: _Optional[_Union[Node, _Mapping]] = ..., ack: _Optional[_Union[StreamAnswerResponse.Ack, _Mapping]] = ..., sealed: _Optional[_Union[Node, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class AddContinuationRequest(_message.Message):
    __slots__ = ("idempotency_key", "answer_id", "kind", "text", "content", "realm", "world")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    answer_id: str
    kind: ContinuationKind
    text: str
    content: GeneratedContent
    realm: Realm
    world: str
    def __init__(self, idempotency_key: _Optional[str] = ..., answer_id: _Optional[str] = ..., kind: _Optional[_Union[ContinuationKind, str]] = ..., text: _Optional[str] = ..., content: _Optional[_Union[GeneratedContent, _Mapping]] = ..., realm: _Optional[_Union[Realm, str]] = ..., world: _Optional[str] = ...) -> None: ...

class AddContinuationResponse(_message.Message):
    __slots__ = ("node", "tree_revision", "consistency")
    NODE_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    node: Node
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, node: _Optional[_Union[Node, _Mapping]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class AdoptAnswerRequest(_message.Message):
    __slots__ = ("idempotency_key", "question_id", "answer_id", "expected_revision")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    question_id: str
    answer_id: str
    expected_revision: int
    def __init__(self, idempotency_key: _Optional[str] = ..., question_id: _Optional[str] = ..., answer_id: _Optional[str] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class AdoptAnswerResponse(_message.Message):
    __slots__ = ("question", "consistency")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    question: Node
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, question: _Optional[_Union[Node, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class CanonCandidate(_message.Message):
    __slots__ = ("id", "kind", "detail", "status", "revision", "reviewed_by", "review_reason", "reviewed_at", "version_id", "subject", "text", "memory_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_BY_FIELD_NUMBER: _ClassVar[int]
    REVIEW_REASON_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    detail: str
    status: str
    revision: int
    reviewed_by: str
    review_reason: str
    reviewed_at: str
    version_id: str
    subject: str
    text: str
    memory_id: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., detail: _Optional[str] = ..., status: _Optional[str] = ..., revision: _Optional[int] = ..., reviewed_by: _Optional[str] = ..., review_reason: _Optional[str] = ..., reviewed_at: _Optional[str] = ..., version_id: _Optional[str] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ..., memory_id: _Optional[str] = ...) -> None: ...

class CandidateProposal(_message.Message):
    __slots__ = ("kind", "tier", "subject", "text")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    tier: str
    subject: str
    text: str
    def __init__(self, kind: _Optional[str] = ..., tier: _Optional[str] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class MainLineVersion(_message.Message):
    __slots__ = ("id", "tree_id", "scope", "world", "version", "node_ids", "snapshot", "confirmed_by", "created_at", "candidates", "forbidden_effects", "manual_extractions", "replaces_version_id", "snapshot_omitted", "story_graph_scope", "invitation_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    FORBIDDEN_EFFECTS_FIELD_NUMBER: _ClassVar[int]
    MANUAL_EXTRACTIONS_FIELD_NUMBER: _ClassVar[int]
    REPLACES_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_OMITTED_FIELD_NUMBER: _ClassVar[int]
    STORY_GRAPH_SCOPE_FIELD_NUMBER: _ClassVar[int]
    INVITATION_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    scope: CanonicalScope
    world: str
    version: int
    node_ids: _containers.RepeatedScalarFieldContainer[str]
    snapshot: _containers.RepeatedCompositeFieldContainer[Node]
    confirmed_by: str
    created_at: str
    candidates: _containers.RepeatedCompositeFieldContainer[CanonCandidate]
    forbidden_effects: _containers.RepeatedScalarFieldContainer[str]
    manual_extractions: _containers.RepeatedScalarFieldContainer[str]
    replaces_version_id: str
    snapshot_omitted: bool
    story_graph_scope: _common_pb2.Scope
    invitation_id: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., scope: _Optional[_Union[CanonicalScope, str]] = ..., world: _Optional[str] = ..., version: _Optional[int] = ..., node_ids: _Optional[_Iterable[str]] = ..., snapshot: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., confirmed_by: _Optional[str] = ..., created_at: _Optional[str] = ..., candidates: _Optional[_Iterable[_Union[CanonCandidate, _Mapping]]] = ..., forbidden_effects: _Optional[_Iterable[str]] = ..., manual_extractions: _Optional[_Iterable[str]] = ..., replaces_version_id: _Optional[str] = ..., snapshot_omitted: _Optional[bool] = ..., story_graph_scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., invitation_id: _Optional[str] = ...) -> None: ...

class UserConfirmation(_message.Message):
    __slots__ = ("confirmed", "user_id", "invitation_id")
    CONFIRMED_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    INVITATION_ID_FIELD_NUMBER: _ClassVar[int]
    confirmed: bool
    user_id: str
    invitation_id: str
    def __init__(self, confirmed: _Optional[bool] = ..., user_id: _Optional[str] = ..., invitation_id: _Optional[str] = ...) -> None: ...

class CanonicalizeRequest(_message.Message):
    __slots__ = ("idempotency_key", "tree_id", "leaf_node_id", "nodes", "confirmation", "expected_version", "candidates")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    LEAF_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    leaf_node_id: str
    nodes: NodeSelection
    confirmation: UserConfirmation
    expected_version: int
    candidates: _containers.RepeatedCompositeFieldContainer[CandidateProposal]
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., leaf_node_id: _Optional[str] = ..., nodes: _Optional[_Union[NodeSelection, _Mapping]] = ..., confirmation: _Optional[_Union[UserConfirmation, _Mapping]] = ..., expected_version: _Optional[int] = ..., candidates: _Optional[_Iterable[_Union[CandidateProposal, _Mapping]]] = ...) -> None: ...

class NodeSelection(_message.Message):
    __slots__ = ("node_ids",)
    NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    node_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, node_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class CanonicalizeResponse(_message.Message):
    __slots__ = ("version", "consistency")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    version: MainLineVersion
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, version: _Optional[_Union[MainLineVersion, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetNodeRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class GetNodeResponse(_message.Message):
    __slots__ = ("node",)
    NODE_FIELD_NUMBER: _ClassVar[int]
    node: Node
    def __init__(self, node: _Optional[_Union[Node, _Mapping]] = ...) -> None: ...

class GetPathRequest(_message.Message):
    __slots__ = ("node_id", "page_size", "page_token")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    page_size: int
    page_token: str
    def __init__(self, node_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetPathResponse(_message.Message):
    __slots__ = ("nodes", "next_page_token", "path_length")
    NODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PATH_LENGTH_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[Node]
    next_page_token: str
    path_length: int
    def __init__(self, nodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., path_length: _Optional[int] = ...) -> None: ...

class ListNodesRequest(_message.Message):
    __slots__ = ("tree_id", "page_size", "page_token", "include_archived", "lifecycles")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    LIFECYCLES_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    page_size: int
    page_token: str
    include_archived: bool
    lifecycles: _containers.RepeatedScalarFieldContainer[AnswerLifecycle]
    def __init__(self, tree_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_archived: _Optional[bool] = ..., lifecycles: _Optional[_Iterable[_Union[AnswerLifecycle, str]]] = ...) -> None: ...

class ListNodesResponse(_message.Message):
    __slots__ = ("nodes", "next_page_token")
    NODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[Node]
    next_page_token: str
    def __init__(self, nodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListMainLineVersionsRequest(_message.Message):
    __slots__ = ("tree_id", "scope", "world", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    scope: CanonicalScope
    world: str
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., scope: _Optional[_Union[CanonicalScope, str]] = ..., world: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMainLineVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[MainLineVersion]
    next_page_token: str
    def __init__(self, versions: _Optional[_Iterable[_Union[MainLineVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMainLineSnapshotRequest(_message.Message):
    __slots__ = ("version_id", "page_size", "page_token")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    page_size: int
    page_token: str
    def __init__(self, version_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetMainLineSnapshotResponse(_message.Message):
    __slots__ = ("nodes", "next_page_token", "snapshot_length")
    NODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[Node]
    next_page_token: str
    snapshot_length: int
    def __init__(self, nodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., snapshot_length: _Optional[int] = ...) -> None: ...

class SourceReferenceInput(_message.Message):
    __slots__ = ("id", "source_type", "source_id", "source_version", "fragment", "fragment_start", "fragment_end", "locator")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_START_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_END_FIELD_NUMBER: _ClassVar[int]
    LOCATOR_FIELD_NUMBER: _ClassVar[int]
    id: str
    source_type: str
    source_id: str
    source_version: str
    fragment: str
    fragment_start: int
    fragment_end: int
    locator: _common_pb2.SourceLocator
    def __init__(self, id: _Optional[str] = ..., source_type: _Optional[str] = ..., source_id: _Optional[str] = ..., source_version: _Optional[str] = ..., fragment: _Optional[str] = ..., fragment_start: _Optional[int] = ..., fragment_end: _Optional[int] = ..., locator: _Optional[_Union[_common_pb2.SourceLocator, _Mapping]] = ...) -> None: ...

class StoryLineInput(_message.Message):
    __slots__ = ("id", "title", "event_ids", "entity_ids")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    ENTITY_IDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    entity_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., event_ids: _Optional[_Iterable[str]] = ..., entity_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class EventInput(_message.Message):
    __slots__ = ("id", "kind", "title", "description", "event_time", "confirmation_state", "entity_ids", "source_reference_ids")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    ENTITY_IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCE_IDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: EventKind
    title: str
    description: str
    event_time: _common_pb2.EventTime
    confirmation_state: _common_pb2.ConfirmationState
    entity_ids: _containers.RepeatedScalarFieldContainer[str]
    source_reference_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[_Union[EventKind, str]] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., event_time: _Optional[_Union[_common_pb2.EventTime, _Mapping]] = ..., confirmation_state: _Optional[_Union[_common_pb2.ConfirmationState, str]] = ..., entity_ids: _Optional[_Iterable[str]] = ..., source_reference_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class EntityInput(_message.Message):
    __slots__ = ("id", "label", "description", "revision", "confirmation_state", "source_reference_ids")
    ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCE_IDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    label: str
    description: str
    revision: str
    confirmation_state: _common_pb2.ConfirmationState
    source_reference_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., label: _Optional[str] = ..., description: _Optional[str] = ..., revision: _Optional[str] = ..., confirmation_state: _Optional[_Union[_common_pb2.ConfirmationState, str]] = ..., source_reference_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RelationInput(_message.Message):
    __slots__ = ("id", "kind", "to", "from_revision", "to_revision", "reason", "source_reference_ids", "confirmation_state", "effective_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    FROM_REVISION_FIELD_NUMBER: _ClassVar[int]
    TO_REVISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCE_IDS_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: RelationKind
    to: _common_pb2.ObjectRef
    from_revision: str
    to_revision: str
    reason: str
    source_reference_ids: _containers.RepeatedScalarFieldContainer[str]
    confirmation_state: _common_pb2.ConfirmationState
    effective_at: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[_Union[RelationKind, str]] = ..., to: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., from_revision: _Optional[str] = ..., to_revision: _Optional[str] = ..., reason: _Optional[str] = ..., source_reference_ids: _Optional[_Iterable[str]] = ..., confirmation_state: _Optional[_Union[_common_pb2.ConfirmationState, str]] = ..., effective_at: _Optional[str] = ..., **kwargs) -> None: ...

class EntityChangeInput(_message.Message):
    __slots__ = ("id", "entity_id", "event_id", "change_type", "description", "entity_revision", "applies_at", "source_reference_ids", "confirmation_state")
    ID_FIELD_NUMBER: _ClassVar[int]
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGE_TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENTITY_REVISION_FIELD_NUMBER: _ClassVar[int]
    APPLIES_AT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCE_IDS_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    entity_id: str
    event_id: str
    change_type: str
    description: str
    entity_revision: str
    applies_at: _common_pb2.EventTime
    source_reference_ids: _containers.RepeatedScalarFieldContainer[str]
    confirmation_state: _common_pb2.ConfirmationState
    def __init__(self, id: _Optional[str] = ..., entity_id: _Optional[str] = ..., event_id: _Optional[str] = ..., change_type: _Optional[str] = ..., description: _Optional[str] = ..., entity_revision: _Optional[str] = ..., applies_at: _Optional[_Union[_common_pb2.EventTime, _Mapping]] = ..., source_reference_ids: _Optional[_Iterable[str]] = ..., confirmation_state: _Optional[_Union[_common_pb2.ConfirmationState, str]] = ...) -> None: ...

class LeafFactInput(_message.Message):
    __slots__ = ("id", "text", "about", "source_reference_ids", "event_time", "confirmation_state")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ABOUT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCE_IDS_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    about: _containers.RepeatedCompositeFieldContainer[_common_pb2.ObjectRef]
    source_reference_ids: _containers.RepeatedScalarFieldContainer[str]
    event_time: _common_pb2.EventTime
    confirmation_state: _common_pb2.ConfirmationState
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., about: _Optional[_Iterable[_Union[_common_pb2.ObjectRef, _Mapping]]] = ..., source_reference_ids: _Optional[_Iterable[str]] = ..., event_time: _Optional[_Union[_common_pb2.EventTime, _Mapping]] = ..., confirmation_state: _Optional[_Union[_common_pb2.ConfirmationState, str]] = ...) -> None: ...

class SummaryInput(_message.Message):
    __slots__ = ("id", "title", "text", "fact_refs")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FACT_REFS_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    text: str
    fact_refs: _containers.RepeatedCompositeFieldContainer[_common_pb2.ObjectRef]
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., text: _Optional[str] = ..., fact_refs: _Optional[_Iterable[_Union[_common_pb2.ObjectRef, _Mapping]]] = ...) -> None: ...

class RecordReviewRequest(_message.Message):
    __slots__ = ("idempotency_key", "result_id", "scope", "phase", "covered", "review_generated_at", "story_lines", "events", "entities", "summaries", "source_references", "excluded_source_types", "relations", "entity_changes", "leaf_facts", "coverage_gaps", "coverage_basis", "coverage_counts", "leaf_extraction")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    COVERED_FIELD_NUMBER: _ClassVar[int]
    REVIEW_GENERATED_AT_FIELD_NUMBER: _ClassVar[int]
    STORY_LINES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCES_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_SOURCE_TYPES_FIELD_NUMBER: _ClassVar[int]
    RELATIONS_FIELD_NUMBER: _ClassVar[int]
    ENTITY_CHANGES_FIELD_NUMBER: _ClassVar[int]
    LEAF_FACTS_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_GAPS_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_BASIS_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_COUNTS_FIELD_NUMBER: _ClassVar[int]
    LEAF_EXTRACTION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    result_id: str
    scope: _common_pb2.Scope
    phase: str
    covered: _common_pb2.TimeRange
    review_generated_at: str
    story_lines: _containers.RepeatedCompositeFieldContainer[StoryLineInput]
    events: _containers.RepeatedCompositeFieldContainer[EventInput]
    entities: _containers.RepeatedCompositeFieldContainer[EntityInput]
    summaries: _containers.RepeatedCompositeFieldContainer[SummaryInput]
    source_references: _containers.RepeatedCompositeFieldContainer[SourceReferenceInput]
    excluded_source_types: _containers.RepeatedScalarFieldContainer[str]
    relations: _containers.RepeatedCompositeFieldContainer[RelationInput]
    entity_changes: _containers.RepeatedCompositeFieldContainer[EntityChangeInput]
    leaf_facts: _containers.RepeatedCompositeFieldContainer[LeafFactInput]
    coverage_gaps: _containers.RepeatedScalarFieldContainer[str]
    coverage_basis: _common_pb2.CoverageBasis
    coverage_counts: _containers.RepeatedCompositeFieldContainer[_common_pb2.CoverageCount]
    leaf_extraction: _leaves_pb2.LeafExtraction
    def __init__(self, idempotency_key: _Optional[str] = ..., result_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., phase: _Optional[str] = ..., covered: _Optional[_Union[_common_pb2.TimeRange, _Mapping]] = ..., review_generated_at: _Optional[str] = ..., story_lines: _Optional[_Iterable[_Union[StoryLineInput, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[EventInput, _Mapping]]] = ..., entities: _Optional[_Iterable[_Union[EntityInput, _Mapping]]] = ..., summaries: _Optional[_Iterable[_Union[SummaryInput, _Mapping]]] = ..., source_references: _Optional[_Iterable[_Union[SourceReferenceInput, _Mapping]]] = ..., excluded_source_types: _Optional[_Iterable[str]] = ..., relations: _Optional[_Iterable[_Union[RelationInput, _Mapping]]] = ..., entity_changes: _Optional[_Iterable[_Union[EntityChangeInput, _Mapping]]] = ..., leaf_facts: _Optional[_Iterable[_Union[LeafFactInput, _Mapping]]] = ..., coverage_gaps: _Optional[_Iterable[str]] = ..., coverage_basis: _Optional[_Union[_common_pb2.CoverageBasis, str]] = ..., coverage_counts: _Optional[_Iterable[_Union[_common_pb2.CoverageCount, _Mapping]]] = ..., leaf_extraction: _Optional[_Union[_leaves_pb2.LeafExtraction, _Mapping]] = ...) -> None: ...

class RecordReviewResponse(_message.Message):
    __slots__ = ("result_id", "recorded_at", "graph_revision", "object_count", "consistency")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    GRAPH_REVISION_FIELD_NUMBER: _ClassVar[int]
    OBJECT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    recorded_at: str
    graph_revision: int
    object_count: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, result_id: _Optional[str] = ..., recorded_at: _Optional[str] = ..., graph_revision: _Optional[int] = ..., object_count: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class RecordSourceRequest(_message.Message):
    __slots__ = ("idempotency_key", "source_id", "source_type", "project_id", "title", "text", "expected_revision", "deleted")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    source_id: str
    source_type: str
    project_id: str
    title: str
    text: str
    expected_revision: int
    deleted: bool
    def __init__(self, idempotency_key: _Optional[str] = ..., source_id: _Optional[str] = ..., source_type: _Optional[str] = ..., project_id: _Optional[str] = ..., title: _Optional[str] = ..., text: _Optional[str] = ..., expected_revision: _Optional[int] = ..., deleted: _Optional[bool] = ...) -> None: ...

class RecordSourceResponse(_message.Message):
    __slots__ = ("source_id", "revision", "updated_at", "consistency")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    updated_at: str
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., updated_at: _Optional[str] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class Preference(_message.Message):
    __slots__ = ("id", "scope", "subject", "text", "about", "confirmed_by", "revision", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ABOUT_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_BY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    scope: _common_pb2.Scope
    subject: str
    text: str
    about: _containers.RepeatedCompositeFieldContainer[_common_pb2.ObjectRef]
    confirmed_by: str
    revision: int
    updated_at: str
    def __init__(self, id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ..., about: _Optional[_Iterable[_Union[_common_pb2.ObjectRef, _Mapping]]] = ..., confirmed_by: _Optional[str] = ..., revision: _Optional[int] = ..., updated_at: _Optional[str] = ...) -> None: ...

class SetPreferenceRequest(_message.Message):
    __slots__ = ("idempotency_key", "preference_id", "scope", "subject", "text", "about", "confirmed_by", "expected_revision")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    PREFERENCE_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ABOUT_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    preference_id: str
    scope: _common_pb2.Scope
    subject: str
    text: str
    about: _containers.RepeatedCompositeFieldContainer[_common_pb2.ObjectRef]
    confirmed_by: str
    expected_revision: int
    def __init__(self, idempotency_key: _Optional[str] = ..., preference_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ..., about: _Optional[_Iterable[_Union[_common_pb2.ObjectRef, _Mapping]]] = ..., confirmed_by: _Optional[str] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class SetPreferenceResponse(_message.Message):
    __slots__ = ("preference", "consistency")
    PREFERENCE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    preference: Preference
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, preference: _Optional[_Union[Preference, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetSettingsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Capability(_message.Message):
    __slots__ = ("id", "enabled", "assignments", "revision")
    ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENTS_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    id: str
    enabled: bool
    assignments: _containers.RepeatedScalarFieldContainer[str]
    revision: int
    def __init__(self, id: _Optional[str] = ..., enabled: _Optional[bool] = ..., assignments: _Optional[_Iterable[str]] = ..., revision: _Optional[int] = ...) -> None: ...

class Settings(_message.Message):
    __slots__ = ("heartbeat_enabled", "app_revision", "story_graph", "consistency")
    HEARTBEAT_ENABLED_FIELD_NUMBER: _ClassVar[int]
    APP_REVISION_FIELD_NUMBER: _ClassVar[int]
    STORY_GRAPH_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    heartbeat_enabled: bool
    app_revision: int
    story_graph: Capability
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, heartbeat_enabled: _Optional[bool] = ..., app_revision: _Optional[int] = ..., story_graph: _Optional[_Union[Capability, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class SetAppEnabledRequest(_message.Message):
    __slots__ = ("idempotency_key", "enabled", "expected_revision")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    enabled: bool
    expected_revision: int
    def __init__(self, idempotency_key: _Optional[str] = ..., enabled: _Optional[bool] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class SetCapabilityRequest(_message.Message):
    __slots__ = ("idempotency_key", "capability_id", "enabled", "assignments", "expected_revision")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENTS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    capability_id: str
    enabled: bool
    assignments: _containers.RepeatedScalarFieldContainer[str]
    expected_revision: int
    def __init__(self, idempotency_key: _Optional[str] = ..., capability_id: _Optional[str] = ..., enabled: _Optional[bool] = ..., assignments: _Optional[_Iterable[str]] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class SessionContext(_message.Message):
    __slots__ = ("session_id", "story_graph_enabled", "context_state", "revision", "consistency")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STORY_GRAPH_ENABLED_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_STATE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    story_graph_enabled: bool
    context_state: str
    revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, session_id: _Optional[str] = ..., story_graph_enabled: _Optional[bool] = ..., context_state: _Optional[str] = ..., revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class SetSessionStoryGraphRequest(_message.Message):
    __slots__ = ("idempotency_key", "session_id", "enabled")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    session_id: str
    enabled: bool
    def __init__(self, idempotency_key: _Optional[str] = ..., session_id: _Optional[str] = ..., enabled: _Optional[bool] = ...) -> None: ...

class SaveSessionContextRequest(_message.Message):
    __slots__ = ("idempotency_key", "session_id", "context_state", "expected_revision")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_STATE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    session_id: str
    context_state: str
    expected_revision: int
    def __init__(self, idempotency_key: _Optional[str] = ..., session_id: _Optional[str] = ..., context_state: _Optional[str] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class GetSessionContextRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CreateBindingRequest(_message.Message):
    __slots__ = ("idempotency_key", "session_id", "runtime", "allowed_scopes")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_SCOPES_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    session_id: str
    runtime: str
    allowed_scopes: _containers.RepeatedCompositeFieldContainer[_common_pb2.Scope]
    def __init__(self, idempotency_key: _Optional[str] = ..., session_id: _Optional[str] = ..., runtime: _Optional[str] = ..., allowed_scopes: _Optional[_Iterable[_Union[_common_pb2.Scope, _Mapping]]] = ...) -> None: ...

class CreateBindingResponse(_message.Message):
    __slots__ = ("binding_id", "token", "session_id", "runtime", "project_id", "consistency")
    BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    binding_id: str
    token: str
    session_id: str
    runtime: str
    project_id: str
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, binding_id: _Optional[str] = ..., token: _Optional[str] = ..., session_id: _Optional[str] = ..., runtime: _Optional[str] = ..., project_id: _Optional[str] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ArbiterRuling(_message.Message):
    __slots__ = ("id", "tree_id", "node_id", "arbiter", "action", "allowed", "reason", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    ARBITER_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    node_id: str
    arbiter: str
    action: str
    allowed: bool
    reason: str
    created_at: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., node_id: _Optional[str] = ..., arbiter: _Optional[str] = ..., action: _Optional[str] = ..., allowed: _Optional[bool] = ..., reason: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class RecordArbiterRulingRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "arbiter", "action", "allowed", "reason")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    ARBITER_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    arbiter: str
    action: str
    allowed: bool
    reason: str
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., arbiter: _Optional[str] = ..., action: _Optional[str] = ..., allowed: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class RecordArbiterRulingResponse(_message.Message):
    __slots__ = ("ruling", "consistency")
    RULING_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    ruling: ArbiterRuling
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, ruling: _Optional[_Union[ArbiterRuling, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class Effect(_message.Message):
    __slots__ = ("id", "tree_id", "node_id", "kind", "ruling_id", "tool", "action", "parameters_json", "recorded_by", "created_at", "main_line_version_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    RULING_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    RECORDED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    MAIN_LINE_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    node_id: str
    kind: str
    ruling_id: str
    tool: str
    action: str
    parameters_json: str
    recorded_by: str
    created_at: str
    main_line_version_id: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., node_id: _Optional[str] = ..., kind: _Optional[str] = ..., ruling_id: _Optional[str] = ..., tool: _Optional[str] = ..., action: _Optional[str] = ..., parameters_json: _Optional[str] = ..., recorded_by: _Optional[str] = ..., created_at: _Optional[str] = ..., main_line_version_id: _Optional[str] = ...) -> None: ...

class RecordRealActionRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "ruling_id", "tool", "action", "parameters_json", "recorded_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    RULING_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    RECORDED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    ruling_id: str
    tool: str
    action: str
    parameters_json: str
    recorded_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., ruling_id: _Optional[str] = ..., tool: _Optional[str] = ..., action: _Optional[str] = ..., parameters_json: _Optional[str] = ..., recorded_by: _Optional[str] = ...) -> None: ...

class RecordRealActionResponse(_message.Message):
    __slots__ = ("effect", "consistency")
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    effect: Effect
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, effect: _Optional[_Union[Effect, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ListEffectsRequest(_message.Message):
    __slots__ = ("tree_id", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEffectsResponse(_message.Message):
    __slots__ = ("effects", "next_page_token")
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    effects: _containers.RepeatedCompositeFieldContainer[Effect]
    next_page_token: str
    def __init__(self, effects: _Optional[_Iterable[_Union[Effect, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Commitment(_message.Message):
    __slots__ = ("id", "tree_id", "node_id", "kind", "statement", "realm", "world", "stated_by", "created_at", "state", "effective_scope", "state_reason", "confirmed_by", "main_line_version_id", "withdrawn_by")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATEMENT_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    WORLD_FIELD_NUMBER: _ClassVar[int]
    STATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_SCOPE_FIELD_NUMBER: _ClassVar[int]
    STATE_REASON_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_BY_FIELD_NUMBER: _ClassVar[int]
    MAIN_LINE_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_BY_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    node_id: str
    kind: CommitmentKind
    statement: str
    realm: Realm
    world: str
    stated_by: str
    created_at: str
    state: CommitmentState
    effective_scope: str
    state_reason: str
    confirmed_by: str
    main_line_version_id: str
    withdrawn_by: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., node_id: _Optional[str] = ..., kind: _Optional[_Union[CommitmentKind, str]] = ..., statement: _Optional[str] = ..., realm: _Optional[_Union[Realm, str]] = ..., world: _Optional[str] = ..., stated_by: _Optional[str] = ..., created_at: _Optional[str] = ..., state: _Optional[_Union[CommitmentState, str]] = ..., effective_scope: _Optional[str] = ..., state_reason: _Optional[str] = ..., confirmed_by: _Optional[str] = ..., main_line_version_id: _Optional[str] = ..., withdrawn_by: _Optional[str] = ...) -> None: ...

class RecordCommitmentRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "kind", "statement", "stated_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATEMENT_FIELD_NUMBER: _ClassVar[int]
    STATED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    kind: CommitmentKind
    statement: str
    stated_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., kind: _Optional[_Union[CommitmentKind, str]] = ..., statement: _Optional[str] = ..., stated_by: _Optional[str] = ...) -> None: ...

class ConfirmCommitmentRequest(_message.Message):
    __slots__ = ("idempotency_key", "commitment_id", "confirmation")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    commitment_id: str
    confirmation: UserConfirmation
    def __init__(self, idempotency_key: _Optional[str] = ..., commitment_id: _Optional[str] = ..., confirmation: _Optional[_Union[UserConfirmation, _Mapping]] = ...) -> None: ...

class WithdrawCommitmentRequest(_message.Message):
    __slots__ = ("idempotency_key", "commitment_id", "withdrawn_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_ID_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    commitment_id: str
    withdrawn_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., commitment_id: _Optional[str] = ..., withdrawn_by: _Optional[str] = ...) -> None: ...

class CommitmentResponse(_message.Message):
    __slots__ = ("commitment", "consistency")
    COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    commitment: Commitment
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, commitment: _Optional[_Union[Commitment, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ListCommitmentsRequest(_message.Message):
    __slots__ = ("tree_id", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListCommitmentsResponse(_message.Message):
    __slots__ = ("commitments", "next_page_token")
    COMMITMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    commitments: _containers.RepeatedCompositeFieldContainer[Commitment]
    next_page_token: str
    def __init__(self, commitments: _Optional[_Iterable[_Union[Commitment, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ContextSummary(_message.Message):
    __slots__ = ("subject", "version", "text", "token_estimate", "written_by", "created_at")
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    version: int
    text: str
    token_estimate: int
    written_by: str
    created_at: str
    def __init__(self, subject: _Optional[str] = ..., version: _Optional[int] = ..., text: _Optional[str] = ..., token_estimate: _Optional[int] = ..., written_by: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class RecordContextSummaryRequest(_message.Message):
    __slots__ = ("idempotency_key", "subject", "text", "expected_version", "written_by", "token_estimate")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_BY_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    subject: str
    text: str
    expected_version: int
    written_by: str
    token_estimate: int
    def __init__(self, idempotency_key: _Optional[str] = ..., subject: _Optional[str] = ..., text: _Optional[str] = ..., expected_version: _Optional[int] = ..., written_by: _Optional[str] = ..., token_estimate: _Optional[int] = ...) -> None: ...

class RecordContextSummaryResponse(_message.Message):
    __slots__ = ("summary", "consistency")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    summary: ContextSummary
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, summary: _Optional[_Union[ContextSummary, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class AttachmentFragment(_message.Message):
    __slots__ = ("node_id", "attachment_id", "start", "end", "text")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_ID_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    attachment_id: str
    start: int
    end: int
    text: str
    def __init__(self, node_id: _Optional[str] = ..., attachment_id: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class AssembleContextRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "budget", "token_budget", "boundaries", "token_estimates", "fragments", "parent_chain")
    class TokenEstimatesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    BOUNDARIES_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ESTIMATES_FIELD_NUMBER: _ClassVar[int]
    FRAGMENTS_FIELD_NUMBER: _ClassVar[int]
    PARENT_CHAIN_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    budget: int
    token_budget: int
    boundaries: _containers.RepeatedScalarFieldContainer[str]
    token_estimates: _containers.ScalarMap[str, int]
    fragments: _containers.RepeatedCompositeFieldContainer[AttachmentFragment]
    parent_chain: int
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., budget: _Optional[int] = ..., token_budget: _Optional[int] = ..., boundaries: _Optional[_Iterable[str]] = ..., token_estimates: _Optional[_Mapping[str, int]] = ..., fragments: _Optional[_Iterable[_Union[AttachmentFragment, _Mapping]]] = ..., parent_chain: _Optional[int] = ...) -> None: ...

class AssembledItem(_message.Message):
    __slots__ = ("subject", "layer", "inclusion", "text", "summary_version", "fragment_start", "fragment_end", "omitted_reason", "code_points", "tokens", "mandatory", "node_id", "full_code_points")
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    INCLUSION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_VERSION_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_START_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_END_FIELD_NUMBER: _ClassVar[int]
    OMITTED_REASON_FIELD_NUMBER: _ClassVar[int]
    CODE_POINTS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    MANDATORY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    FULL_CODE_POINTS_FIELD_NUMBER: _ClassVar[int]
    subject: str
    layer: ContextLayer
    inclusion: ContextInclusion
    text: str
    summary_version: int
    fragment_start: int
    fragment_end: int
    omitted_reason: str
    code_points: int
    tokens: int
    mandatory: bool
    node_id: str
    full_code_points: int
    def __init__(self, subject: _Optional[str] = ..., layer: _Optional[_Union[ContextLayer, str]] = ..., inclusion: _Optional[_Union[ContextInclusion, str]] = ..., text: _Optional[str] = ..., summary_version: _Optional[int] = ..., fragment_start: _Optional[int] = ..., fragment_end: _Optional[int] = ..., omitted_reason: _Optional[str] = ..., code_points: _Optional[int] = ..., tokens: _Optional[int] = ..., mandatory: _Optional[bool] = ..., node_id: _Optional[str] = ..., full_code_points: _Optional[int] = ...) -> None: ...

class AssembleContextResponse(_message.Message):
    __slots__ = ("context_version_id", "node_id", "items", "budget", "used", "token_budget", "used_tokens", "digest", "created_at", "consistency")
    CONTEXT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    USED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    context_version_id: str
    node_id: str
    items: _containers.RepeatedCompositeFieldContainer[AssembledItem]
    budget: int
    used: int
    token_budget: int
    used_tokens: int
    digest: str
    created_at: str
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, context_version_id: _Optional[str] = ..., node_id: _Optional[str] = ..., items: _Optional[_Iterable[_Union[AssembledItem, _Mapping]]] = ..., budget: _Optional[int] = ..., used: _Optional[int] = ..., token_budget: _Optional[int] = ..., used_tokens: _Optional[int] = ..., digest: _Optional[str] = ..., created_at: _Optional[str] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetContextVersionRequest(_message.Message):
    __slots__ = ("context_version_id",)
    CONTEXT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    context_version_id: str
    def __init__(self, context_version_id: _Optional[str] = ...) -> None: ...

class CitationAuthorization(_message.Message):
    __slots__ = ("id", "tree_id", "grantor", "grantee", "redactions", "created_at", "revoked_at", "revoked_by")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    GRANTOR_FIELD_NUMBER: _ClassVar[int]
    GRANTEE_FIELD_NUMBER: _ClassVar[int]
    REDACTIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_BY_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    grantor: str
    grantee: str
    redactions: _containers.RepeatedScalarFieldContainer[str]
    created_at: str
    revoked_at: str
    revoked_by: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., grantor: _Optional[str] = ..., grantee: _Optional[str] = ..., redactions: _Optional[_Iterable[str]] = ..., created_at: _Optional[str] = ..., revoked_at: _Optional[str] = ..., revoked_by: _Optional[str] = ...) -> None: ...

class GrantCitationAuthorizationRequest(_message.Message):
    __slots__ = ("idempotency_key", "tree_id", "grantor", "grantee", "redactions")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    GRANTOR_FIELD_NUMBER: _ClassVar[int]
    GRANTEE_FIELD_NUMBER: _ClassVar[int]
    REDACTIONS_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    grantor: str
    grantee: str
    redactions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., grantor: _Optional[str] = ..., grantee: _Optional[str] = ..., redactions: _Optional[_Iterable[str]] = ...) -> None: ...

class RevokeCitationAuthorizationRequest(_message.Message):
    __slots__ = ("idempotency_key", "authorization_id", "revoked_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZATION_ID_FIELD_NUMBER: _ClassVar[int]
    REVOKED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    authorization_id: str
    revoked_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., authorization_id: _Optional[str] = ..., revoked_by: _Optional[str] = ...) -> None: ...

class CitationAuthorizationResponse(_message.Message):
    __slots__ = ("authorization", "tombstoned_citations", "consistency")
    AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
    TOMBSTONED_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    authorization: CitationAuthorization
    tombstoned_citations: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, authorization: _Optional[_Union[CitationAuthorization, _Mapping]] = ..., tombstoned_citations: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ListCitationsRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class CitationRead(_message.Message):
    __slots__ = ("citation", "position", "superseded_by")
    CITATION_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    citation: Citation
    position: int
    superseded_by: str
    def __init__(self, citation: _Optional[_Union[Citation, _Mapping]] = ..., position: _Optional[int] = ..., superseded_by: _Optional[str] = ...) -> None: ...

class ListCitationsResponse(_message.Message):
    __slots__ = ("citations",)
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    citations: _containers.RepeatedCompositeFieldContainer[CitationRead]
    def __init__(self, citations: _Optional[_Iterable[_Union[CitationRead, _Mapping]]] = ...) -> None: ...

class SetBranchStateRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "state", "expected_revision", "changed_by", "reason", "summary")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    state: BranchState
    expected_revision: int
    changed_by: str
    reason: str
    summary: str
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., state: _Optional[_Union[BranchState, str]] = ..., expected_revision: _Optional[int] = ..., changed_by: _Optional[str] = ..., reason: _Optional[str] = ..., summary: _Optional[str] = ...) -> None: ...

class BranchConclusion(_message.Message):
    __slots__ = ("summary", "open_question_ids", "candidate_answer_ids", "concluded_by", "concluded_at", "revision")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    OPEN_QUESTION_IDS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_ANSWER_IDS_FIELD_NUMBER: _ClassVar[int]
    CONCLUDED_BY_FIELD_NUMBER: _ClassVar[int]
    CONCLUDED_AT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    summary: str
    open_question_ids: _containers.RepeatedScalarFieldContainer[str]
    candidate_answer_ids: _containers.RepeatedScalarFieldContainer[str]
    concluded_by: str
    concluded_at: str
    revision: int
    def __init__(self, summary: _Optional[str] = ..., open_question_ids: _Optional[_Iterable[str]] = ..., candidate_answer_ids: _Optional[_Iterable[str]] = ..., concluded_by: _Optional[str] = ..., concluded_at: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class BranchTransition(_message.Message):
    __slots__ = ("revision", "from_state", "to_state", "changed_by", "reason", "changed_at")
    REVISION_FIELD_NUMBER: _ClassVar[int]
    FROM_STATE_FIELD_NUMBER: _ClassVar[int]
    TO_STATE_FIELD_NUMBER: _ClassVar[int]
    CHANGED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    revision: int
    from_state: BranchState
    to_state: BranchState
    changed_by: str
    reason: str
    changed_at: str
    def __init__(self, revision: _Optional[int] = ..., from_state: _Optional[_Union[BranchState, str]] = ..., to_state: _Optional[_Union[BranchState, str]] = ..., changed_by: _Optional[str] = ..., reason: _Optional[str] = ..., changed_at: _Optional[str] = ...) -> None: ...

class Branch(_message.Message):
    __slots__ = ("node_id", "tree_id", "state", "revision", "last_conclusion", "transitions")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    LAST_CONCLUSION_FIELD_NUMBER: _ClassVar[int]
    TRANSITIONS_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    tree_id: str
    state: BranchState
    revision: int
    last_conclusion: BranchConclusion
    transitions: _containers.RepeatedCompositeFieldContainer[BranchTransition]
    def __init__(self, node_id: _Optional[str] = ..., tree_id: _Optional[str] = ..., state: _Optional[_Union[BranchState, str]] = ..., revision: _Optional[int] = ..., last_conclusion: _Optional[_Union[BranchConclusion, _Mapping]] = ..., transitions: _Optional[_Iterable[_Union[BranchTransition, _Mapping]]] = ...) -> None: ...

class SetBranchStateResponse(_message.Message):
    __slots__ = ("branch", "consistency")
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    branch: Branch
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, branch: _Optional[_Union[Branch, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetBranchRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class GetBranchResponse(_message.Message):
    __slots__ = ("branch",)
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    branch: Branch
    def __init__(self, branch: _Optional[_Union[Branch, _Mapping]] = ...) -> None: ...

class ListBranchesRequest(_message.Message):
    __slots__ = ("tree_id", "include_archived", "states", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    include_archived: bool
    states: _containers.RepeatedScalarFieldContainer[BranchState]
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., include_archived: _Optional[bool] = ..., states: _Optional[_Iterable[_Union[BranchState, str]]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListBranchesResponse(_message.Message):
    __slots__ = ("branches", "next_page_token")
    BRANCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    branches: _containers.RepeatedCompositeFieldContainer[Branch]
    next_page_token: str
    def __init__(self, branches: _Optional[_Iterable[_Union[Branch, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CanonInvitation(_message.Message):
    __slots__ = ("id", "tree_id", "node_id", "reason", "proposed_by", "state", "decided_by", "decision_reason", "decided_at", "version_id", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_BY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    DECISION_REASON_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    node_id: str
    reason: str
    proposed_by: str
    state: InvitationState
    decided_by: str
    decision_reason: str
    decided_at: str
    version_id: str
    created_at: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., node_id: _Optional[str] = ..., reason: _Optional[str] = ..., proposed_by: _Optional[str] = ..., state: _Optional[_Union[InvitationState, str]] = ..., decided_by: _Optional[str] = ..., decision_reason: _Optional[str] = ..., decided_at: _Optional[str] = ..., version_id: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class InviteCanonicalizationRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "reason", "proposed_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    reason: str
    proposed_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., reason: _Optional[str] = ..., proposed_by: _Optional[str] = ...) -> None: ...

class DeclineCanonInvitationRequest(_message.Message):
    __slots__ = ("idempotency_key", "invitation_id", "declined_by", "reason")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    INVITATION_ID_FIELD_NUMBER: _ClassVar[int]
    DECLINED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    invitation_id: str
    declined_by: str
    reason: str
    def __init__(self, idempotency_key: _Optional[str] = ..., invitation_id: _Optional[str] = ..., declined_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CanonInvitationResponse(_message.Message):
    __slots__ = ("invitation", "consistency")
    INVITATION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    invitation: CanonInvitation
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, invitation: _Optional[_Union[CanonInvitation, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ListCanonInvitationsRequest(_message.Message):
    __slots__ = ("tree_id", "states", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    states: _containers.RepeatedScalarFieldContainer[InvitationState]
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., states: _Optional[_Iterable[_Union[InvitationState, str]]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListCanonInvitationsResponse(_message.Message):
    __slots__ = ("invitations", "next_page_token")
    INVITATIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    invitations: _containers.RepeatedCompositeFieldContainer[CanonInvitation]
    next_page_token: str
    def __init__(self, invitations: _Optional[_Iterable[_Union[CanonInvitation, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListCanonCandidatesRequest(_message.Message):
    __slots__ = ("version_id", "include_reviewed")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REVIEWED_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    include_reviewed: bool
    def __init__(self, version_id: _Optional[str] = ..., include_reviewed: _Optional[bool] = ...) -> None: ...

class ListCanonCandidatesResponse(_message.Message):
    __slots__ = ("candidates",)
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedCompositeFieldContainer[CanonCandidate]
    def __init__(self, candidates: _Optional[_Iterable[_Union[CanonCandidate, _Mapping]]] = ...) -> None: ...

class ReviewCanonCandidateRequest(_message.Message):
    __slots__ = ("idempotency_key", "candidate_id", "expected_revision", "reviewed_by", "reason")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    candidate_id: str
    expected_revision: int
    reviewed_by: str
    reason: str
    def __init__(self, idempotency_key: _Optional[str] = ..., candidate_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., reviewed_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CanonCandidateResponse(_message.Message):
    __slots__ = ("candidate", "consistency")
    CANDIDATE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    candidate: CanonCandidate
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, candidate: _Optional[_Union[CanonCandidate, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class MergeReference(_message.Message):
    __slots__ = ("question_id", "position", "source_node_id", "source_tree_id", "source_state", "merged_by", "created_at")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TREE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_STATE_FIELD_NUMBER: _ClassVar[int]
    MERGED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    position: int
    source_node_id: str
    source_tree_id: str
    source_state: MergeSourceState
    merged_by: str
    created_at: str
    def __init__(self, question_id: _Optional[str] = ..., position: _Optional[int] = ..., source_node_id: _Optional[str] = ..., source_tree_id: _Optional[str] = ..., source_state: _Optional[_Union[MergeSourceState, str]] = ..., merged_by: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class MergeByReferenceRequest(_message.Message):
    __slots__ = ("idempotency_key", "tree_id", "parent_id", "text", "source_node_ids", "merged_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    MERGED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    parent_id: str
    text: str
    source_node_ids: _containers.RepeatedScalarFieldContainer[str]
    merged_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., text: _Optional[str] = ..., source_node_ids: _Optional[_Iterable[str]] = ..., merged_by: _Optional[str] = ...) -> None: ...

class MergeByReferenceResponse(_message.Message):
    __slots__ = ("question", "references", "tree_revision", "consistency")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    REFERENCES_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    question: Node
    references: _containers.RepeatedCompositeFieldContainer[MergeReference]
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, question: _Optional[_Union[Node, _Mapping]] = ..., references: _Optional[_Iterable[_Union[MergeReference, _Mapping]]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ListMergeReferencesRequest(_message.Message):
    __slots__ = ("question_id",)
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    def __init__(self, question_id: _Optional[str] = ...) -> None: ...

class ListMergeReferencesResponse(_message.Message):
    __slots__ = ("references",)
    REFERENCES_FIELD_NUMBER: _ClassVar[int]
    references: _containers.RepeatedCompositeFieldContainer[MergeReference]
    def __init__(self, references: _Optional[_Iterable[_Union[MergeReference, _Mapping]]] = ...) -> None: ...

class TransplantBranchRequest(_message.Message):
    __slots__ = ("idempotency_key", "node_id", "title", "transplanted_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANTED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    node_id: str
    title: str
    transplanted_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., node_id: _Optional[str] = ..., title: _Optional[str] = ..., transplanted_by: _Optional[str] = ...) -> None: ...

class TransplantOrigin(_message.Message):
    __slots__ = ("tree_id", "source_tree_id", "source_node_id", "source_tree_revision", "ancestor_path", "copies", "transplanted_by", "transplanted_at")
    class CopiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TREE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    ANCESTOR_PATH_FIELD_NUMBER: _ClassVar[int]
    COPIES_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANTED_BY_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANTED_AT_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    source_tree_id: str
    source_node_id: str
    source_tree_revision: int
    ancestor_path: _containers.RepeatedCompositeFieldContainer[Node]
    copies: _containers.ScalarMap[str, str]
    transplanted_by: str
    transplanted_at: str
    def __init__(self, tree_id: _Optional[str] = ..., source_tree_id: _Optional[str] = ..., source_node_id: _Optional[str] = ..., source_tree_revision: _Optional[int] = ..., ancestor_path: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., copies: _Optional[_Mapping[str, str]] = ..., transplanted_by: _Optional[str] = ..., transplanted_at: _Optional[str] = ...) -> None: ...

class TransplantBranchResponse(_message.Message):
    __slots__ = ("tree", "origin", "consistency")
    TREE_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    tree: Tree
    origin: TransplantOrigin
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, tree: _Optional[_Union[Tree, _Mapping]] = ..., origin: _Optional[_Union[TransplantOrigin, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetTransplantOriginRequest(_message.Message):
    __slots__ = ("tree_id",)
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    def __init__(self, tree_id: _Optional[str] = ...) -> None: ...

class GetTransplantOriginResponse(_message.Message):
    __slots__ = ("origin",)
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    origin: TransplantOrigin
    def __init__(self, origin: _Optional[_Union[TransplantOrigin, _Mapping]] = ...) -> None: ...
