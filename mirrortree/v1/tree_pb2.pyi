from mirrortree.v1 import common_pb2 as _common_pb2
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

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    DECISION: _ClassVar[EventKind]
    DISCUSSION: _ClassVar[EventKind]
    CHANGE: _ClassVar[EventKind]
    MILESTONE: _ClassVar[EventKind]
REALM_UNSPECIFIED: Realm
REAL: Realm
WORLD: Realm
REHEARSAL: Realm
NODE_KIND_UNSPECIFIED: NodeKind
QUESTION: NodeKind
ANSWER: NodeKind
CONTINUATION: NodeKind
EVENT_KIND_UNSPECIFIED: EventKind
DECISION: EventKind
DISCUSSION: EventKind
CHANGE: EventKind
MILESTONE: EventKind

class Tree(_message.Message):
    __slots__ = ("id", "title", "owner", "project_id", "default_realm", "revision", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_REALM_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    owner: str
    project_id: str
    default_realm: Realm
    revision: int
    created_at: str
    updated_at: str
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., owner: _Optional[str] = ..., project_id: _Optional[str] = ..., default_realm: _Optional[_Union[Realm, str]] = ..., revision: _Optional[int] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("id", "tree_id", "parent_id", "kind", "realm", "text", "revision", "ordinal", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    parent_id: str
    kind: NodeKind
    realm: Realm
    text: str
    revision: int
    ordinal: int
    created_at: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., kind: _Optional[_Union[NodeKind, str]] = ..., realm: _Optional[_Union[Realm, str]] = ..., text: _Optional[str] = ..., revision: _Optional[int] = ..., ordinal: _Optional[int] = ..., created_at: _Optional[str] = ...) -> None: ...

class CreateTreeRequest(_message.Message):
    __slots__ = ("idempotency_key", "title", "owner", "project_id", "default_realm")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_REALM_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    title: str
    owner: str
    project_id: str
    default_realm: Realm
    def __init__(self, idempotency_key: _Optional[str] = ..., title: _Optional[str] = ..., owner: _Optional[str] = ..., project_id: _Optional[str] = ..., default_realm: _Optional[_Union[Realm, str]] = ...) -> None: ...

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
    __slots__ = ("idempotency_key", "tree_id", "parent_id", "text", "realm")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REALM_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    parent_id: str
    text: str
    realm: Realm
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., text: _Optional[str] = ..., realm: _Optional[_Union[Realm, str]] = ...) -> None: ...

class AskQuestionResponse(_message.Message):
    __slots__ = ("node", "tree_revision", "consistency")
    NODE_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    node: Node
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, node: _Optional[_Union[Node, _Mapping]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ListNodesRequest(_message.Message):
    __slots__ = ("tree_id", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListNodesResponse(_message.Message):
    __slots__ = ("nodes", "next_page_token")
    NODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[Node]
    next_page_token: str
    def __init__(self, nodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("idempotency_key", "result_id", "scope", "phase", "covered", "review_generated_at", "story_lines", "events", "entities", "summaries", "source_references", "excluded_source_types")
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
    def __init__(self, idempotency_key: _Optional[str] = ..., result_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., phase: _Optional[str] = ..., covered: _Optional[_Union[_common_pb2.TimeRange, _Mapping]] = ..., review_generated_at: _Optional[str] = ..., story_lines: _Optional[_Iterable[_Union[StoryLineInput, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[EventInput, _Mapping]]] = ..., entities: _Optional[_Iterable[_Union[EntityInput, _Mapping]]] = ..., summaries: _Optional[_Iterable[_Union[SummaryInput, _Mapping]]] = ..., source_references: _Optional[_Iterable[_Union[SourceReferenceInput, _Mapping]]] = ..., excluded_source_types: _Optional[_Iterable[str]] = ...) -> None: ...

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

class CreateBindingRequest(_message.Message):
    __slots__ = ("idempotency_key", "session_id", "runtime")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    session_id: str
    runtime: str
    def __init__(self, idempotency_key: _Optional[str] = ..., session_id: _Optional[str] = ..., runtime: _Optional[str] = ...) -> None: ...

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
