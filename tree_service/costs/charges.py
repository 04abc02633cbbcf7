"""Charging an estimate to its owner's quota and recording the nodes generated under it, inside
the caller's transaction: a refusal rolls back whatever the request wrote with it."""

from __future__ import annotations

import uuid
from decimal import Decimal

import asyncpg

from tree_service import rules as tree_rules
from tree_service.costs import queries
from tree_service.costs.money import format_money, remaining
from tree_service.costs.rows import estimate_from_row, quota_from_row
from tree_service.costs.rules import (
    ApprovalRequired,
    ChargeState,
    Estimate,
    EstimateNotApplicable,
    Operation,
    Quota,
    QuotaExceeded,
    is_high_cost_parallel,
)
from tree_service.domain import Node
from tree_service.errors import NotFound, PreconditionFailed


async def lock_estimate(conn: asyncpg.Connection, estimate_id: str, field: str) -> Estimate:
    row = await conn.fetchrow(queries.LOCK_ESTIMATE, tree_rules.parse_id(estimate_id, field))
    if row is None:
        raise NotFound("estimate", estimate_id)
    return estimate_from_row(row)


async def reserve(conn: asyncpg.Connection, estimate: Estimate, field: str) -> Quota:
    """Hold the estimate's cost on its owner's quota (the estimate's row lock is held)."""
    if estimate.charge_state is not ChargeState.NOT_CHARGED:
        raise EstimateNotApplicable(
            f"{field} {estimate.id} is {estimate.charge_state.value} already; an estimate is "
            "charged once",
            {"field": field, "charge_state": estimate.charge_state.value},
        )
    row = await conn.fetchrow(queries.SELECT_QUOTA, estimate.owner)
    if row is None:
        raise QuotaExceeded(
            f"owner {estimate.owner!r} has no quota; nothing can be charged until one is set "
            "(SetQuota, with the owner's confirmation)",
            {"field": field, "owner": estimate.owner},
        )
    quota = quota_from_row(row)
    if quota.currency != estimate.pricing.currency:
        raise PreconditionFailed(
            f"{field} {estimate.id} is priced in {estimate.pricing.currency} but the quota of "
            f"{estimate.owner!r} is in {quota.currency}; estimate again in {quota.currency}",
            {"field": field, "quota_currency": quota.currency},
        )
    approved = estimate.approved_by is not None
    if not approved and is_high_cost_parallel(estimate, quota):
        raise ApprovalRequired(
            f"{field} {estimate.id} runs {estimate.parallelism} in parallel for "
            f"{format_money(estimate.cost)} {quota.currency}, at or above the quota's "
            f"threshold of {format_money(quota.parallel_approval_cost or Decimal(0))} for "
            "parallel work: the user must approve it first (ApproveEstimate)",
            {"field": field, "cost": format_money(estimate.cost)},
        )
    args = (estimate.owner, quota.currency, estimate.cost)
    charged = await conn.fetchrow(queries.RESERVE_WITHIN_QUOTA, *args)
    over_quota = False
    if charged is None:
        if not approved:
            now = quota_from_row(await conn.fetchrow(queries.SELECT_QUOTA, estimate.owner))
            left = remaining(now.limit, now.reserved, now.spent)
            raise QuotaExceeded(
                f"{field} {estimate.id} costs {format_money(estimate.cost)} {now.currency} but "
                f"only {format_money(left)} of the quota of {estimate.owner!r} remains: the user "
                "must approve running above it first (ApproveEstimate)",
                {
                    "field": field,
                    "cost": format_money(estimate.cost),
                    "remaining": format_money(left),
                },
            )
        charged = await conn.fetchrow(queries.RESERVE_APPROVED, *args)
        over_quota = True
    await conn.execute(queries.MARK_RESERVED, uuid.UUID(estimate.id), over_quota)
    return quota_from_row(charged)


async def settle(
    conn: asyncpg.Connection,
    estimate_id: str,
    field: str,
    actual_cost: Decimal,
    actual_tokens: tuple[int | None, int | None],
) -> tuple[Estimate, asyncpg.Record]:
    """Record a reserved charge's actual spend and release the rest of its reservation; the
    estimate as locked and the quota's row after."""
    estimate = await lock_estimate(conn, estimate_id, field)
    if estimate.charge_state is not ChargeState.RESERVED:
        raise EstimateNotApplicable(
            f"{field} {estimate.id} is {estimate.charge_state.value}; only a reserved charge "
            "is settled (once)",
            {"field": field, "charge_state": estimate.charge_state.value},
        )
    row = await conn.fetchrow(queries.SETTLE_QUOTA, estimate.owner, estimate.cost, actual_cost)
    await conn.execute(queries.MARK_SETTLED, uuid.UUID(estimate.id), actual_cost, *actual_tokens)
    return estimate, row


async def charge_task(
    conn: asyncpg.Connection,
    estimate_id: str,
    tree_id: str,
    node_id: str,
    budget: tuple[Decimal, str],
) -> None:
    """Reserve a START_TASK estimate of `node_id` for a task whose cost budget is `budget`
    (amount, currency): the estimate must cover it in that currency, so that the quota holds
    all the task may spend."""
    field = "estimate_id"
    cost, currency = budget
    estimate = await lock_estimate(conn, estimate_id, field)
    if (estimate.tree_id, estimate.operation, estimate.target_id) != (
        tree_id,
        Operation.START_TASK,
        node_id,
    ):
        raise EstimateNotApplicable(
            f"{field} {estimate_id} estimates {estimate.operation.value} of "
            f"{estimate.target_id}; this request is start_task of {node_id}",
            {"field": field},
        )
    if currency != estimate.pricing.currency:
        raise EstimateNotApplicable(
            f"{field} {estimate_id} is priced in {estimate.pricing.currency} but the task's "
            f"budget is in {currency}",
            {"field": "budget.currency"},
        )
    if cost > estimate.cost:
        raise EstimateNotApplicable(
            f"the task's cost budget of {format_money(cost)} {estimate.pricing.currency} is "
            f"above the {format_money(estimate.cost)} {field} {estimate_id} reserves; "
            "estimate the task again or lower its budget",
            {"field": "budget.cost_micros", "cost": format_money(estimate.cost)},
        )
    if estimate.charge_state is ChargeState.SETTLED:
        raise EstimateNotApplicable(
            f"{field} {estimate_id} is settled already; estimate the task again",
            {"field": field, "charge_state": estimate.charge_state.value},
        )
    if estimate.charge_state is ChargeState.NOT_CHARGED:
        await reserve(conn, estimate, field)


async def record_node(
    conn: asyncpg.Connection,
    estimate_id: str,
    field: str,
    node: Node,
    uses: tuple[tuple[Operation, str], ...],
) -> None:
    """Record `node` as generated under the estimate, charging it first if it is not yet.

    `uses` are the (operation, target) pairs the request may have been estimated as.
    """
    estimate = await lock_estimate(conn, estimate_id, field)
    if estimate.tree_id != node.tree_id:
        raise EstimateNotApplicable(
            f"{field} {estimate_id} was made for another tree", {"field": field}
        )
    if (estimate.operation, estimate.target_id) not in uses:
        wanted = " or ".join(f"{op.value} of {target}" for op, target in uses)
        raise EstimateNotApplicable(
            f"{field} {estimate_id} estimates {estimate.operation.value} of "
            f"{estimate.target_id}; this request is {wanted}",
            {"field": field},
        )
    if estimate.charge_state is ChargeState.SETTLED:
        raise EstimateNotApplicable(
            f"{field} {estimate_id} is settled already; estimate the new request again",
            {"field": field, "charge_state": estimate.charge_state.value},
        )
    if len(estimate.node_ids) >= estimate.parallelism:
        raise EstimateNotApplicable(
            f"{field} {estimate_id} covers {estimate.parallelism} run(s), all recorded "
            "already; estimate the new request again",
            {"field": field},
        )
    if estimate.charge_state is ChargeState.NOT_CHARGED:
        await reserve(conn, estimate, field)
    await conn.execute(
        queries.INSERT_ESTIMATE_NODE,
        uuid.UUID(node.id),
        uuid.UUID(estimate_id),
        len(estimate.node_ids),
    )
