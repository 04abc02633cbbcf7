from mirrortree.v1 import common_pb2 as _common_pb2
from mirrortree.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EstimatedOperation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ESTIMATED_OPERATION_UNSPECIFIED: _ClassVar[EstimatedOperation]
    REGENERATE: _ClassVar[EstimatedOperation]
    CONTINUE: _ClassVar[EstimatedOperation]
    COMPARE_CANDIDATES: _ClassVar[EstimatedOperation]
    START_TASK: _ClassVar[EstimatedOperation]

class ChargeState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHARGE_STATE_UNSPECIFIED: _ClassVar[ChargeState]
    NOT_CHARGED: _ClassVar[ChargeState]
    RESERVED: _ClassVar[ChargeState]
    SETTLED: _ClassVar[ChargeState]
ESTIMATED_OPERATION_UNSPECIFIED: EstimatedOperation
REGENERATE: EstimatedOperation
CONTINUE: EstimatedOperation
COMPARE_CANDIDATES: EstimatedOperation
START_TASK: EstimatedOperation
CHARGE_STATE_UNSPECIFIED: ChargeState
NOT_CHARGED: ChargeState
RESERVED: ChargeState
SETTLED: ChargeState

class Pricing(_message.Message):
    __slots__ = ("currency", "input_price_per_million", "output_price_per_million", "per_run_fee")
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    INPUT_PRICE_PER_MILLION_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PRICE_PER_MILLION_FIELD_NUMBER: _ClassVar[int]
    PER_RUN_FEE_FIELD_NUMBER: _ClassVar[int]
    currency: str
    input_price_per_million: str
    output_price_per_million: str
    per_run_fee: str
    def __init__(self, currency: _Optional[str] = ..., input_price_per_million: _Optional[str] = ..., output_price_per_million: _Optional[str] = ..., per_run_fee: _Optional[str] = ...) -> None: ...

class ExpectedResources(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "parallelism")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    parallelism: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., parallelism: _Optional[int] = ...) -> None: ...

class Estimate(_message.Message):
    __slots__ = ("id", "tree_id", "owner", "operation", "target_id", "model_strategy", "resources", "pricing", "cost", "currency", "requested_by", "created_at", "charge_state", "reserved", "actual_cost", "over_quota", "approval", "node_ids", "approval_needed_because", "charged_at", "settled_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    PRICING_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CHARGE_STATE_FIELD_NUMBER: _ClassVar[int]
    RESERVED_FIELD_NUMBER: _ClassVar[int]
    ACTUAL_COST_FIELD_NUMBER: _ClassVar[int]
    OVER_QUOTA_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_NEEDED_BECAUSE_FIELD_NUMBER: _ClassVar[int]
    CHARGED_AT_FIELD_NUMBER: _ClassVar[int]
    SETTLED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tree_id: str
    owner: str
    operation: EstimatedOperation
    target_id: str
    model_strategy: str
    resources: ExpectedResources
    pricing: Pricing
    cost: str
    currency: str
    requested_by: str
    created_at: str
    charge_state: ChargeState
    reserved: str
    actual_cost: str
    over_quota: bool
    approval: Approval
    node_ids: _containers.RepeatedScalarFieldContainer[str]
    approval_needed_because: _containers.RepeatedScalarFieldContainer[str]
    charged_at: str
    settled_at: str
    def __init__(self, id: _Optional[str] = ..., tree_id: _Optional[str] = ..., owner: _Optional[str] = ..., operation: _Optional[_Union[EstimatedOperation, str]] = ..., target_id: _Optional[str] = ..., model_strategy: _Optional[str] = ..., resources: _Optional[_Union[ExpectedResources, _Mapping]] = ..., pricing: _Optional[_Union[Pricing, _Mapping]] = ..., cost: _Optional[str] = ..., currency: _Optional[str] = ..., requested_by: _Optional[str] = ..., created_at: _Optional[str] = ..., charge_state: _Optional[_Union[ChargeState, str]] = ..., reserved: _Optional[str] = ..., actual_cost: _Optional[str] = ..., over_quota: _Optional[bool] = ..., approval: _Optional[_Union[Approval, _Mapping]] = ..., node_ids: _Optional[_Iterable[str]] = ..., approval_needed_because: _Optional[_Iterable[str]] = ..., charged_at: _Optional[str] = ..., settled_at: _Optional[str] = ...) -> None: ...

class Approval(_message.Message):
    __slots__ = ("approved_by", "reason", "approved_at")
    APPROVED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    APPROVED_AT_FIELD_NUMBER: _ClassVar[int]
    approved_by: str
    reason: str
    approved_at: str
    def __init__(self, approved_by: _Optional[str] = ..., reason: _Optional[str] = ..., approved_at: _Optional[str] = ...) -> None: ...

class Quota(_message.Message):
    __slots__ = ("owner", "currency", "limit", "reserved", "spent", "remaining", "parallel_approval_cost", "revision", "updated_at")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    RESERVED_FIELD_NUMBER: _ClassVar[int]
    SPENT_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    PARALLEL_APPROVAL_COST_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    owner: str
    currency: str
    limit: str
    reserved: str
    spent: str
    remaining: str
    parallel_approval_cost: str
    revision: int
    updated_at: str
    def __init__(self, owner: _Optional[str] = ..., currency: _Optional[str] = ..., limit: _Optional[str] = ..., reserved: _Optional[str] = ..., spent: _Optional[str] = ..., remaining: _Optional[str] = ..., parallel_approval_cost: _Optional[str] = ..., revision: _Optional[int] = ..., updated_at: _Optional[str] = ...) -> None: ...

class Comparison(_message.Message):
    __slots__ = ("answer_ids", "criteria", "verdict", "preferred_answer_id")
    ANSWER_IDS_FIELD_NUMBER: _ClassVar[int]
    CRITERIA_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    answer_ids: _containers.RepeatedScalarFieldContainer[str]
    criteria: _containers.RepeatedScalarFieldContainer[str]
    verdict: str
    preferred_answer_id: str
    def __init__(self, answer_ids: _Optional[_Iterable[str]] = ..., criteria: _Optional[_Iterable[str]] = ..., verdict: _Optional[str] = ..., preferred_answer_id: _Optional[str] = ...) -> None: ...

class EstimateRequestRequest(_message.Message):
    __slots__ = ("idempotency_key", "tree_id", "operation", "target_id", "model_strategy", "resources", "pricing", "requested_by")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TREE_ID_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    RESOURCES_FIELD_NUMBER: _ClassVar[int]
    PRICING_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    tree_id: str
    operation: EstimatedOperation
    target_id: str
    model_strategy: str
    resources: ExpectedResources
    pricing: Pricing
    requested_by: str
    def __init__(self, idempotency_key: _Optional[str] = ..., tree_id: _Optional[str] = ..., operation: _Optional[_Union[EstimatedOperation, str]] = ..., target_id: _Optional[str] = ..., model_strategy: _Optional[str] = ..., resources: _Optional[_Union[ExpectedResources, _Mapping]] = ..., pricing: _Optional[_Union[Pricing, _Mapping]] = ..., requested_by: _Optional[str] = ...) -> None: ...

class EstimateRequestResponse(_message.Message):
    __slots__ = ("estimate", "consistency")
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    estimate: Estimate
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, estimate: _Optional[_Union[Estimate, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetEstimateRequest(_message.Message):
    __slots__ = ("estimate_id",)
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    estimate_id: str
    def __init__(self, estimate_id: _Optional[str] = ...) -> None: ...

class GetEstimateResponse(_message.Message):
    __slots__ = ("estimate",)
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    estimate: Estimate
    def __init__(self, estimate: _Optional[_Union[Estimate, _Mapping]] = ...) -> None: ...

class ApproveEstimateRequest(_message.Message):
    __slots__ = ("idempotency_key", "estimate_id", "approved_by", "reason")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    APPROVED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    estimate_id: str
    approved_by: str
    reason: str
    def __init__(self, idempotency_key: _Optional[str] = ..., estimate_id: _Optional[str] = ..., approved_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ApproveEstimateResponse(_message.Message):
    __slots__ = ("estimate", "consistency")
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    estimate: Estimate
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, estimate: _Optional[_Union[Estimate, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class ChargeEstimateRequest(_message.Message):
    __slots__ = ("idempotency_key", "estimate_id")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    estimate_id: str
    def __init__(self, idempotency_key: _Optional[str] = ..., estimate_id: _Optional[str] = ...) -> None: ...

class ChargeEstimateResponse(_message.Message):
    __slots__ = ("estimate", "quota", "consistency")
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    QUOTA_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    estimate: Estimate
    quota: Quota
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, estimate: _Optional[_Union[Estimate, _Mapping]] = ..., quota: _Optional[_Union[Quota, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class SettleChargeRequest(_message.Message):
    __slots__ = ("idempotency_key", "estimate_id", "actual_cost", "actual_input_tokens", "actual_output_tokens")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    ACTUAL_COST_FIELD_NUMBER: _ClassVar[int]
    ACTUAL_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ACTUAL_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    estimate_id: str
    actual_cost: str
    actual_input_tokens: int
    actual_output_tokens: int
    def __init__(self, idempotency_key: _Optional[str] = ..., estimate_id: _Optional[str] = ..., actual_cost: _Optional[str] = ..., actual_input_tokens: _Optional[int] = ..., actual_output_tokens: _Optional[int] = ...) -> None: ...

class SettleChargeResponse(_message.Message):
    __slots__ = ("estimate", "quota", "consistency")
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    QUOTA_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    estimate: Estimate
    quota: Quota
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, estimate: _Optional[_Union[Estimate, _Mapping]] = ..., quota: _Optional[_Union[Quota, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class SetQuotaRequest(_message.Message):
    __slots__ = ("idempotency_key", "owner", "currency", "limit", "parallel_approval_cost", "expected_revision")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PARALLEL_APPROVAL_COST_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    owner: str
    currency: str
    limit: str
    parallel_approval_cost: str
    expected_revision: int
    def __init__(self, idempotency_key: _Optional[str] = ..., owner: _Optional[str] = ..., currency: _Optional[str] = ..., limit: _Optional[str] = ..., parallel_approval_cost: _Optional[str] = ..., expected_revision: _Optional[int] = ...) -> None: ...

class SetQuotaResponse(_message.Message):
    __slots__ = ("quota", "consistency")
    QUOTA_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    quota: Quota
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, quota: _Optional[_Union[Quota, _Mapping]] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...

class GetQuotaRequest(_message.Message):
    __slots__ = ("owner",)
    OWNER_FIELD_NUMBER: _ClassVar[int]
    owner: str
    def __init__(self, owner: _Optional[str] = ...) -> None: ...

class GetQuotaResponse(_message.Message):
    __slots__ = ("quota",)
    QUOTA_FIELD_NUMBER: _ClassVar[int]
    quota: Quota
    def __init__(self, quota: _Optional[_Union[Quota, _Mapping]] = ...) -> None: ...

class CompareCandidatesRequest(_message.Message):
    __slots__ = ("idempotency_key", "question_id", "answer_ids", "criteria", "verdict", "preferred_answer_id", "conditions", "estimate_id")
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_IDS_FIELD_NUMBER: _ClassVar[int]
    CRITERIA_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_ID_FIELD_NUMBER: _ClassVar[int]
    idempotency_key: str
    question_id: str
    answer_ids: _containers.RepeatedScalarFieldContainer[str]
    criteria: _containers.RepeatedScalarFieldContainer[str]
    verdict: str
    preferred_answer_id: str
    conditions: RunConditionsRecord
    estimate_id: str
    def __init__(self, idempotency_key: _Optional[str] = ..., question_id: _Optional[str] = ..., answer_ids: _Optional[_Iterable[str]] = ..., criteria: _Optional[_Iterable[str]] = ..., verdict: _Optional[str] = ..., preferred_answer_id: _Optional[str] = ..., conditions: _Optional[_Union[RunConditionsRecord, _Mapping]] = ..., estimate_id: _Optional[str] = ...) -> None: ...

class RunConditionsRecord(_message.Message):
    __slots__ = ("model_strategy", "parameters")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MODEL_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    model_strategy: str
    parameters: _containers.ScalarMap[str, str]
    def __init__(self, model_strategy: _Optional[str] = ..., parameters: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CompareCandidatesResponse(_message.Message):
    __slots__ = ("node_id", "comparison", "tree_revision", "consistency")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    COMPARISON_FIELD_NUMBER: _ClassVar[int]
    TREE_REVISION_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    comparison: Comparison
    tree_revision: int
    consistency: _common_pb2.ConsistencyToken
    def __init__(self, node_id: _Optional[str] = ..., comparison: _Optional[_Union[Comparison, _Mapping]] = ..., tree_revision: _Optional[int] = ..., consistency: _Optional[_Union[_common_pb2.ConsistencyToken, _Mapping]] = ...) -> None: ...
