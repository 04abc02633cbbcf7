"""Estimates, quotas and comparisons as domain values, the refusals of a charge, and when a
charge needs the user's approval."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from tree_service.costs.money import remaining
from tree_service.errors import PreconditionFailed


class Operation(StrEnum):
    REGENERATE = "regenerate"
    CONTINUE = "continue"
    COMPARE_CANDIDATES = "compare_candidates"
    START_TASK = "start_task"


class ChargeState(StrEnum):
    NOT_CHARGED = "not_charged"
    RESERVED = "reserved"
    SETTLED = "settled"


class QuotaExceeded(PreconditionFailed):
    """The charge would overdraw the owner's quota (or the owner has none) and the user has
    not approved running above it; nothing was written."""

    reason = "quota_exceeded"


class ApprovalRequired(PreconditionFailed):
    """High-cost parallel work without the user's approval; nothing was written."""

    reason = "approval_required"


class EstimateNotApplicable(PreconditionFailed):
    """The estimate is for another operation, target or tree, or its charge has moved past
    what the request needs; nothing was written."""

    reason = "estimate_not_applicable"


@dataclass(frozen=True)
class Pricing:
    currency: str
    input_price_per_million: Decimal
    output_price_per_million: Decimal
    per_run_fee: Decimal


@dataclass(frozen=True)
class NewEstimate:
    tree_id: str
    operation: Operation
    target_id: str
    model_strategy: str
    input_tokens: int
    output_tokens: int
    parallelism: int
    pricing: Pricing
    requested_by: str


@dataclass(frozen=True)
class Quota:
    owner: str
    currency: str
    limit: Decimal
    reserved: Decimal
    spent: Decimal
    parallel_approval_cost: Decimal | None
    revision: int
    updated_at: datetime


@dataclass(frozen=True)
class QuotaChange:
    owner: str
    currency: str
    limit: Decimal
    parallel_approval_cost: Decimal | None
    expected_revision: int


@dataclass(frozen=True)
class Estimate:
    id: str
    tree_id: str
    owner: str
    operation: Operation
    target_id: str
    model_strategy: str
    input_tokens: int
    output_tokens: int
    parallelism: int
    pricing: Pricing
    cost: Decimal
    requested_by: str
    created_at: datetime
    charge_state: ChargeState
    over_quota: bool
    charged_at: datetime | None
    settled_at: datetime | None
    actual_cost: Decimal | None
    approved_by: str | None
    approval_reason: str
    approved_at: datetime | None
    node_ids: tuple[str, ...] = ()
    approval_needed_because: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settlement:
    estimate_id: str
    actual_cost: Decimal
    actual_input_tokens: int
    actual_output_tokens: int


@dataclass(frozen=True)
class NewComparison:
    question_id: str
    answer_ids: tuple[str, ...]
    criteria: tuple[str, ...]
    verdict: str
    preferred_answer_id: str | None
    conditions: dict[str, object]
    estimate_id: str | None


def is_high_cost_parallel(estimate: Estimate, quota: Quota | None) -> bool:
    """Parallel work at or above the quota's threshold: the user approves it first."""
    threshold = quota.parallel_approval_cost if quota else None
    return estimate.parallelism >= 2 and threshold is not None and estimate.cost >= threshold


def approval_needs(estimate: Estimate, quota: Quota | None) -> tuple[str, ...]:
    """Why charging `estimate` now would need an approval (informative: decided again, under
    the quota's row lock, when it is charged)."""
    if estimate.charge_state is not ChargeState.NOT_CHARGED or estimate.approved_by:
        return ()
    if quota is None:
        return ("no_quota",)
    needs = []
    if remaining(quota.limit, quota.reserved, quota.spent) < estimate.cost:
        needs.append("above_quota")
    if is_high_cost_parallel(estimate, quota):
        needs.append("high_cost_parallel")
    return tuple(needs)
