from mirrortree.v1 import common_pb2 as _common_pb2
from mirrortree.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GraphPurgeAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GRAPH_PURGE_ACTION_UNSPECIFIED: _ClassVar[GraphPurgeAction]
    GRAPH_TOMBSTONE: _ClassVar[GraphPurgeAction]
    GRAPH_RETRACT: _ClassVar[GraphPurgeAction]
GRAPH_PURGE_ACTION_UNSPECIFIED: GraphPurgeAction
GRAPH_TOMBSTONE: GraphPurgeAction
GRAPH_RETRACT: GraphPurgeAction

class PreviewPurgeRequest(_message.Message):
    __slots__ = ("node_id", "include_transplant_copies")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TRANSPLANT_COPIES_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    include_transplant_copies: bool
    def __init__(self, node_id: _Optional[str] = ..., include_transplant_copies: _Optional[bool] = ...) -> None: ...

class PurgeImpact(_message.Message):
    __slots__ = ("branch_id", "tree_id", "branch_revision", "nodes", "sub_branch_ids", "citations", "canon_entries", "graph_objects", "preferences", "merge_references", "transplant_copies", "context_copies", "transitions", "transplant_origins", "records")
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_REVISION_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SUB_BRANCH_IDS_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CANON_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    GRAPH_OBJECTS_FIELD_NUMBER: _ClassVar[int]
    PREFERENCES_FIELD_NUMBER: _ClassVar[int]
    MERGE_REFERENCES_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANT_COPIES_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_COPIES_FIELD_NUMBER: _ClassVar[int]
    TRANSITIONS_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANT_ORIGINS_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    branch_id: str
    tree_id: str
    branch_revision: int
    nodes: _containers.RepeatedCompositeFieldContainer[PurgedNodeImpact]
    sub_branch_ids: _containers.RepeatedScalarFieldContainer[str]
    citations: _containers.RepeatedCompositeFieldContainer[InboundCitation]
    canon_entries: _containers.RepeatedCompositeFieldContainer[CanonEntryImpact]
    graph_objects: _containers.RepeatedCompositeFieldContainer[GraphObjectImpact]
    preferences: _containers.RepeatedCompositeFieldContainer[PreferenceImpact]
    merge_references: _containers.RepeatedCompositeFieldContainer[MergeReferenceImpact]
    transplant_copies: _containers.RepeatedCompositeFieldContainer[TransplantCopyImpact]
    context_copies: _containers.RepeatedCompositeFieldContainer[ContextCopyImpact]
    transitions: _containers.RepeatedCompositeFieldContainer[TransitionImpact]
    transplant_origins: _containers.RepeatedCompositeFieldContainer[TransplantOriginImpact]
    records: _containers.RepeatedCompositeFieldContainer[RecordImpact]
    def __init__(self, branch_id: _Optional[str] = ..., tree_id: _Optional[str] = ..., branch_revision: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[PurgedNodeImpact, _Mapping]]] = ..., sub_branch_ids: _Optional[_Iterable[str]] = ..., citations: _Optional[_Iterable[_Union[InboundCitation, _Mapping]]] = ..., canon_entries: _Optional[_Iterable[_Union[CanonEntryImpact, _Mapping]]] = ..., graph_objects: _Optional[_Iterable[_Union[GraphObjectImpact, _Mapping]]] = ..., preferences: _Optional[_Iterable[_Union[PreferenceImpact, _Mapping]]] = ..., merge_references: _Optional[_Iterable[_Union[MergeReferenceImpact, _Mapping]]] = ..., transplant_copies: _Optional[_Iterable[_Union[TransplantCopyImpact, _Mapping]]] = ..., context_copies: _Optional[_Iterable[_Union[ContextCopyImpact, _Mapping]]] = ..., transitions: _Optional[_Iterable[_Union[TransitionImpact, _Mapping]]] = ..., transplant_origins: _Optional[_Iterable[_Union[TransplantOriginImpact, _Mapping]]] = ..., records: _Optional[_Iterable[_Union[RecordImpact, _Mapping]]] = ...) -> None: ...

class PurgedNodeImpact(_message.Message):
    __slots__ = ("node_id", "tree_id", "transplant_copy")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANT_COPY_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    tree_id: str
    transplant_copy: bool
    def __init__(self, node_id: _Optional[str] = ..., tree_id: _Optional[str] = ..., transplant_copy: _Optional[bool] = ...) -> None: ...

class InboundCitation(_message.Message):
    __slots__ = ("citing_node_id", "citing_tree_id", "position", "cited_node_id")
    CITING_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    CITING_TREE_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    CITED_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    citing_node_id: str
    citing_tree_id: str
    position: int
    cited_node_id: str
    def __init__(self, citing_node_id: _Optional[str] = ..., citing_tree_id: _Optional[str] = ..., position: _Optional[int] = ..., cited_node_id: _Optional[str] = ...) -> None: ...

class CanonEntryImpact(_message.Message):
    __slots__ = ("version_id", "tree_id", "version", "node_ids", "citing_node_ids")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    CITING_NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    tree_id: str
    version: int
    node_ids: _containers.RepeatedScalarFieldContainer[str]
    citing_node_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, version_id: _Optional[str] = ..., tree_id: _Optional[str] = ..., version: _Optional[int] = ..., node_ids: _Optional[_Iterable[str]] = ..., citing_node_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GraphObjectImpact(_message.Message):
    __slots__ = ("result_id", "object_type", "object_id", "action")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    OBJECT_TYPE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    object_type: _common_pb2.ObjectType
    object_id: str
    action: GraphPurgeAction
    def __init__(self, result_id: _Optional[str] = ..., object_type: _Optional[_Union[_common_pb2.ObjectType, str]] = ..., object_id: _Optional[str] = ..., action: _Optional[_Union[GraphPurgeAction, str]] = ...) -> None: ...

class PreferenceImpact(_message.Message):
    __slots__ = ("preference_id", "subject")
    PREFERENCE_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    preference_id: str
    subject: str
    def __init__(self, preference_id: _Optional[str] = ..., subject: _Optional[str] = ...) -> None: ...

class MergeReferenceImpact(_message.Message):
    __slots__ = ("question_id", "tree_id", "position", "source_node_id")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    tree_id: str
    position: int
    source_node_id: str
    def __init__(self, question_id: _Optional[str] = ..., tree_id: _Optional[str] = ..., position: _Optional[int] = ..., source_node_id: _Optional[str] = ...) -> None: ...

class TransplantCopyImpact(_message.Message):
    __slots__ = ("tree_id", "source_node_id", "copy_node_id", "purged")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    COPY_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PURGED_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    source_node_id: str
    copy_node_id: str
    purged: bool
    def __init__(self, tree_id: _Optional[str] = ..., source_node_id: _Optional[str] = ..., copy_node_id: _Optional[str] = ..., purged: _Optional[bool] = ...) -> None: ...

class ContextCopyImpact(_message.Message):
    __slots__ = ("context_version_id", "subject")
    CONTEXT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    context_version_id: str
    subject: str
    def __init__(self, context_version_id: _Optional[str] = ..., subject: _Optional[str] = ...) -> None: ...

class TransitionImpact(_message.Message):
    __slots__ = ("branch_id", "revision", "conclusion", "inside")
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CONCLUSION_FIELD_NUMBER: _ClassVar[int]
    INSIDE_FIELD_NUMBER: _ClassVar[int]
    branch_id: str
    revision: int
    conclusion: bool
    inside: bool
    def __init__(self, branch_id: _Optional[str] = ..., revision: _Optional[int] = ..., conclusion: _Optional[bool] = ..., inside: _Optional[bool] = ...) -> None: ...

class TransplantOriginImpact(_message.Message):
    __slots__ = ("tree_id", "node_ids")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    node_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tree_id: _Optional[str] = ..., node_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RecordImpact(_message.Message):
    __slots__ = ("table", "id")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    table: str
    id: str
    def __init__(self, table: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class PreviewPurgeResponse(_message.Message):
    __slots__ = ("impact", "preview_token")
    IMPACT_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_TOKEN_FIELD_NUMBER: _ClassVar[int]
    impact: PurgeImpact
    preview_token: str
    def __init__(self, impact: _Optional[_Union[PurgeImpact, _Mapping]] = ..., preview_token: _Optional[str] = ...) -> None: ...

class PurgeChoice(_message.Message):
    __slots__ = ("citations", "canon_entries", "graph_facts", "merge_references", "transplant_copies", "conclusions", "transplant_origins")
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CANON_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FACTS_FIELD_NUMBER: _ClassVar[int]
    MERGE_REFERENCES_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANT_COPIES_FIELD_NUMBER: _ClassVar[int]
    CONCLUSIONS_FIELD_NUMBER: _ClassVar[int]
    TRANSPLANT_ORIGINS_FIELD_NUMBER: _ClassVar[int]
    citations: bool
    canon_entries: bool
    graph_facts: bool
    merge_references: bool
    transplant_copies: bool
    conclusions: bool
    transplant_origins: bool
    def __init__(self, citations: _Optional[bool] = ..., canon_entries: _Optional[bool] = ..., graph_facts: _Optional[bool] = ..., merge_references: _Optional[bool] = ..., transplant_copies: _Optional[bool] = ..., conclusions: _Optional[bool] = ..., transplant_origins: _Optional[bool] = ...) -> None: ...

class PurgeRequest(_message.Message):
    __slots__ = ("idempotency_key", "tree_id", "node_id", "preview_token", "choice", "purged_by", "reason")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CHOICE_FIELD_NUMBER: _ClassVar[int]
    PURGED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    node_id: str
    preview_token: str
    choice: PurgeChoice
    purged_by: str
    reason: str
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., node_id: _Optional[str] = ..., preview_token: _Optional[str] = ..., choice: _Optional[_Union[PurgeChoice, _Mapping]] = ..., purged_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class PurgeTombstone(_message.Message):
    __slots__ = ("purge_id", "branch_id", "tree_id", "purged_by", "reason", "purged_at", "node_id")
    PURGE_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    PURGED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PURGED_AT_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    purge_id: str
    branch_id: str
    tree_id: str
    purged_by: str
    reason: str
    purged_at: str
    node_id: str
    def __init__(self, purge_id: _Optional[str] = ..., branch_id: _Optional[str] = ..., tree_id: _Optional[str] = ..., purged_by: _Optional[str] = ..., reason: _Optional[str] = ..., purged_at: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class PurgeResponse(_message.Message):
    __slots__ = ("impact", "tombstone", "consistency")
    IMPACT_FIELD_NUMBER: _ClassVar[int]
    TOMBSTONE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    impact: PurgeImpact
    tombstone: PurgeTombstone
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, impact: _Optional[_Union[PurgeImpact, _Mapping]] = ..., tombstone: _Optional[_Union[PurgeTombstone, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetPurgeTombstoneRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class GetPurgeTombstoneResponse(_message.Message):
    __slots__ = ("tombstone",)
    TOMBSTONE_FIELD_NUMBER: _ClassVar[int]
    tombstone: PurgeTombstone
    def __init__(self, tombstone: _Optional[_Union[PurgeTombstone, _Mapping]] = ...) -> None: ...
