"""Estimates, approvals, charges and quotas on the primary."""

from __future__ import annotations

import uuid
from dataclasses import replace

import asyncpg

from tree_service import rules as tree_rules
from tree_service.costs import charges, queries
from tree_service.costs.money import cost_of
from tree_service.costs.rows import estimate_from_row, quota_from_row
from tree_service.costs.rules import (
    ChargeState,
    Estimate,
    EstimateNotApplicable,
    NewEstimate,
    Operation,
    Quota,
    QuotaChange,
    Settlement,
    approval_needs,
)
from tree_service.domain import NodeKind
from tree_service.errors import NotFound, PreconditionFailed, RevisionConflict

# The kind of node each operation's target must be.
TARGET_KINDS = {
    Operation.REGENERATE: (NodeKind.QUESTION,),
    Operation.CONTINUE: (NodeKind.ANSWER,),
    Operation.COMPARE_CANDIDATES: (NodeKind.QUESTION,),
    Operation.START_TASK: (NodeKind.QUESTION, NodeKind.ANSWER, NodeKind.CONTINUATION),
}


class CostStore:
    """The cost side of generated work: estimates, their charges, and owners' quotas."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def _with_needs(conn: asyncpg.Connection, estimate: Estimate) -> Estimate:
        row = await conn.fetchrow(queries.SELECT_QUOTA, estimate.owner)
        quota = quota_from_row(row) if row else None
        return replace(estimate, approval_needed_because=approval_needs(estimate, quota))

    async def estimate(self, conn: asyncpg.Connection, new: NewEstimate) -> Estimate:
        """Store the caller's estimate of a request with its exact cost."""
        tree_uuid = tree_rules.parse_id(new.tree_id, "tree_id")
        owner = await conn.fetchval(queries.TREE_OWNER, tree_uuid)
        if owner is None:
            raise NotFound("tree", new.tree_id)
        target_uuid = tree_rules.parse_id(new.target_id, "target_id")
        target = await conn.fetchrow(queries.NODE_OF_TREE, target_uuid)
        if target is None:
            raise NotFound("node", new.target_id)
        if target["tree_id"] != str(tree_uuid):
            raise PreconditionFailed(
                f"target_id {new.target_id} is in another tree", {"field": "target_id"}
            )
        kinds = TARGET_KINDS[new.operation]
        if NodeKind(target["kind"]) not in kinds:
            raise PreconditionFailed(
                f"target_id {new.target_id} is a {target['kind']}; {new.operation.value} "
                f"targets a {' or '.join(k.value for k in kinds)}",
                {"field": "target_id"},
            )
        pricing = new.pricing
        cost = cost_of(
            input_tokens=new.input_tokens,
            output_tokens=new.output_tokens,
            parallelism=new.parallelism,
            input_price_per_million=pricing.input_price_per_million,
            output_price_per_million=pricing.output_price_per_million,
            per_run_fee=pricing.per_run_fee,
        )
        row = await conn.fetchrow(
            queries.INSERT_ESTIMATE,
            uuid.uuid4(),
            tree_uuid,
            owner,
            new.operation.value,
            target_uuid,
            new.model_strategy,
            new.input_tokens,
            new.output_tokens,
            new.parallelism,
            pricing.currency,
            pricing.input_price_per_million,
            pricing.output_price_per_million,
            pricing.per_run_fee,
            cost,
            new.requested_by,
        )
        return await self._with_needs(conn, estimate_from_row(row))

    async def get_estimate(self, estimate_id: str) -> Estimate:
        estimate_uuid = tree_rules.parse_id(estimate_id, "estimate_id")
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(queries.SELECT_ESTIMATE, estimate_uuid)
            if row is None:
                raise NotFound("estimate", estimate_id)
            return await self._with_needs(conn, estimate_from_row(row))

    async def _reread(self, conn: asyncpg.Connection, estimate_id: str) -> Estimate:
        row = await conn.fetchrow(queries.SELECT_ESTIMATE, uuid.UUID(estimate_id))
        return await self._with_needs(conn, estimate_from_row(row))

    async def approve(
        self, conn: asyncpg.Connection, estimate_id: str, approved_by: str, reason: str
    ) -> Estimate:
        """The owner's approval to run above the quota or as high-cost parallel work."""
        estimate = await charges.lock_estimate(conn, estimate_id, "estimate_id")
        if approved_by != estimate.owner:
            raise PreconditionFailed(
                f"approved_by {approved_by!r} is not the owner of the estimate's tree "
                f"({estimate.owner!r}), whose quota it would draw on",
                {"field": "approved_by"},
            )
        if estimate.charge_state is not ChargeState.NOT_CHARGED:
            raise EstimateNotApplicable(
                f"estimate_id {estimate_id} is {estimate.charge_state.value} already; an "
                "approval only counts before the charge",
                {"field": "estimate_id", "charge_state": estimate.charge_state.value},
            )
        if estimate.approved_by is not None:
            raise PreconditionFailed(
                f"estimate_id {estimate_id} was approved already", {"field": "estimate_id"}
            )
        await conn.execute(queries.APPROVE_ESTIMATE, uuid.UUID(estimate_id), approved_by, reason)
        return await self._reread(conn, estimate_id)

    async def charge(self, conn: asyncpg.Connection, estimate_id: str) -> tuple[Estimate, Quota]:
        """Reserve the estimate's cost on its owner's quota, or refuse and write nothing."""
        estimate = await charges.lock_estimate(conn, estimate_id, "estimate_id")
        quota = await charges.reserve(conn, estimate, "estimate_id")
        return await self._reread(conn, estimate_id), quota

    async def settle(
        self, conn: asyncpg.Connection, settlement: Settlement
    ) -> tuple[Estimate, Quota]:
        """Record the actual spend and release the rest of the reservation."""
        estimate, row = await charges.settle(
            conn,
            settlement.estimate_id,
            "estimate_id",
            settlement.actual_cost,
            (settlement.actual_input_tokens, settlement.actual_output_tokens),
        )
        return await self._reread(conn, estimate.id), quota_from_row(row)

    @staticmethod
    async def set_quota(conn: asyncpg.Connection, change: QuotaChange) -> Quota:
        """Create (expected revision 0) or change an owner's quota at its revision."""
        args = (change.owner, change.currency, change.limit, change.parallel_approval_cost)
        if change.expected_revision == 0:
            row = await conn.fetchrow(queries.INSERT_QUOTA, *args)
            if row is not None:
                return quota_from_row(row)
        else:
            current = await conn.fetchrow(queries.SELECT_QUOTA, change.owner)
            if current is not None:
                quota = quota_from_row(current)
                moved = quota.reserved or quota.spent
                if quota.currency != change.currency and moved:
                    raise PreconditionFailed(
                        f"the quota of {change.owner!r} has money reserved or spent in "
                        f"{quota.currency}; its currency cannot change",
                        {"field": "currency"},
                    )
            row = await conn.fetchrow(queries.UPDATE_QUOTA, *args, change.expected_revision)
            if row is not None:
                return quota_from_row(row)
        current = await conn.fetchrow(queries.SELECT_QUOTA, change.owner)
        if current is None:
            raise NotFound("quota", change.owner)
        raise RevisionConflict("quota", change.owner, change.expected_revision, current["revision"])

    async def get_quota(self, owner: str) -> Quota:
        row = await self._pool.fetchrow(queries.SELECT_QUOTA, owner)
        if row is None:
            raise NotFound("quota", owner)
        return quota_from_row(row)
