from mirrortree.v1 import common_pb2 as _common_pb2
from mirrortree.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATE_UNSPECIFIED: _ClassVar[TaskState]
    TASK_QUEUED: _ClassVar[TaskState]
    TASK_RUNNING: _ClassVar[TaskState]
    TASK_NEEDS_INSTRUCTIONS: _ClassVar[TaskState]
    TASK_COMPLETED: _ClassVar[TaskState]
    TASK_CANCELLED: _ClassVar[TaskState]

class TaskStopReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STOP_REASON_UNSPECIFIED: _ClassVar[TaskStopReason]
    TASK_TOKEN_BUDGET: _ClassVar[TaskStopReason]
    TASK_COST_BUDGET: _ClassVar[TaskStopReason]
    TASK_DEADLINE: _ClassVar[TaskStopReason]
    TASK_CONSECUTIVE_FAILURES: _ClassVar[TaskStopReason]
    TASK_SAFETY_STOP: _ClassVar[TaskStopReason]

class TaskReportKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_REPORT_KIND_UNSPECIFIED: _ClassVar[TaskReportKind]
    REPORT_PROGRESS: _ClassVar[TaskReportKind]
    REPORT_STEP_FAILED: _ClassVar[TaskReportKind]
    REPORT_ATTEMPT_FAILED: _ClassVar[TaskReportKind]
    REPORT_LEASE_EXPIRED: _ClassVar[TaskReportKind]
    REPORT_STOPPED: _ClassVar[TaskReportKind]
    REPORT_RESULT: _ClassVar[TaskReportKind]
    REPORT_INSTRUCTIONS: _ClassVar[TaskReportKind]
    REPORT_CANCELLATION: _ClassVar[TaskReportKind]

class TaskInstruction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_INSTRUCTION_UNSPECIFIED: _ClassVar[TaskInstruction]
    TASK_RESUME: _ClassVar[TaskInstruction]
    TASK_CANCEL: _ClassVar[TaskInstruction]
TASK_STATE_UNSPECIFIED: TaskState
TASK_QUEUED: TaskState
TASK_RUNNING: TaskState
TASK_NEEDS_INSTRUCTIONS: TaskState
TASK_COMPLETED: TaskState
TASK_CANCELLED: TaskState
TASK_STOP_REASON_UNSPECIFIED: TaskStopReason
TASK_TOKEN_BUDGET: TaskStopReason
TASK_COST_BUDGET: TaskStopReason
TASK_DEADLINE: TaskStopReason
TASK_CONSECUTIVE_FAILURES: TaskStopReason
TASK_SAFETY_STOP: TaskStopReason
TASK_REPORT_KIND_UNSPECIFIED: TaskReportKind
REPORT_PROGRESS: TaskReportKind
REPORT_STEP_FAILED: TaskReportKind
REPORT_ATTEMPT_FAILED: TaskReportKind
REPORT_LEASE_EXPIRED: TaskReportKind
REPORT_STOPPED: TaskReportKind
REPORT_RESULT: TaskReportKind
REPORT_INSTRUCTIONS: TaskReportKind
REPORT_CANCELLATION: TaskReportKind
TASK_INSTRUCTION_UNSPECIFIED: TaskInstruction
TASK_RESUME: TaskInstruction
TASK_CANCEL: TaskInstruction

class TaskBudget(_message.Message):
    __slots__ = ("tokens", "cost_micros", "currency")
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_MICROS_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    tokens: int
    cost_micros: int
    currency: str
    def __init__(self, tokens: _Optional[int] = ..., cost_micros: _Optional[int] = ..., currency: _Optional[str] = ...) -> None: ...

class TaskSpend(_message.Message):
    __slots__ = ("tokens", "cost_micros")
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_MICROS_FIELD_NUMBER: _ClassVar[int]
    tokens: int
    cost_micros: int
    def __init__(self, tokens: _Optional[int] = ..., cost_micros: _Optional[int] = ...) -> None: ...

class TaskLease(_message.Message):
    __slots__ = ("token", "worker_id", "expires_at", "lease_seconds")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    LEASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    token: str
    worker_id: str
    expires_at: str
    lease_seconds: int
    def __init__(self, token: _Optional[str] = ..., worker_id: _Optional[str] = ..., expires_at: _Optional[str] = ..., lease_seconds: _Optional[int] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("id", "tree_id", "branch_node_id", "goal", "budget", "deadline", "capability_scope", "data_scope", "stop_conditions", "max_consecutive_failures", "state", "stop_reason", "spent", "consecutive_failures", "attempts", "lease", "observation_id", "accepted_answer_id", "started_by", "revision", "created_at", "updated_at", "position", "estimate_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_SCOPE_FIELD_NUMBER: _ClassVar[int]
    DATA_SCOPE_FIELD_NUMBER: _ClassVar[int]
    STOP_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    SPENT_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_ID_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_BY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    branch_node_id: str
    goal: str
    budget: TaskBudget
    deadline: str
    capability_scope: _containers.RepeatedScalarFieldContainer[str]
    data_scope: _containers.RepeatedScalarFieldContainer[str]
    stop_conditions: _containers.RepeatedScalarFieldContainer[str]
    max_consecutive_failures: int
    state: TaskState
    stop_reason: TaskStopReason
    spent: TaskSpend
    consecutive_failures: int
    attempts: int
    lease: TaskLease
    observation_id: str
    accepted_answer_id: str
    started_by: str
    revision: int
    created_at: str
    updated_at: str
    position: int
    estimate_id: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., branch_node_id: _Optional[str] = ..., goal: _Optional[str] = ..., budget: _Optional[_Union[TaskBudget, _Mapping]] = ..., deadline: _Optional[str] = ..., capability_scope: _Optional[_Iterable[str]] = ..., data_scope: _Optional[_Iterable[str]] = ..., stop_conditions: _Optional[_Iterable[str]] = ..., max_consecutive_failures: _Optional[int] = ..., state: _Optional[_Union[TaskState, str]] = ..., stop_reason: _Optional[_Union[TaskStopReason, str]] = ..., spent: _Optional[_Union[TaskSpend, _Mapping]] = ..., consecutive_failures: _Optional[int] = ..., attempts: _Optional[int] = ..., lease: _Optional[_Union[TaskLease, _Mapping]] = ..., observation_id: _Optional[str] = ..., accepted_answer_id: _Optional[str] = ..., started_by: _Optional[str] = ..., revision: _Optional[int] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ..., position: _Optional[int] = ..., estimate_id: _Optional[str] = ...) -> None: ...

class TaskReport(_message.Message):
    __slots__ = ("seq", "attempt", "kind", "message", "evidence", "spend", "reported_by", "created_at")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    SPEND_FIELD_NUMBER: _ClassVar[int]
    REPORTED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    seq: int
    attempt: int
    kind: TaskReportKind
    message: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    spend: TaskSpend
    reported_by: str
    created_at: str
    def __init__(self, seq: _Optional[int] = ..., attempt: _Optional[int] = ..., kind: _Optional[_Union[TaskReportKind, str]] = ..., message: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., spend: _Optional[_Union[TaskSpend, _Mapping]] = ..., reported_by: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class StartTaskRequest(_message.Message):
    __slots__ = ("idempotency_key", "branch_node_id", "goal", "budget", "deadline", "capability_scope", "data_scope", "stop_conditions", "max_consecutive_failures", "started_by", "estimate_id")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_SCOPE_FIELD_NUMBER: _ClassVar[int]
    DATA_SCOPE_FIELD_NUMBER: _ClassVar[int]
    STOP_CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    STARTED_BY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    branch_node_id: str
    goal: str
    budget: TaskBudget
    deadline: str
    capability_scope: _containers.RepeatedScalarFieldContainer[str]
    data_scope: _containers.RepeatedScalarFieldContainer[str]
    stop_conditions: _containers.RepeatedScalarFieldContainer[str]
    max_consecutive_failures: int
    started_by: str
    estimate_id: str
    def __init__(self, idempotency_key: _Optional[str] = ..., branch_node_id: _Optional[str] = ..., goal: _Optional[str] = ..., budget: _Optional[_Union[TaskBudget, _Mapping]] = ..., deadline: _Optional[str] = ..., capability_scope: _Optional[_Iterable[str]] = ..., data_scope: _Optional[_Iterable[str]] = ..., stop_conditions: _Optional[_Iterable[str]] = ..., max_consecutive_failures: _Optional[int] = ..., started_by: _Optional[str] = ..., estimate_id: _Optional[str] = ...) -> None: ...

class TaskResponse(_message.Message):
    __slots__ = ("task", "consistency")
    TASK_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    task: Task
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ClaimTaskRequest(_message.Message):
    __slots__ = ("idempotency_key", "worker_id", "capabilities", "tree_id", "branch_node_id", "lease_seconds")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    worker_id: str
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    tree_id: str
    branch_node_id: str
    lease_seconds: int
    def __init__(self, idempotency_key: _Optional[str] = ..., worker_id: _Optional[str] = ..., capabilities: _Optional[_Iterable[str]] = ..., tree_id: _Optional[str] = ..., branch_node_id: _Optional[str] = ..., lease_seconds: _Optional[int] = ...) -> None: ...

class ClaimTaskResponse(_message.Message):
    __slots__ = ("task", "lease_token", "remaining", "consistency")
    TASK_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    task: Task
    lease_token: str
    remaining: TaskSpend
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., lease_token: _Optional[str] = ..., remaining: _Optional[_Union[TaskSpend, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class HeartbeatTaskRequest(_message.Message):
    __slots__ = ("idempotency_key", "task_id", "lease_token")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    task_id: str
    lease_token: str
    def __init__(self, idempotency_key: _Optional[str] = ..., task_id: _Optional[str] = ..., lease_token: _Optional[str] = ...) -> None: ...

class ReportTaskProgressRequest(_message.Message):
    __slots__ = ("idempotency_key", "task_id", "lease_token", "step_failed", "message", "evidence", "spend")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STEP_FAILED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    SPEND_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    task_id: str
    lease_token: str
    step_failed: bool
    message: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    spend: TaskSpend
    def __init__(self, idempotency_key: _Optional[str] = ..., task_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., step_failed: _Optional[bool] = ..., message: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., spend: _Optional[_Union[TaskSpend, _Mapping]] = ...) -> None: ...

class TaskWorkResponse(_message.Message):
    __slots__ = ("task", "keep_working", "remaining", "consistency")
    TASK_FIELD_NUMBER: _ClassVar[int]
    KEEP_WORKING_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    task: Task
    keep_working: bool
    remaining: TaskSpend
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., keep_working: _Optional[bool] = ..., remaining: _Optional[_Union[TaskSpend, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class CompleteTaskRequest(_message.Message):
    __slots__ = ("idempotency_key", "task_id", "lease_token", "result", "summary", "evidence", "spend")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    SPEND_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    task_id: str
    lease_token: str
    result: str
    summary: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    spend: TaskSpend
    def __init__(self, idempotency_key: _Optional[str] = ..., task_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., result: _Optional[str] = ..., summary: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., spend: _Optional[_Union[TaskSpend, _Mapping]] = ...) -> None: ...

class FailTaskRequest(_message.Message):
    __slots__ = ("idempotency_key", "task_id", "lease_token", "message", "evidence", "spend")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    SPEND_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    task_id: str
    lease_token: str
    message: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    spend: TaskSpend
    def __init__(self, idempotency_key: _Optional[str] = ..., task_id: _Optional[str] = ..., lease_token: _Optional[str] = ..., message: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., spend: _Optional[_Union[TaskSpend, _Mapping]] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("task_id", "include_reports")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REPORTS_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    include_reports: bool
    def __init__(self, task_id: _Optional[str] = ..., include_reports: _Optional[bool] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task", "reports")
    TASK_FIELD_NUMBER: _ClassVar[int]
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    task: Task
    reports: _containers.RepeatedCompositeFieldContainer[TaskReport]
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., reports: _Optional[_Iterable[_Union[TaskReport, _Mapping]]] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("tree_id", "branch_node_id", "states", "page_size", "page_token")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    branch_node_id: str
    states: _containers.RepeatedScalarFieldContainer[TaskState]
    page_size: int
    page_token: str
    def __init__(self, tree_id: _Optional[str] = ..., branch_node_id: _Optional[str] = ..., states: _Optional[_Iterable[_Union[TaskState, str]]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "next_page_token")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[Task]
    next_page_token: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[Task, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class InstructTaskRequest(_message.Message):
    __slots__ = ("idempotency_key", "task_id", "expected_revision", "instruction", "budget", "deadline", "instructed_by", "note")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTED_BY_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    task_id: str
    expected_revision: int
    instruction: TaskInstruction
    budget: TaskBudget
    deadline: str
    instructed_by: str
    note: str
    def __init__(self, idempotency_key: _Optional[str] = ..., task_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., instruction: _Optional[_Union[TaskInstruction, str]] = ..., budget: _Optional[_Union[TaskBudget, _Mapping]] = ..., deadline: _Optional[str] = ..., instructed_by: _Optional[str] = ..., note: _Optional[str] = ...) -> None: ...

class AcceptObservationRequest(_message.Message):
    __slots__ = ("idempotency_key", "task_id", "accepted_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    task_id: str
    accepted_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., task_id: _Optional[str] = ..., accepted_by: _Optional[str] = ...) -> None: ...

class AcceptObservationResponse(_message.Message):
    __slots__ = ("task", "answer_id", "tree_revision", "consistency")
    TASK_FIELD_NUMBER: _ClassVar[int]
    ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    task: Task
    answer_id: str
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, task: _Optional[_Union[Task, _Mapping]] = ..., answer_id: _Optional[str] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class WatchTreeRequest(_message.Message):
    __slots__ = ("tree_id", "after_position", "heartbeat_seconds")
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_POSITION_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    tree_id: str
    after_position: int
    heartbeat_seconds: int
    def __init__(self, tree_id: _Optional[str] = ..., after_position: _Optional[int] = ..., heartbeat_seconds: _Optional[int] = ...) -> None: ...

class TreeEvent(_message.Message):
    __slots__ = ("position", "kind", "subject_id", "detail_json", "created_at")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_JSON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    position: int
    kind: str
    subject_id: str
    detail_json: str
    created_at: str
    def __init__(self, position: _Optional[int] = ..., kind: _Optional[str] = ..., subject_id: _Optional[str] = ..., detail_json: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...

class WatchHeartbeat(_message.Message):
    __slots__ = ("position", "caught_up")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    position: int
    caught_up: bool
    def __init__(self, position: _Optional[int] = ..., caught_up: _Optional[bool] = ...) -> None: ...

class WatchTreeResponse(_message.Message):
    __slots__ = ("event", "heartbeat")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    event: TreeEvent
    heartbeat: WatchHeartbeat
    def __init__(self, event: _Optional[_Union[TreeEvent, _Mapping]] = ..., heartbeat: _Optional[_Union[WatchHeartbeat, _Mapping]] = ...) -> None: ...
