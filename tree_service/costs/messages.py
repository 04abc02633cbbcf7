"""Cost requests checked field by field, and estimates, quotas and comparisons as protos."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import costs_pb2
from tree_service.convert import Checker
from tree_service.costs.money import format_money, is_currency, parse_money, remaining
from tree_service.costs.rules import (
    ChargeState,
    Estimate,
    NewEstimate,
    Operation,
    Pricing,
    Quota,
    QuotaChange,
    Settlement,
)

MAX_TOKENS = 1_000_000_000_000
MAX_PARALLELISM = 1_000
MAX_NAME = 200
MAX_STRATEGY = 500
MAX_REASON = 2_000
MONEY_RULE = "must be a plain decimal >= 0 with at most 18 digits before the point and 12 after"

OPERATION_FROM_PROTO = {
    costs_pb2.REGENERATE: Operation.REGENERATE,
    costs_pb2.CONTINUE: Operation.CONTINUE,
    costs_pb2.COMPARE_CANDIDATES: Operation.COMPARE_CANDIDATES,
    costs_pb2.START_TASK: Operation.START_TASK,
}
OPERATION_TO_PROTO = {v: k for k, v in OPERATION_FROM_PROTO.items()}
CHARGE_STATE_TO_PROTO = {
    ChargeState.NOT_CHARGED: costs_pb2.NOT_CHARGED,
    ChargeState.RESERVED: costs_pb2.RESERVED,
    ChargeState.SETTLED: costs_pb2.SETTLED,
}


def money(check: Checker, field: str, text: str, *, required: bool = True) -> Decimal:
    if not text:
        if required:
            check.fail(field, f"is required; it {MONEY_RULE}")
        return Decimal(0)
    amount = parse_money(text)
    if amount is None:
        check.fail(field, f"is {text[:40]!r}; it {MONEY_RULE}")
        return Decimal(0)
    return amount


def currency(check: Checker, field: str, text: str) -> str:
    if not is_currency(text):
        check.fail(field, "must be a currency code of 3 upper-case letters, e.g. USD")
    return text


def tokens(check: Checker, field: str, value: int) -> int:
    if not 0 <= value <= MAX_TOKENS:
        check.fail(field, f"is {value}; it must be 0..{MAX_TOKENS}")
    return value


def new_estimate(request: costs_pb2.EstimateRequestRequest) -> NewEstimate:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    operation = OPERATION_FROM_PROTO.get(request.operation)
    if operation is None:
        check.fail(
            "operation", "is required: REGENERATE, CONTINUE, COMPARE_CANDIDATES or START_TASK"
        )
    check.identifier("target_id", request.target_id)
    check.text("model_strategy", request.model_strategy, MAX_STRATEGY)
    resources = request.resources
    input_tokens = tokens(check, "resources.input_tokens", resources.input_tokens)
    output_tokens = tokens(check, "resources.output_tokens", resources.output_tokens)
    parallelism = resources.parallelism or 1
    if not 1 <= parallelism <= MAX_PARALLELISM:
        check.fail("resources.parallelism", f"is {parallelism}; it must be 1..{MAX_PARALLELISM}")
    prices = request.pricing
    pricing = Pricing(
        currency(check, "pricing.currency", prices.currency),
        money(check, "pricing.input_price_per_million", prices.input_price_per_million),
        money(check, "pricing.output_price_per_million", prices.output_price_per_million),
        money(check, "pricing.per_run_fee", prices.per_run_fee, required=False),
    )
    check.text("requested_by", request.requested_by, MAX_NAME)
    check.done()
    assert operation is not None
    return NewEstimate(
        tree_id=request.tree_id,
        operation=operation,
        target_id=request.target_id,
        model_strategy=request.model_strategy,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        parallelism=parallelism,
        pricing=pricing,
        requested_by=request.requested_by,
    )


def estimate_id(check: Checker, request: Any) -> str:
    check.identifier("estimate_id", request.estimate_id)
    return str(request.estimate_id)


def approval(request: costs_pb2.ApproveEstimateRequest) -> tuple[str, str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    estimate_id(check, request)
    check.text("approved_by", request.approved_by, MAX_NAME)
    check.text("reason", request.reason, MAX_REASON, required=False)
    check.done()
    return request.estimate_id, request.approved_by, request.reason


def settlement(request: costs_pb2.SettleChargeRequest) -> Settlement:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    estimate_id(check, request)
    actual = money(check, "actual_cost", request.actual_cost)
    actual_in = tokens(check, "actual_input_tokens", request.actual_input_tokens)
    actual_out = tokens(check, "actual_output_tokens", request.actual_output_tokens)
    check.done()
    return Settlement(request.estimate_id, actual, actual_in, actual_out)


def quota_change(request: costs_pb2.SetQuotaRequest) -> QuotaChange:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.text("owner", request.owner, MAX_NAME)
    code = currency(check, "currency", request.currency)
    limit = money(check, "limit", request.limit)
    threshold = None
    if request.parallel_approval_cost:
        threshold = money(check, "parallel_approval_cost", request.parallel_approval_cost)
    if request.expected_revision < 0:
        check.fail("expected_revision", "must be 0 to create the quota, else its current revision")
    check.done()
    return QuotaChange(request.owner, code, limit, threshold, request.expected_revision)


def estimate_to_proto(estimate: Estimate) -> costs_pb2.Estimate:
    pricing = estimate.pricing
    message = costs_pb2.Estimate(
        id=estimate.id,
        tree_id=estimate.tree_id,
        owner=estimate.owner,
        operation=OPERATION_TO_PROTO[estimate.operation],
        target_id=estimate.target_id,
        model_strategy=estimate.model_strategy,
        resources=costs_pb2.ExpectedResources(
            input_tokens=estimate.input_tokens,
            output_tokens=estimate.output_tokens,
            parallelism=estimate.parallelism,
        ),
        pricing=costs_pb2.Pricing(
            currency=pricing.currency,
            input_price_per_million=format_money(pricing.input_price_per_million),
            output_price_per_million=format_money(pricing.output_price_per_million),
            per_run_fee=format_money(pricing.per_run_fee),
        ),
        cost=format_money(estimate.cost),
        currency=pricing.currency,
        requested_by=estimate.requested_by,
        created_at=format_utc(estimate.created_at),
        charge_state=CHARGE_STATE_TO_PROTO[estimate.charge_state],
        reserved=format_money(
            estimate.cost if estimate.charge_state is ChargeState.RESERVED else Decimal(0)
        ),
        actual_cost=format_money(estimate.actual_cost) if estimate.actual_cost is not None else "",
        over_quota=estimate.over_quota,
        node_ids=list(estimate.node_ids),
        approval_needed_because=list(estimate.approval_needed_because),
        charged_at=format_utc(estimate.charged_at) if estimate.charged_at else "",
        settled_at=format_utc(estimate.settled_at) if estimate.settled_at else "",
    )
    if estimate.approved_by is not None and estimate.approved_at is not None:
        message.approval.CopyFrom(
            costs_pb2.Approval(
                approved_by=estimate.approved_by,
                reason=estimate.approval_reason,
                approved_at=format_utc(estimate.approved_at),
            )
        )
    return message


def quota_to_proto(quota: Quota) -> costs_pb2.Quota:
    threshold = quota.parallel_approval_cost
    return costs_pb2.Quota(
        owner=quota.owner,
        currency=quota.currency,
        limit=format_money(quota.limit),
        reserved=format_money(quota.reserved),
        spent=format_money(quota.spent),
        remaining=format_money(remaining(quota.limit, quota.reserved, quota.spent)),
        parallel_approval_cost=format_money(threshold) if threshold is not None else "",
        revision=quota.revision,
        updated_at=format_utc(quota.updated_at),
    )
