"""Cost visibility (T20): estimates priced by the caller and computed exactly, owners' quotas
charged atomically (reserve, then settle), and the user's approval above quota or for
high-cost parallel work."""

from __future__ import annotations

import asyncio
import uuid
from decimal import Decimal
from fractions import Fraction

import grpc
import pytest

from mirrortree.v1 import costs_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.costs_helpers import (
    approve,
    charge,
    estimate,
    failure_of,
    set_quota,
)
from tests.tree_service.helpers import answer, ask, new_tree
from tree_service.costs.money import cost_of, format_money, parse_money


async def owned_question(stub, owner: str = ""):
    tree = await new_tree(stub, owner=owner or unique("owner"))
    question = await ask(stub, tree.id)
    return tree, question


# ---- arithmetic ---------------------------------------------------------------------------


def test_money_is_parsed_and_printed_exactly_never_as_a_float():
    assert parse_money("0.1") == Decimal("0.1")
    for bad in ("-1", "1e3", "1.", ".5", "NaN", "Infinity", "1,5", " 1", "1" * 19, "0." + "1" * 13):
        assert parse_money(bad) is None, bad
    assert format_money(Decimal("0.045000")) == "0.045"
    assert format_money(Decimal("12.000")) == "12"
    assert format_money(Decimal("-3.50")) == "-3.5"
    assert format_money(Decimal("0E-12")) == "0"


def test_the_largest_allowed_cost_is_computed_without_rounding():
    top = Decimal("9" * 18 + "." + "9" * 12)
    cost = cost_of(
        input_tokens=10**12,
        output_tokens=10**12,
        parallelism=1_000,
        input_price_per_million=top,
        output_price_per_million=top,
        per_run_fee=top,
    )
    expected = 1_000 * (Fraction(10**12) * 2 * Fraction(str(top)) / 10**6 + Fraction(str(top)))
    assert Fraction(format_money(cost)) == expected


async def test_an_estimate_states_its_cost_exactly_from_the_callers_prices(tree_stub):
    tree, question = await owned_question(tree_stub)
    made = await estimate(
        tree_stub,
        tree.id,
        question.id,
        input_tokens=1_234_567,
        output_tokens=7_654_321,
        parallelism=7,
        input_price="3.000001",
        output_price="15.123456789012",
        per_run_fee="0.000000000001",
        currency="EUR",
    )
    expected = 7 * (
        Fraction(1_234_567) * Fraction("3.000001") / 10**6
        + Fraction(7_654_321) * Fraction("15.123456789012") / 10**6
        + Fraction("0.000000000001")
    )
    assert Fraction(made.cost) == expected
    assert made.currency == "EUR"
    assert (made.owner, made.operation, made.target_id) == (
        tree.owner,
        costs_pb2.REGENERATE,
        question.id,
    )
    assert made.charge_state == costs_pb2.NOT_CHARGED
    assert made.approval_needed_because == ["no_quota"]
    # Where floats would drift, the cost is exact: 0.1 + 0.2 is 0.3.
    tenth = await estimate(
        tree_stub,
        tree.id,
        question.id,
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        input_price="0.1",
        output_price="0.2",
    )
    assert tenth.cost == "0.3"
    # The estimate is stored and reads back as it was made.
    read = await tree_stub.GetEstimate(costs_pb2.GetEstimateRequest(estimate_id=made.id))
    assert read.estimate == made


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"input_price": "1.5e3"}, "pricing.input_price_per_million"),
        ({"output_price": "-1"}, "pricing.output_price_per_million"),
        ({"output_price": ""}, "pricing.output_price_per_million"),
        ({"per_run_fee": "0.0000000000001"}, "pricing.per_run_fee"),
        ({"currency": "usd"}, "pricing.currency"),
        ({"input_tokens": -1}, "resources.input_tokens"),
        ({"output_tokens": 10**12 + 1}, "resources.output_tokens"),
        ({"parallelism": 1_001}, "resources.parallelism"),
        ({"operation": costs_pb2.ESTIMATED_OPERATION_UNSPECIFIED}, "operation"),
        ({"model_strategy": ""}, "model_strategy"),
        ({"requested_by": ""}, "requested_by"),
    ],
)
async def test_a_bad_estimate_names_its_field_and_stores_nothing(tree_stub, db, fields, field):
    tree, question = await owned_question(tree_stub)
    failure = await failure_of(estimate(tree_stub, tree.id, question.id, **fields))
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == [field]
    stored = await db.fetchval(
        "SELECT count(*) FROM estimates WHERE tree_id = $1", uuid.UUID(tree.id)
    )
    assert stored == 0


async def test_an_estimate_must_target_a_node_of_its_kind_in_its_tree(tree_stub):
    tree, question = await owned_question(tree_stub)
    _, other_question = await owned_question(tree_stub)
    wrong_tree = await failure_of(estimate(tree_stub, tree.id, other_question.id))
    assert wrong_tree.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "another tree" in wrong_tree.message
    # CONTINUE continues an answer, not a question.
    wrong_kind = await failure_of(
        estimate(tree_stub, tree.id, question.id, operation=costs_pb2.CONTINUE)
    )
    assert wrong_kind.code == grpc.StatusCode.FAILED_PRECONDITION
    assert wrong_kind.metadata["field"] == "target_id"
    missing = await failure_of(estimate(tree_stub, tree.id, str(uuid.uuid4())))
    assert missing.code == grpc.StatusCode.NOT_FOUND


# ---- quotas, charges, approvals -----------------------------------------------------------


async def test_a_charge_reserves_and_settling_spends_the_actual_and_releases_the_rest(tree_stub):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "10")
    made = await estimate(tree_stub, tree.id, question.id, input_price="4")
    assert made.approval_needed_because == []
    charged = await charge(tree_stub, made.id)
    assert charged.estimate.charge_state == costs_pb2.RESERVED
    assert (charged.quota.reserved, charged.quota.spent, charged.quota.remaining) == ("4", "0", "6")
    settled = await tree_stub.SettleCharge(
        costs_pb2.SettleChargeRequest(
            idempotency_key=unique("k"),
            estimate_id=made.id,
            actual_cost="2.75",
            actual_input_tokens=700_000,
        )
    )
    assert settled.estimate.charge_state == costs_pb2.SETTLED
    assert settled.estimate.actual_cost == "2.75"
    assert (settled.quota.reserved, settled.quota.spent, settled.quota.remaining) == (
        "0",
        "2.75",
        "7.25",
    )
    again = await failure_of(charge(tree_stub, made.id))
    assert again.reason == "estimate_not_applicable"
    twice = await failure_of(
        tree_stub.SettleCharge(
            costs_pb2.SettleChargeRequest(
                idempotency_key=unique("k"), estimate_id=made.id, actual_cost="1"
            )
        )
    )
    assert twice.reason == "estimate_not_applicable"
    quota = (await tree_stub.GetQuota(costs_pb2.GetQuotaRequest(owner=tree.owner))).quota
    assert quota.spent == "2.75"


async def test_above_quota_the_charge_needs_the_users_approval_and_runs_after_it(tree_stub, db):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "5")
    made = await estimate(tree_stub, tree.id, question.id, input_price="8")
    assert made.approval_needed_because == ["above_quota"]
    refused = await failure_of(charge(tree_stub, made.id))
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.reason == "quota_exceeded"
    assert "ApproveEstimate" in refused.message
    assert (refused.metadata["cost"], refused.metadata["remaining"]) == ("8", "5")
    quota = (await tree_stub.GetQuota(costs_pb2.GetQuotaRequest(owner=tree.owner))).quota
    assert quota.reserved == "0"  # nothing half written
    # Only the owner approves: the approval draws on their quota.
    stranger = await failure_of(approve(tree_stub, made.id, "someone-else"))
    assert stranger.code == grpc.StatusCode.FAILED_PRECONDITION
    assert stranger.metadata["field"] == "approved_by"
    approved = await approve(tree_stub, made.id, tree.owner)
    assert (approved.approval.approved_by, approved.approval.reason) == (tree.owner, "worth it")
    assert approved.approval_needed_because == []
    charged = await charge(tree_stub, made.id)
    assert charged.estimate.over_quota
    assert (charged.quota.reserved, charged.quota.remaining) == ("8", "-3")
    late = await failure_of(approve(tree_stub, made.id, tree.owner))
    assert late.reason == "estimate_not_applicable"


async def test_high_cost_parallel_work_needs_approval_even_within_the_quota(tree_stub):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "100", parallel_approval_cost="3")
    single = await estimate(tree_stub, tree.id, question.id, input_price="5")
    parallel = await estimate(tree_stub, tree.id, question.id, input_price="1", parallelism=4)
    cheap = await estimate(tree_stub, tree.id, question.id, input_price="0.5", parallelism=4)
    assert parallel.approval_needed_because == ["high_cost_parallel"]
    assert (await charge(tree_stub, single.id)).estimate.charge_state == costs_pb2.RESERVED
    assert (await charge(tree_stub, cheap.id)).estimate.charge_state == costs_pb2.RESERVED
    refused = await failure_of(charge(tree_stub, parallel.id))
    assert (refused.code, refused.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "approval_required",
    )
    await approve(tree_stub, parallel.id, tree.owner)
    charged = await charge(tree_stub, parallel.id)
    assert not charged.estimate.over_quota
    assert charged.quota.reserved == "11"


async def test_without_a_quota_nothing_is_charged(tree_stub):
    tree, question = await owned_question(tree_stub)
    made = await estimate(tree_stub, tree.id, question.id)
    await approve(tree_stub, made.id, tree.owner)
    refused = await failure_of(charge(tree_stub, made.id))
    assert refused.reason == "quota_exceeded"
    assert "SetQuota" in refused.message


async def test_a_quota_is_charged_only_in_its_own_currency(tree_stub):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "10", currency="EUR")
    made = await estimate(tree_stub, tree.id, question.id, currency="USD")
    refused = await failure_of(charge(tree_stub, made.id))
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "EUR" in refused.message


async def test_a_quota_changes_at_its_revision_and_keeps_what_was_spent(tree_stub):
    tree, question = await owned_question(tree_stub)
    created = await set_quota(tree_stub, tree.owner, "1")
    assert created.revision == 1
    exists = await failure_of(set_quota(tree_stub, tree.owner, "2"))
    assert (exists.code, exists.reason) == (grpc.StatusCode.ABORTED, "revision_conflict")
    await charge(tree_stub, (await estimate(tree_stub, tree.id, question.id)).id)
    raised = await set_quota(tree_stub, tree.owner, "3.5", expected=1)
    assert (raised.revision, raised.limit, raised.reserved, raised.remaining) == (
        2,
        "3.5",
        "1",
        "2.5",
    )
    stale = await failure_of(set_quota(tree_stub, tree.owner, "4", expected=1))
    assert stale.metadata["current_revision"] == "2"
    other_currency = await failure_of(
        set_quota(tree_stub, tree.owner, "4", expected=2, currency="EUR")
    )
    assert other_currency.metadata["field"] == "currency"
    bad = await failure_of(set_quota(tree_stub, tree.owner, "lots", expected=2))
    assert [v.field for v in bad.violations] == ["limit"]
    missing = await failure_of(
        tree_stub.GetQuota(costs_pb2.GetQuotaRequest(owner=unique("nobody")))
    )
    assert missing.code == grpc.StatusCode.NOT_FOUND


async def test_32_concurrent_charges_never_overdraw_the_quota(tree_stub, db):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "10")
    made = [await estimate(tree_stub, tree.id, question.id, input_price="1") for _ in range(32)]
    outcomes = await asyncio.gather(
        *(charge(tree_stub, m.id) for m in made), return_exceptions=True
    )
    charged = [o for o in outcomes if isinstance(o, costs_pb2.ChargeEstimateResponse)]
    refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert len(charged) == 10
    assert len(refused) == 22
    assert {e.code() for e in refused} == {grpc.StatusCode.FAILED_PRECONDITION}
    row = await db.fetchrow(
        "SELECT limit_amount, reserved, spent FROM quotas WHERE owner = $1", tree.owner
    )
    assert (row["reserved"], row["spent"]) == (Decimal(10), Decimal(0))
    reserved = await db.fetchval(
        "SELECT count(*) FROM estimates WHERE tree_id = $1 AND charge_state = 'reserved'",
        uuid.UUID(tree.id),
    )
    assert reserved == 10


async def test_32_concurrent_answers_charged_to_estimates_never_overdraw_the_quota(tree_stub, db):
    # One tree per answer, so that nothing but the quota orders the 32 writes.
    owner = unique("owner")
    await set_quota(tree_stub, owner, "10")
    questions = [(await owned_question(tree_stub, owner))[1] for _ in range(32)]
    made = [await estimate(tree_stub, q.tree_id, q.id, input_price="3") for q in questions]
    outcomes = await asyncio.gather(
        *(
            answer(
                tree_stub,
                q.id,
                "candidate",
                content=tree_pb2.GeneratedContent(
                    conditions=tree_pb2.RunConditions(model_strategy="m", estimate_id=m.id)
                ),
            )
            for q, m in zip(questions, made, strict=True)
        ),
        return_exceptions=True,
    )
    written = [o for o in outcomes if isinstance(o, tree_pb2.Node)]
    refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert (len(written), len(refused)) == (3, 29)
    assert {e.code() for e in refused} == {grpc.StatusCode.FAILED_PRECONDITION}
    # The refused answers were not written: nothing half written.
    answers = await db.fetchval(
        "SELECT count(*) FROM nodes WHERE parent_id = any($1::uuid[])",
        [uuid.UUID(q.id) for q in questions],
    )
    assert answers == 3
    quota = (await tree_stub.GetQuota(costs_pb2.GetQuotaRequest(owner=owner))).quota
    assert (quota.reserved, quota.remaining) == ("9", "1")


async def test_a_charge_replayed_with_its_key_reserves_once(tree_stub):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "10")
    made = await estimate(tree_stub, tree.id, question.id, input_price="4")
    key = unique("k")
    first = await charge(tree_stub, made.id, key)
    again = await charge(tree_stub, made.id, key)
    assert again.estimate == first.estimate and again.quota == first.quota
    quota = (await tree_stub.GetQuota(costs_pb2.GetQuotaRequest(owner=tree.owner))).quota
    assert quota.reserved == "4"


async def test_a_bad_settlement_names_its_field_and_changes_nothing(tree_stub):
    tree, question = await owned_question(tree_stub)
    await set_quota(tree_stub, tree.owner, "10")
    made = await estimate(tree_stub, tree.id, question.id, input_price="4")
    await charge(tree_stub, made.id)
    for actual, tokens, field in (
        ("", 0, "actual_cost"),
        ("1.2.3", 0, "actual_cost"),
        ("1", -5, "actual_input_tokens"),
    ):
        failure = await failure_of(
            tree_stub.SettleCharge(
                costs_pb2.SettleChargeRequest(
                    idempotency_key=unique("k"),
                    estimate_id=made.id,
                    actual_cost=actual,
                    actual_input_tokens=tokens,
                )
            )
        )
        assert [v.field for v in failure.violations] == [field]
    not_charged = await estimate(tree_stub, tree.id, question.id)
    early = await failure_of(
        tree_stub.SettleCharge(
            costs_pb2.SettleChargeRequest(
                idempotency_key=unique("k"), estimate_id=not_charged.id, actual_cost="1"
            )
        )
    )
    assert early.reason == "estimate_not_applicable"
    quota = (await tree_stub.GetQuota(costs_pb2.GetQuotaRequest(owner=tree.owner))).quota
    assert (quota.reserved, quota.spent) == ("4", "0")
