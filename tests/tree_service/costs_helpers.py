"""Builders for the cost and comparison tests (every write through TreeService's API)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import costs_pb2
from tests.conftest import unique


async def estimate(
    stub,
    tree_id: str,
    target_id: str,
    operation: costs_pb2.EstimatedOperation = costs_pb2.REGENERATE,
    *,
    input_tokens: int = 1_000_000,
    output_tokens: int = 0,
    parallelism: int = 1,
    input_price: str = "1",
    output_price: str = "0",
    currency: str = "USD",
    **fields: Any,
) -> costs_pb2.Estimate:
    response = await stub.EstimateRequest(
        costs_pb2.EstimateRequestRequest(
            idempotency_key=fields.pop("idempotency_key", unique("k")),
            tree_id=tree_id,
            operation=operation,
            target_id=target_id,
            model_strategy=fields.pop("model_strategy", "provider/model@balanced"),
            resources=costs_pb2.ExpectedResources(
                input_tokens=input_tokens, output_tokens=output_tokens, parallelism=parallelism
            ),
            pricing=costs_pb2.Pricing(
                currency=currency,
                input_price_per_million=input_price,
                output_price_per_million=output_price,
                per_run_fee=fields.pop("per_run_fee", ""),
            ),
            requested_by=fields.pop("requested_by", "host-app"),
            **fields,
        )
    )
    result: costs_pb2.Estimate = response.estimate
    return result


async def set_quota(
    stub, owner: str, limit: str, *, expected: int = 0, currency: str = "USD", **fields: Any
) -> costs_pb2.Quota:
    response = await stub.SetQuota(
        costs_pb2.SetQuotaRequest(
            idempotency_key=unique("k"),
            owner=owner,
            currency=currency,
            limit=limit,
            expected_revision=expected,
            **fields,
        )
    )
    quota: costs_pb2.Quota = response.quota
    return quota


async def charge(stub, estimate_id: str, key: str = "") -> costs_pb2.ChargeEstimateResponse:
    response: costs_pb2.ChargeEstimateResponse = await stub.ChargeEstimate(
        costs_pb2.ChargeEstimateRequest(idempotency_key=key or unique("k"), estimate_id=estimate_id)
    )
    return response


async def approve(stub, estimate_id: str, approved_by: str) -> costs_pb2.Estimate:
    response = await stub.ApproveEstimate(
        costs_pb2.ApproveEstimateRequest(
            idempotency_key=unique("k"),
            estimate_id=estimate_id,
            approved_by=approved_by,
            reason="worth it",
        )
    )
    approved: costs_pb2.Estimate = response.estimate
    return approved


async def failure_of(call) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return describe(caught.value)
