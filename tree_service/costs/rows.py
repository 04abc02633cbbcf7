"""Rows of estimates and quotas as domain values."""

from __future__ import annotations

import asyncpg

from tree_service.costs.rules import ChargeState, Estimate, Operation, Pricing, Quota


def estimate_from_row(row: asyncpg.Record) -> Estimate:
    return Estimate(
        id=row["id"],
        tree_id=row["tree_id"],
        owner=row["owner"],
        operation=Operation(row["operation"]),
        target_id=row["target_id"],
        model_strategy=row["model_strategy"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        parallelism=row["parallelism"],
        pricing=Pricing(
            row["currency"],
            row["input_price_per_million"],
            row["output_price_per_million"],
            row["per_run_fee"],
        ),
        cost=row["cost"],
        requested_by=row["requested_by"],
        created_at=row["created_at"],
        charge_state=ChargeState(row["charge_state"]),
        over_quota=row["over_quota"],
        charged_at=row["charged_at"],
        settled_at=row["settled_at"],
        actual_cost=row["actual_cost"],
        approved_by=row["approved_by"],
        approval_reason=row["approval_reason"],
        approved_at=row["approved_at"],
        node_ids=tuple(row["node_ids"]),
    )


def quota_from_row(row: asyncpg.Record) -> Quota:
    return Quota(
        owner=row["owner"],
        currency=row["currency"],
        limit=row["limit_amount"],
        reserved=row["reserved"],
        spent=row["spent"],
        parallel_approval_cost=row["parallel_approval_cost"],
        revision=row["revision"],
        updated_at=row["updated_at"],
    )
