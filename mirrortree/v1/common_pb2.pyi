from mirrortree.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    INVALID_ARGUMENT_REASON: _ClassVar[ErrorReason]
    NOT_FOUND_REASON: _ClassVar[ErrorReason]
    SCOPE_REQUIRED: _ClassVar[ErrorReason]
    SCOPE_MISMATCH: _ClassVar[ErrorReason]
    STALE_CURSOR: _ClassVar[ErrorReason]
    INVALID_CURSOR: _ClassVar[ErrorReason]
    AS_OF_UNSUPPORTED: _ClassVar[ErrorReason]
    HISTORICAL_VERSION_UNAVAILABLE: _ClassVar[ErrorReason]
    RESPONSE_TOO_LARGE: _ClassVar[ErrorReason]
    REVISION_CONFLICT: _ClassVar[ErrorReason]
    IDEMPOTENCY_KEY_REUSED: _ClassVar[ErrorReason]
    CONSISTENCY_TIMEOUT: _ClassVar[ErrorReason]
    DISABLED: _ClassVar[ErrorReason]
    UNAUTHENTICATED_REASON: _ClassVar[ErrorReason]
    NOT_IMPLEMENTED: _ClassVar[ErrorReason]
    REPLICA_UNAVAILABLE: _ClassVar[ErrorReason]
    SOURCE_UNAVAILABLE: _ClassVar[ErrorReason]
    SEARCH_BUDGET_EXCEEDED: _ClassVar[ErrorReason]
    FAILED_PRECONDITION_REASON: _ClassVar[ErrorReason]
    CONTENTION: _ClassVar[ErrorReason]
    INTERNAL_REASON: _ClassVar[ErrorReason]
    OUTCOME_UNKNOWN: _ClassVar[ErrorReason]
    DATABASE_UNAVAILABLE: _ClassVar[ErrorReason]
    PURGE_PREVIEW_STALE: _ClassVar[ErrorReason]
    REALM_NOT_REAL: _ClassVar[ErrorReason]
    RULING_REQUIRED: _ClassVar[ErrorReason]
    SAFETY_STOP_IN_EFFECT: _ClassVar[ErrorReason]
    CONTEXT_OVER_BUDGET: _ClassVar[ErrorReason]
    NOT_CANONICALIZED: _ClassVar[ErrorReason]
    BRANCH_CLOSED: _ClassVar[ErrorReason]
    LEASE_LOST: _ClassVar[ErrorReason]
    TASK_STOPPED: _ClassVar[ErrorReason]
    PERMISSION_DENIED_REASON: _ClassVar[ErrorReason]
    CONFIRMATION_REQUIRED: _ClassVar[ErrorReason]
    RATE_LIMITED: _ClassVar[ErrorReason]
    OVERLOADED: _ClassVar[ErrorReason]
    QUOTA_EXCEEDED: _ClassVar[ErrorReason]
    APPROVAL_REQUIRED: _ClassVar[ErrorReason]
    ESTIMATE_NOT_APPLICABLE: _ClassVar[ErrorReason]
    ESTIMATE_REQUIRED: _ClassVar[ErrorReason]

class ObjectType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBJECT_TYPE_UNSPECIFIED: _ClassVar[ObjectType]
    STORY_LINE: _ClassVar[ObjectType]
    EVENT: _ClassVar[ObjectType]
    ENTITY: _ClassVar[ObjectType]
    ENTITY_CHANGE: _ClassVar[ObjectType]
    RELATION: _ClassVar[ObjectType]
    SUMMARY: _ClassVar[ObjectType]
    SOURCE_REFERENCE: _ClassVar[ObjectType]
    LEAF_FACT: _ClassVar[ObjectType]
    PREFERENCE: _ClassVar[ObjectType]

class TimeBasis(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIME_BASIS_UNSPECIFIED: _ClassVar[TimeBasis]
    EVENT_TIME: _ClassVar[TimeBasis]
    REVIEW_GENERATED_AT: _ClassVar[TimeBasis]
    RECORDED_AT: _ClassVar[TimeBasis]

class TimePrecision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIME_PRECISION_UNSPECIFIED: _ClassVar[TimePrecision]
    INSTANT: _ClassVar[TimePrecision]
    MINUTE: _ClassVar[TimePrecision]
    HOUR: _ClassVar[TimePrecision]
    DAY: _ClassVar[TimePrecision]
    MONTH: _ClassVar[TimePrecision]
    YEAR: _ClassVar[TimePrecision]

class ValidityState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VALIDITY_STATE_UNSPECIFIED: _ClassVar[ValidityState]
    VALIDITY_UNKNOWN: _ClassVar[ValidityState]
    VALIDITY_CURRENT: _ClassVar[ValidityState]
    VALIDITY_SUPERSEDED: _ClassVar[ValidityState]
    VALIDITY_DISPUTED: _ClassVar[ValidityState]

class ConfirmationState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONFIRMATION_STATE_UNSPECIFIED: _ClassVar[ConfirmationState]
    AUTO_GENERATED: _ClassVar[ConfirmationState]
    CONFIRMED: _ClassVar[ConfirmationState]
    USER_REVISED: _ClassVar[ConfirmationState]
    RETRACTED: _ClassVar[ConfirmationState]

class CoverageBasis(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COVERAGE_BASIS_UNSPECIFIED: _ClassVar[CoverageBasis]
    COVERAGE_INTERVAL: _ClassVar[CoverageBasis]
    COVERAGE_COUNTS: _ClassVar[CoverageBasis]
    COVERAGE_UNKNOWN: _ClassVar[CoverageBasis]
ERROR_REASON_UNSPECIFIED: ErrorReason
INVALID_ARGUMENT_REASON: ErrorReason
NOT_FOUND_REASON: ErrorReason
SCOPE_REQUIRED: ErrorReason
SCOPE_MISMATCH: ErrorReason
STALE_CURSOR: ErrorReason
INVALID_CURSOR: ErrorReason
AS_OF_UNSUPPORTED: ErrorReason
HISTORICAL_VERSION_UNAVAILABLE: ErrorReason
RESPONSE_TOO_LARGE: ErrorReason
REVISION_CONFLICT: ErrorReason
IDEMPOTENCY_KEY_REUSED: ErrorReason
CONSISTENCY_TIMEOUT: ErrorReason
DISABLED: ErrorReason
UNAUTHENTICATED_REASON: ErrorReason
NOT_IMPLEMENTED: ErrorReason
REPLICA_UNAVAILABLE: ErrorReason
SOURCE_UNAVAILABLE: ErrorReason
SEARCH_BUDGET_EXCEEDED: ErrorReason
FAILED_PRECONDITION_REASON: ErrorReason
CONTENTION: ErrorReason
INTERNAL_REASON: ErrorReason
OUTCOME_UNKNOWN: ErrorReason
DATABASE_UNAVAILABLE: ErrorReason
PURGE_PREVIEW_STALE: ErrorReason
REALM_NOT_REAL: ErrorReason
RULING_REQUIRED: ErrorReason
SAFETY_STOP_IN_EFFECT: ErrorReason
CONTEXT_OVER_BUDGET: ErrorReason
NOT_CANONICALIZED: ErrorReason
BRANCH_CLOSED: ErrorReason
LEASE_LOST: ErrorReason
TASK_STOPPED: ErrorReason
PERMISSION_DENIED_REASON: ErrorReason
CONFIRMATION_REQUIRED: ErrorReason
RATE_LIMITED: ErrorReason
OVERLOADED: ErrorReason
QUOTA_EXCEEDED: ErrorReason
APPROVAL_REQUIRED: ErrorReason
ESTIMATE_NOT_APPLICABLE: ErrorReason
ESTIMATE_REQUIRED: ErrorReason
OBJECT_TYPE_UNSPECIFIED: ObjectType
STORY_LINE: ObjectType
EVENT: ObjectType
ENTITY: ObjectType
ENTITY_CHANGE: ObjectType
RELATION: ObjectType
SUMMARY: ObjectType
SOURCE_REFERENCE: ObjectType
LEAF_FACT: ObjectType
PREFERENCE: ObjectType
TIME_BASIS_UNSPECIFIED: TimeBasis
EVENT_TIME: TimeBasis
REVIEW_GENERATED_AT: TimeBasis
RECORDED_AT: TimeBasis
TIME_PRECISION_UNSPECIFIED: TimePrecision
INSTANT: TimePrecision
MINUTE: TimePrecision
HOUR: TimePrecision
DAY: TimePrecision
MONTH: TimePrecision
YEAR: TimePrecision
VALIDITY_STATE_UNSPECIFIED: ValidityState
VALIDITY_UNKNOWN: ValidityState
VALIDITY_CURRENT: ValidityState
VALIDITY_SUPERSEDED: ValidityState
VALIDITY_DISPUTED: ValidityState
CONFIRMATION_STATE_UNSPECIFIED: ConfirmationState
AUTO_GENERATED: ConfirmationState
CONFIRMED: ConfirmationState
USER_REVISED: ConfirmationState
RETRACTED: ConfirmationState
COVERAGE_BASIS_UNSPECIFIED: CoverageBasis
COVERAGE_INTERVAL: CoverageBasis
COVERAGE_COUNTS: CoverageBasis
COVERAGE_UNKNOWN: CoverageBasis

class Scope(_message.Message):
    __slots__ = ("projects",)
    GLOBAL_FIELD_NUMBER: _ClassVar[int]
    PROJECTS_FIELD_NUMBER: _ClassVar[int]
    projects: ProjectSet
    def __init__(self, projects: _Optional[_Union[ProjectSet, _Mapping]] = ..., **kwargs) -> None: ...

class ProjectSet(_message.Message):
    __slots__ = ("project_ids",)
    PROJECT_IDS_FIELD_NUMBER: _ClassVar[int]
    project_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, project_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ConsistencyToken(_message.Message):
    __slots__ = ("lsn",)
    LSN_FIELD_NUMBER: _ClassVar[int]
    lsn: str
    def __init__(self, lsn: _Optional[str] = ...) -> None: ...

class Unknown(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class Count(_message.Message):
    __slots__ = ("exact", "unknown")
    EXACT_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    exact: int
    unknown: Unknown
    def __init__(self, exact: _Optional[int] = ..., unknown: _Optional[_Union[Unknown, _Mapping]] = ...) -> None: ...

class Revision(_message.Message):
    __slots__ = ("known", "unknown")
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    known: str
    unknown: Unknown
    def __init__(self, known: _Optional[str] = ..., unknown: _Optional[_Union[Unknown, _Mapping]] = ...) -> None: ...

class ObjectRef(_message.Message):
    __slots__ = ("type", "id")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    type: ObjectType
    id: str
    def __init__(self, type: _Optional[_Union[ObjectType, str]] = ..., id: _Optional[str] = ...) -> None: ...

class TimeRange(_message.Message):
    __slots__ = ("to",)
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    to: str
    def __init__(self, to: _Optional[str] = ..., **kwargs) -> None: ...

class EventTime(_message.Message):
    __slots__ = ("start", "end", "precision", "basis", "known")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    start: str
    end: str
    precision: TimePrecision
    basis: str
    known: bool
    def __init__(self, start: _Optional[str] = ..., end: _Optional[str] = ..., precision: _Optional[_Union[TimePrecision, str]] = ..., basis: _Optional[str] = ..., known: _Optional[bool] = ...) -> None: ...

class Validity(_message.Message):
    __slots__ = ("state", "to", "basis")
    STATE_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    BASIS_FIELD_NUMBER: _ClassVar[int]
    state: ValidityState
    to: str
    basis: str
    def __init__(self, state: _Optional[_Union[ValidityState, str]] = ..., to: _Optional[str] = ..., basis: _Optional[str] = ..., **kwargs) -> None: ...

class TimeFacts(_message.Message):
    __slots__ = ("event_time", "review_generated_at", "recorded_at", "validity", "confirmation_state")
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    REVIEW_GENERATED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_STATE_FIELD_NUMBER: _ClassVar[int]
    event_time: EventTime
    review_generated_at: str
    recorded_at: str
    validity: Validity
    confirmation_state: ConfirmationState
    def __init__(self, event_time: _Optional[_Union[EventTime, _Mapping]] = ..., review_generated_at: _Optional[str] = ..., recorded_at: _Optional[str] = ..., validity: _Optional[_Union[Validity, _Mapping]] = ..., confirmation_state: _Optional[_Union[ConfirmationState, str]] = ...) -> None: ...

class PageInfo(_message.Message):
    __slots__ = ("returned_count", "has_more", "next_cursor", "complete", "limit_reason", "total")
    RETURNED_COUNT_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_REASON_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    returned_count: int
    has_more: bool
    next_cursor: str
    complete: bool
    limit_reason: str
    total: Count
    def __init__(self, returned_count: _Optional[int] = ..., has_more: _Optional[bool] = ..., next_cursor: _Optional[str] = ..., complete: _Optional[bool] = ..., limit_reason: _Optional[str] = ..., total: _Optional[_Union[Count, _Mapping]] = ...) -> None: ...

class SourceLocator(_message.Message):
    __slots__ = ("project_id", "session_id", "message_id", "order", "role", "known", "document_id", "chunk_id", "chunk_start", "chunk_end", "external")
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    CHUNK_START_FIELD_NUMBER: _ClassVar[int]
    CHUNK_END_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_FIELD_NUMBER: _ClassVar[int]
    project_id: str
    session_id: str
    message_id: str
    order: int
    role: str
    known: bool
    document_id: str
    chunk_id: str
    chunk_start: int
    chunk_end: int
    external: str
    def __init__(self, project_id: _Optional[str] = ..., session_id: _Optional[str] = ..., message_id: _Optional[str] = ..., order: _Optional[int] = ..., role: _Optional[str] = ..., known: _Optional[bool] = ..., document_id: _Optional[str] = ..., chunk_id: _Optional[str] = ..., chunk_start: _Optional[int] = ..., chunk_end: _Optional[int] = ..., external: _Optional[str] = ...) -> None: ...

class CoverageCount(_message.Message):
    __slots__ = ("what", "count")
    WHAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    what: str
    count: int
    def __init__(self, what: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...
