from mirrortree.v1 import common_pb2 as _common_pb2
from mirrortree.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CodePointRange(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class SourcePart(_message.Message):
    __slots__ = ("source_type", "source_id", "source_version", "range")
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    source_type: str
    source_id: str
    source_version: str
    range: CodePointRange
    def __init__(self, source_type: _Optional[str] = ..., source_id: _Optional[str] = ..., source_version: _Optional[str] = ..., range: _Optional[_Union[CodePointRange, _Mapping]] = ...) -> None: ...

class LeafExtraction(_message.Message):
    __slots__ = ("contract_version", "parts", "reanalysis")
    CONTRACT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    REANALYSIS_FIELD_NUMBER: _ClassVar[int]
    contract_version: str
    parts: _containers.RepeatedCompositeFieldContainer[SourcePart]
    reanalysis: bool
    def __init__(self, contract_version: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[SourcePart, _Mapping]]] = ..., reanalysis: _Optional[bool] = ...) -> None: ...

class PlanExtractionRequest(_message.Message):
    __slots__ = ("scope", "contract_version", "parts")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    scope: _common_pb2.Scope
    contract_version: str
    parts: _containers.RepeatedCompositeFieldContainer[SourcePart]
    def __init__(self, scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., contract_version: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[SourcePart, _Mapping]]] = ...) -> None: ...

class PartPlan(_message.Message):
    __slots__ = ("requested", "canonical_source_id", "extracted", "missing", "leaf_count", "source_project")
    REQUESTED_FIELD_NUMBER: _ClassVar[int]
    CANONICAL_SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRACTED_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    LEAF_COUNT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PROJECT_FIELD_NUMBER: _ClassVar[int]
    requested: SourcePart
    canonical_source_id: str
    extracted: _containers.RepeatedCompositeFieldContainer[CodePointRange]
    missing: _containers.RepeatedCompositeFieldContainer[CodePointRange]
    leaf_count: int
    source_project: str
    def __init__(self, requested: _Optional[_Union[SourcePart, _Mapping]] = ..., canonical_source_id: _Optional[str] = ..., extracted: _Optional[_Iterable[_Union[CodePointRange, _Mapping]]] = ..., missing: _Optional[_Iterable[_Union[CodePointRange, _Mapping]]] = ..., leaf_count: _Optional[int] = ..., source_project: _Optional[str] = ...) -> None: ...

class PlanExtractionResponse(_message.Message):
    __slots__ = ("parts",)
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[PartPlan]
    def __init__(self, parts: _Optional[_Iterable[_Union[PartPlan, _Mapping]]] = ...) -> None: ...

class SearchLeavesRequest(_message.Message):
    __slots__ = ("scope", "query", "source_type", "source_id", "page_size", "cursor", "min_consistency", "session_id")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    MIN_CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    scope: _common_pb2.Scope
    query: str
    source_type: str
    source_id: str
    page_size: int
    cursor: str
    min_consistency: _common_pb2.ConsistencyToken
    session_id: str
    def __init__(self, scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., query: _Optional[str] = ..., source_type: _Optional[str] = ..., source_id: _Optional[str] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., min_consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ..., session_id: _Optional[str] = ...) -> None: ...

class SharedLeaf(_message.Message):
    __slots__ = ("leaf_id", "text", "source_type", "source_id", "source_version", "range", "contract_version", "analysis", "source_project", "extracted_in", "extracted_in_result_id", "extracted_object_id", "confirmation_state", "event_time", "recorded_at", "recorded_in_scope")
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_VERSION_FIELD_NUMBER: _ClassVar[int]
    ANALYSIS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PROJECT_FIELD_NUMBER: _ClassVar[int]
    EXTRACTED_IN_FIELD_NUMBER: _ClassVar[int]
    EXTRACTED_IN_RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRACTED_OBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORDED_IN_SCOPE_FIELD_NUMBER: _ClassVar[int]
    leaf_id: str
    text: str
    source_type: str
    source_id: str
    source_version: str
    range: CodePointRange
    contract_version: str
    analysis: int
    source_project: str
    extracted_in: _common_pb2.Scope
    extracted_in_result_id: str
    extracted_object_id: str
    confirmation_state: str
    event_time: _common_pb2.EventTime
    recorded_at: str
    recorded_in_scope: bool
    def __init__(self, leaf_id: _Optional[str] = ..., text: _Optional[str] = ..., source_type: _Optional[str] = ..., source_id: _Optional[str] = ..., source_version: _Optional[str] = ..., range: _Optional[_Union[CodePointRange, _Mapping]] = ..., contract_version: _Optional[str] = ..., analysis: _Optional[int] = ..., source_project: _Optional[str] = ..., extracted_in: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., extracted_in_result_id: _Optional[str] = ..., extracted_object_id: _Optional[str] = ..., confirmation_state: _Optional[str] = ..., event_time: _Optional[_Union[_common_pb2.EventTime, _Mapping]] = ..., recorded_at: _Optional[str] = ..., recorded_in_scope: _Optional[bool] = ...) -> None: ...

class SearchLeavesResponse(_message.Message):
    __slots__ = ("leaves", "page", "scope", "resolution")
    LEAVES_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    leaves: _containers.RepeatedCompositeFieldContainer[SharedLeaf]
    page: _common_pb2.PageInfo
    scope: _common_pb2.Scope
    resolution: str
    def __init__(self, leaves: _Optional[_Iterable[_Union[SharedLeaf, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., resolution: _Optional[str] = ...) -> None: ...

class LinkedLeafHit(_message.Message):
    __slots__ = ("ref", "result_id", "leaf", "source_reference_ids")
    REF_FIELD_NUMBER: _ClassVar[int]
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    LEAF_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REFERENCE_IDS_FIELD_NUMBER: _ClassVar[int]
    ref: _common_pb2.ObjectRef
    result_id: str
    leaf: SharedLeaf
    source_reference_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ref: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., result_id: _Optional[str] = ..., leaf: _Optional[_Union[SharedLeaf, _Mapping]] = ..., source_reference_ids: _Optional[_Iterable[str]] = ...) -> None: ...
