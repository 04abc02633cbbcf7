"""When a charge needs the user's approval (T20), without a database: parallel work at or above
the quota's threshold, a cost above what remains of the quota, or no quota at all."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tree_service.costs.rules import (
    ApprovalRequired,
    ChargeState,
    Estimate,
    EstimateNotApplicable,
    Operation,
    Pricing,
    Quota,
    QuotaExceeded,
    approval_needs,
    is_high_cost_parallel,
)
from tree_service.errors import PreconditionFailed

NOW = datetime(2026, 12, 4, tzinfo=UTC)
PRICING = Pricing("EUR", Decimal("1"), Decimal("2"), Decimal("0"))


def estimate(cost: str, parallelism: int = 1, **fields) -> Estimate:
    values = {
        "id": "e",
        "tree_id": "t",
        "owner": "ana",
        "operation": Operation.REGENERATE,
        "target_id": "q",
        "model_strategy": "m",
        "input_tokens": 10,
        "output_tokens": 10,
        "parallelism": parallelism,
        "pricing": PRICING,
        "cost": Decimal(cost),
        "requested_by": "ana",
        "created_at": NOW,
        "charge_state": ChargeState.NOT_CHARGED,
        "over_quota": False,
        "charged_at": None,
        "settled_at": None,
        "actual_cost": None,
        "approved_by": None,
        "approval_reason": "",
        "approved_at": None,
        **fields,
    }
    return Estimate(**values)


def quota(
    limit: str = "100", reserved: str = "0", spent: str = "0", threshold: str | None = "3"
) -> Quota:
    return Quota(
        owner="ana",
        currency="EUR",
        limit=Decimal(limit),
        reserved=Decimal(reserved),
        spent=Decimal(spent),
        parallel_approval_cost=Decimal(threshold) if threshold is not None else None,
        revision=1,
        updated_at=NOW,
    )


@pytest.mark.parametrize(
    ("cost", "parallelism", "high"),
    [
        ("2.999999999999", 4, False),  # just below the threshold
        ("3", 4, True),  # at it
        ("3.000000000001", 4, True),  # just above
        ("3.0", 2, True),  # two runs are parallel work
        ("1000", 1, False),  # one run is never parallel work, whatever it costs
    ],
)
def test_parallel_work_is_high_cost_at_or_above_the_threshold(cost, parallelism, high):
    assert is_high_cost_parallel(estimate(cost, parallelism), quota()) is high


def test_without_a_quota_or_a_threshold_no_work_is_high_cost_parallel():
    assert not is_high_cost_parallel(estimate("1000", 8), None)
    assert not is_high_cost_parallel(estimate("1000", 8), quota(threshold=None))
    # A threshold of zero is a threshold: every parallel run needs approval.
    assert is_high_cost_parallel(estimate("0", 2), quota(threshold="0"))


def test_an_estimate_within_the_quota_needs_no_approval_up_to_exactly_what_remains():
    assert approval_needs(estimate("40"), quota("100", reserved="35", spent="25")) == ()
    assert approval_needs(estimate("40.000000000001"), quota("100", "35", "25")) == ("above_quota",)


def test_an_overdrawn_quota_needs_approval_for_any_cost():
    assert approval_needs(estimate("0.01"), quota("10", reserved="8", spent="5")) == (
        "above_quota",
    )


def test_every_reason_is_given_in_a_fixed_order():
    assert approval_needs(estimate("5", 4), quota("4")) == ("above_quota", "high_cost_parallel")
    assert approval_needs(estimate("3", 4), quota("4")) == ("high_cost_parallel",)


def test_an_owner_without_a_quota_needs_one():
    assert approval_needs(estimate("0"), None) == ("no_quota",)


@pytest.mark.parametrize(
    "fields",
    [
        {"charge_state": ChargeState.RESERVED},
        {"charge_state": ChargeState.SETTLED},
        {"approved_by": "ana", "approved_at": NOW},
    ],
)
def test_a_charged_or_approved_estimate_needs_no_further_approval(fields):
    costly = estimate("500", 8, **fields)
    assert approval_needs(costly, quota("1")) == ()
    assert approval_needs(costly, None) == ()


def test_a_quota_of_thirty_significant_digits_that_covers_the_cost_needs_no_approval():
    exact = "100000000000000000.000000000001"
    assert approval_needs(estimate(exact), quota(exact)) == ()


def test_each_refusal_of_a_charge_is_a_failed_precondition_with_its_own_reason():
    reasons = {cls: cls.reason for cls in (QuotaExceeded, ApprovalRequired, EstimateNotApplicable)}
    assert all(issubclass(cls, PreconditionFailed) for cls in reasons)
    assert reasons == {
        QuotaExceeded: "quota_exceeded",
        ApprovalRequired: "approval_required",
        EstimateNotApplicable: "estimate_not_applicable",
    }
