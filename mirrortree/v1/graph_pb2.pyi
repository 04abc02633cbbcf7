from mirrortree.v1 import common_pb2 as _common_pb2
from mirrortree.v1 import leaves_pb2 as _leaves_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ContextMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTEXT_MODE_UNSPECIFIED: _ClassVar[ContextMode]
    CURRENT: _ClassVar[ContextMode]
    TIMELINE: _ClassVar[ContextMode]

class ReadKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    READ_KIND_UNSPECIFIED: _ClassVar[ReadKind]
    SNAPSHOT: _ClassVar[ReadKind]
    VERSION: _ClassVar[ReadKind]
    CURRENT_CONTENT: _ClassVar[ReadKind]

class SourceAvailability(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_AVAILABILITY_UNSPECIFIED: _ClassVar[SourceAvailability]
    AVAILABLE: _ClassVar[SourceAvailability]
    DELETED: _ClassVar[SourceAvailability]
    INACCESSIBLE: _ClassVar[SourceAvailability]
    MOVED_OUT_OF_SCOPE: _ClassVar[SourceAvailability]
CONTEXT_MODE_UNSPECIFIED: ContextMode
CURRENT: ContextMode
TIMELINE: ContextMode
READ_KIND_UNSPECIFIED: ReadKind
SNAPSHOT: ReadKind
VERSION: ReadKind
CURRENT_CONTENT: ReadKind
SOURCE_AVAILABILITY_UNSPECIFIED: SourceAvailability
AVAILABLE: SourceAvailability
DELETED: SourceAvailability
INACCESSIBLE: SourceAvailability
MOVED_OUT_OF_SCOPE: SourceAvailability

class ReadOptions(_message.Message):
    __slots__ = ("min_consistency", "session_id")
    MIN_CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    min_consistency: _common_pb2.ConsistencyToken
    session_id: str
    def __init__(self, min_consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ..., session_id: _Optional[str] = ...) -> None: ...

class ResolvedScope(_message.Message):
    __slots__ = ("requested", "resolved", "resolution")
    REQUESTED_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    requested: _common_pb2.Scope
    resolved: _common_pb2.Scope
    resolution: str
    def __init__(self, requested: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., resolved: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., resolution: _Optional[str] = ...) -> None: ...

class ResponseBasis(_message.Message):
    __slots__ = ("scope", "time_range", "time_basis", "read_at", "read_revision")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    TIME_BASIS_FIELD_NUMBER: _ClassVar[int]
    READ_AT_FIELD_NUMBER: _ClassVar[int]
    READ_REVISION_FIELD_NUMBER: _ClassVar[int]
    scope: ResolvedScope
    time_range: _common_pb2.TimeRange
    time_basis: _common_pb2.TimeBasis
    read_at: str
    read_revision: int
    def __init__(self, scope: _Optional[_Union[ResolvedScope, _Mapping]] = ..., time_range: _Optional[_Union[_common_pb2.TimeRange, _Mapping]] = ..., time_basis: _Optional[_Union[_common_pb2.TimeBasis, str]] = ..., read_at: _Optional[str] = ..., read_revision: _Optional[int] = ...) -> None: ...

class CoveredInterval(_message.Message):
    __slots__ = ("result_id", "phase", "covered", "review_generated_at", "basis", "covered_unknown", "counts")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    COVERED_FIELD_NUMBER: _ClassVar[int]
    REVIEW_GENERATED_AT_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    COVERED_UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    phase: str
    covered: _common_pb2.TimeRange
    review_generated_at: str
    basis: _common_pb2.CoverageBasis
    covered_unknown: _common_pb2.Unknown
    counts: _containers.RepeatedCompositeFieldContainer[_common_pb2.CoverageCount]
    def __init__(self, result_id: _Optional[str] = ..., phase: _Optional[str] = ..., covered: _Optional[_Union[_common_pb2.TimeRange, _Mapping]] = ..., review_generated_at: _Optional[str] = ..., basis: _Optional[_Union[_common_pb2.CoverageBasis, str]] = ..., covered_unknown: _Optional[_Union[_common_pb2.Unknown, _Mapping]] = ..., counts: _Optional[_Iterable[_Union[_common_pb2.CoverageCount, _Mapping]]] = ...) -> None: ...

class Coverage(_message.Message):
    __slots__ = ("state", "processed", "results_in_scope", "excluded_source_types", "gaps", "unknown_time_excluded", "results_not_listed")
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATE_UNSPECIFIED: _ClassVar[Coverage.State]
        UNKNOWN: _ClassVar[Coverage.State]
        PARTIAL: _ClassVar[Coverage.State]
    STATE_UNSPECIFIED: Coverage.State
    UNKNOWN: Coverage.State
    PARTIAL: Coverage.State
    STATE_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_IN_SCOPE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_SOURCE_TYPES_FIELD_NUMBER: _ClassVar[int]
    GAPS_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_TIME_EXCLUDED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_NOT_LISTED_FIELD_NUMBER: _ClassVar[int]
    state: Coverage.State
    processed: _containers.RepeatedCompositeFieldContainer[CoveredInterval]
    results_in_scope: _common_pb2.Count
    excluded_source_types: _containers.RepeatedScalarFieldContainer[str]
    gaps: _containers.RepeatedScalarFieldContainer[str]
    unknown_time_excluded: _common_pb2.Count
    results_not_listed: int
    def __init__(self, state: _Optional[_Union[Coverage.State, str]] = ..., processed: _Optional[_Iterable[_Union[CoveredInterval, _Mapping]]] = ..., results_in_scope: _Optional[_Union[_common_pb2.Count, _Mapping]] = ..., excluded_source_types: _Optional[_Iterable[str]] = ..., gaps: _Optional[_Iterable[str]] = ..., unknown_time_excluded: _Optional[_Union[_common_pb2.Count, _Mapping]] = ..., results_not_listed: _Optional[int] = ...) -> None: ...

class Excerpt(_message.Message):
    __slots__ = ("text", "field", "start", "end", "field_length", "is_excerpt")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    FIELD_LENGTH_FIELD_NUMBER: _ClassVar[int]
    IS_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    text: str
    field: str
    start: int
    end: int
    field_length: int
    is_excerpt: bool
    def __init__(self, text: _Optional[str] = ..., field: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., field_length: _Optional[int] = ..., is_excerpt: _Optional[bool] = ...) -> None: ...

class SourceEntry(_message.Message):
    __slots__ = ("source_reference_id", "source_type", "source_id", "source_version", "locator")
    SOURCE_REFERENCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    LOCATOR_FIELD_NUMBER: _ClassVar[int]
    source_reference_id: str
    source_type: str
    source_id: str
    source_version: str
    locator: _common_pb2.SourceLocator
    def __init__(self, source_reference_id: _Optional[str] = ..., source_type: _Optional[str] = ..., source_id: _Optional[str] = ..., source_version: _Optional[str] = ..., locator: _Optional[_Union[_common_pb2.SourceLocator, _Mapping]] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("ref", "result_id", "scope", "title", "kind", "matched_fields", "match_reason", "excerpt", "object_revision", "time", "sources", "related", "score", "sources_omitted", "related_omitted")
    REF_FIELD_NUMBER: _ClassVar[int]
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    MATCH_REASON_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_FIELD_NUMBER: _ClassVar[int]
    OBJECT_REVISION_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    RELATED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_OMITTED_FIELD_NUMBER: _ClassVar[int]
    RELATED_OMITTED_FIELD_NUMBER: _ClassVar[int]
    ref: _common_pb2.ObjectRef
    result_id: str
    scope: _common_pb2.Scope
    title: str
    kind: str
    matched_fields: _containers.RepeatedScalarFieldContainer[str]
    match_reason: str
    excerpt: Excerpt
    object_revision: _common_pb2.Revision
    time: _common_pb2.TimeFacts
    sources: _containers.RepeatedCompositeFieldContainer[SourceEntry]
    related: _containers.RepeatedCompositeFieldContainer[_common_pb2.ObjectRef]
    score: int
    sources_omitted: int
    related_omitted: int
    def __init__(self, ref: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., result_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., title: _Optional[str] = ..., kind: _Optional[str] = ..., matched_fields: _Optional[_Iterable[str]] = ..., match_reason: _Optional[str] = ..., excerpt: _Optional[_Union[Excerpt, _Mapping]] = ..., object_revision: _Optional[_Union[_common_pb2.Revision, _Mapping]] = ..., time: _Optional[_Union[_common_pb2.TimeFacts, _Mapping]] = ..., sources: _Optional[_Iterable[_Union[SourceEntry, _Mapping]]] = ..., related: _Optional[_Iterable[_Union[_common_pb2.ObjectRef, _Mapping]]] = ..., score: _Optional[int] = ..., sources_omitted: _Optional[int] = ..., related_omitted: _Optional[int] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "scope", "object_types", "time_range", "time_basis", "page_size", "cursor", "options")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_TYPES_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    TIME_BASIS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    query: str
    scope: _common_pb2.Scope
    object_types: _containers.RepeatedScalarFieldContainer[_common_pb2.ObjectType]
    time_range: _common_pb2.TimeRange
    time_basis: _common_pb2.TimeBasis
    page_size: int
    cursor: str
    options: ReadOptions
    def __init__(self, query: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., object_types: _Optional[_Iterable[_Union[_common_pb2.ObjectType, str]]] = ..., time_range: _Optional[_Union[_common_pb2.TimeRange, _Mapping]] = ..., time_basis: _Optional[_Union[_common_pb2.TimeBasis, str]] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., options: _Optional[_Union[ReadOptions, _Mapping]] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("hits", "page", "coverage", "basis", "linked_leaves", "background")
    HITS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    LINKED_LEAVES_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    page: _common_pb2.PageInfo
    coverage: Coverage
    basis: ResponseBasis
    linked_leaves: _containers.RepeatedCompositeFieldContainer[_leaves_pb2.LinkedLeafHit]
    background: _containers.RepeatedCompositeFieldContainer[BackgroundHit]
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ..., coverage: _Optional[_Union[Coverage, _Mapping]] = ..., basis: _Optional[_Union[ResponseBasis, _Mapping]] = ..., linked_leaves: _Optional[_Iterable[_Union[_leaves_pb2.LinkedLeafHit, _Mapping]]] = ..., background: _Optional[_Iterable[_Union[BackgroundHit, _Mapping]]] = ...) -> None: ...

class BackgroundHit(_message.Message):
    __slots__ = ("ref", "scope", "subject", "excerpt", "label", "revision", "updated_at", "confirmed_by")
    REF_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    EXCERPT_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_BY_FIELD_NUMBER: _ClassVar[int]
    ref: _common_pb2.ObjectRef
    scope: _common_pb2.Scope
    subject: str
    excerpt: Excerpt
    label: str
    revision: int
    updated_at: str
    confirmed_by: str
    def __init__(self, ref: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., subject: _Optional[str] = ..., excerpt: _Optional[_Union[Excerpt, _Mapping]] = ..., label: _Optional[str] = ..., revision: _Optional[int] = ..., updated_at: _Optional[str] = ..., confirmed_by: _Optional[str] = ...) -> None: ...

class ContentFragment(_message.Message):
    __slots__ = ("part", "start", "end", "total_length", "text", "next_cursor")
    PART_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LENGTH_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    part: str
    start: int
    end: int
    total_length: int
    text: str
    next_cursor: str
    def __init__(self, part: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., total_length: _Optional[int] = ..., text: _Optional[str] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class ContextItem(_message.Message):
    __slots__ = ("ref", "result_id", "scope", "object_revision", "time", "content", "sources", "label", "kind", "sources_omitted")
    REF_FIELD_NUMBER: _ClassVar[int]
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_REVISION_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCES_OMITTED_FIELD_NUMBER: _ClassVar[int]
    ref: _common_pb2.ObjectRef
    result_id: str
    scope: _common_pb2.Scope
    object_revision: _common_pb2.Revision
    time: _common_pb2.TimeFacts
    content: ContentFragment
    sources: _containers.RepeatedCompositeFieldContainer[SourceEntry]
    label: str
    kind: str
    sources_omitted: int
    def __init__(self, ref: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., result_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., object_revision: _Optional[_Union[_common_pb2.Revision, _Mapping]] = ..., time: _Optional[_Union[_common_pb2.TimeFacts, _Mapping]] = ..., content: _Optional[_Union[ContentFragment, _Mapping]] = ..., sources: _Optional[_Iterable[_Union[SourceEntry, _Mapping]]] = ..., label: _Optional[str] = ..., kind: _Optional[str] = ..., sources_omitted: _Optional[int] = ...) -> None: ...

class ContextCollection(_message.Message):
    __slots__ = ("name", "items", "page")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    name: str
    items: _containers.RepeatedCompositeFieldContainer[ContextItem]
    page: _common_pb2.PageInfo
    def __init__(self, name: _Optional[str] = ..., items: _Optional[_Iterable[_Union[ContextItem, _Mapping]]] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ...) -> None: ...

class GetContextRequest(_message.Message):
    __slots__ = ("object_ref", "scope", "mode", "time_range", "time_basis", "page_size", "cursor", "content_page_size", "options", "result_id")
    OBJECT_REF_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    TIME_BASIS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    CONTENT_PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    object_ref: _common_pb2.ObjectRef
    scope: _common_pb2.Scope
    mode: ContextMode
    time_range: _common_pb2.TimeRange
    time_basis: _common_pb2.TimeBasis
    page_size: int
    cursor: str
    content_page_size: int
    options: ReadOptions
    result_id: str
    def __init__(self, object_ref: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., mode: _Optional[_Union[ContextMode, str]] = ..., time_range: _Optional[_Union[_common_pb2.TimeRange, _Mapping]] = ..., time_basis: _Optional[_Union[_common_pb2.TimeBasis, str]] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., content_page_size: _Optional[int] = ..., options: _Optional[_Union[ReadOptions, _Mapping]] = ..., result_id: _Optional[str] = ...) -> None: ...

class GetContextResponse(_message.Message):
    __slots__ = ("object_ref", "mode", "collections", "evidence_note", "coverage", "basis", "history_gaps", "object_scope", "linked_leaves")
    OBJECT_REF_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_NOTE_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_GAPS_FIELD_NUMBER: _ClassVar[int]
    OBJECT_SCOPE_FIELD_NUMBER: _ClassVar[int]
    LINKED_LEAVES_FIELD_NUMBER: _ClassVar[int]
    object_ref: _common_pb2.ObjectRef
    mode: ContextMode
    collections: _containers.RepeatedCompositeFieldContainer[ContextCollection]
    evidence_note: str
    coverage: Coverage
    basis: ResponseBasis
    history_gaps: _containers.RepeatedScalarFieldContainer[str]
    object_scope: _common_pb2.Scope
    linked_leaves: _containers.RepeatedCompositeFieldContainer[_leaves_pb2.LinkedLeafHit]
    def __init__(self, object_ref: _Optional[_Union[_common_pb2.ObjectRef, _Mapping]] = ..., mode: _Optional[_Union[ContextMode, str]] = ..., collections: _Optional[_Iterable[_Union[ContextCollection, _Mapping]]] = ..., evidence_note: _Optional[str] = ..., coverage: _Optional[_Union[Coverage, _Mapping]] = ..., basis: _Optional[_Union[ResponseBasis, _Mapping]] = ..., history_gaps: _Optional[_Iterable[str]] = ..., object_scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., linked_leaves: _Optional[_Iterable[_Union[_leaves_pb2.LinkedLeafHit, _Mapping]]] = ...) -> None: ...

class ReadSourceRequest(_message.Message):
    __slots__ = ("source_reference_id", "scope", "read_kind", "source_version", "offset", "page_size", "cursor", "options")
    SOURCE_REFERENCE_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    READ_KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_VERSION_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    source_reference_id: str
    scope: _common_pb2.Scope
    read_kind: ReadKind
    source_version: str
    offset: int
    page_size: int
    cursor: str
    options: ReadOptions
    def __init__(self, source_reference_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.Scope, _Mapping]] = ..., read_kind: _Optional[_Union[ReadKind, str]] = ..., source_version: _Optional[str] = ..., offset: _Optional[int] = ..., page_size: _Optional[int] = ..., cursor: _Optional[str] = ..., options: _Optional[_Union[ReadOptions, _Mapping]] = ...) -> None: ...

class ReadSourceResponse(_message.Message):
    __slots__ = ("text", "content_kind", "requested_version", "returned_version", "location", "source_type", "source_id", "start", "end", "content_length", "fragment_start", "fragment_end", "source_length", "availability", "available_read_kinds", "differs_from_reference", "page", "coverage", "basis", "time_metadata")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_KIND_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    RETURNED_VERSION_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_START_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_END_FIELD_NUMBER: _ClassVar[int]
    SOURCE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    AVAILABILITY_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_READ_KINDS_FIELD_NUMBER: _ClassVar[int]
    DIFFERS_FROM_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    TIME_METADATA_FIELD_NUMBER: _ClassVar[int]
    text: str
    content_kind: str
    requested_version: str
    returned_version: str
    location: _common_pb2.SourceLocator
    source_type: str
    source_id: str
    start: int
    end: int
    content_length: int
    fragment_start: int
    fragment_end: int
    source_length: _common_pb2.Count
    availability: SourceAvailability
    available_read_kinds: _containers.RepeatedScalarFieldContainer[ReadKind]
    differs_from_reference: bool
    page: _common_pb2.PageInfo
    coverage: Coverage
    basis: ResponseBasis
    time_metadata: SourceTimes
    def __init__(self, text: _Optional[str] = ..., content_kind: _Optional[str] = ..., requested_version: _Optional[str] = ..., returned_version: _Optional[str] = ..., location: _Optional[_Union[_common_pb2.SourceLocator, _Mapping]] = ..., source_type: _Optional[str] = ..., source_id: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., content_length: _Optional[int] = ..., fragment_start: _Optional[int] = ..., fragment_end: _Optional[int] = ..., source_length: _Optional[_Union[_common_pb2.Count, _Mapping]] = ..., availability: _Optional[_Union[SourceAvailability, str]] = ..., available_read_kinds: _Optional[_Iterable[_Union[ReadKind, str]]] = ..., differs_from_reference: _Optional[bool] = ..., page: _Optional[_Union[_common_pb2.PageInfo, _Mapping]] = ..., coverage: _Optional[_Union[Coverage, _Mapping]] = ..., basis: _Optional[_Union[ResponseBasis, _Mapping]] = ..., time_metadata: _Optional[_Union[SourceTimes, _Mapping]] = ...) -> None: ...

class SourceTime(_message.Message):
    __slots__ = ("at", "unknown", "basis")
    AT_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    at: str
    unknown: _common_pb2.Unknown
    basis: str
    def __init__(self, at: _Optional[str] = ..., unknown: _Optional[_Union[_common_pb2.Unknown, _Mapping]] = ..., basis: _Optional[str] = ...) -> None: ...

class SourceTimes(_message.Message):
    __slots__ = ("created", "updated", "captured")
    CREATED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    CAPTURED_FIELD_NUMBER: _ClassVar[int]
    created: SourceTime
    updated: SourceTime
    captured: SourceTime
    def __init__(self, created: _Optional[_Union[SourceTime, _Mapping]] = ..., updated: _Optional[_Union[SourceTime, _Mapping]] = ..., captured: _Optional[_Union[SourceTime, _Mapping]] = ...) -> None: ...

class ResolveBindingRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class ResolveBindingResponse(_message.Message):
    __slots__ = ("binding_id", "session_id", "runtime", "project_id", "enabled", "disabled_reason", "allowed_scopes")
    BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    DISABLED_REASON_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_SCOPES_FIELD_NUMBER: _ClassVar[int]
    binding_id: str
    session_id: str
    runtime: str
    project_id: str
    enabled: bool
    disabled_reason: str
    allowed_scopes: _containers.RepeatedCompositeFieldContainer[_common_pb2.Scope]
    def __init__(self, binding_id: _Optional[str] = ..., session_id: _Optional[str] = ..., runtime: _Optional[str] = ..., project_id: _Optional[str] = ..., enabled: _Optional[bool] = ..., disabled_reason: _Optional[str] = ..., allowed_scopes: _Optional[_Iterable[_Union[_common_pb2.Scope, _Mapping]]] = ...) -> None: ...
