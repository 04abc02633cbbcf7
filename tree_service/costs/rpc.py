"""The RPCs of cost visibility (T20) and comparisons of candidates (T23)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import costs_pb2
from tree_service import convert
from tree_service.costs import messages
from tree_service.costs.compare import ComparisonStore, new_comparison
from tree_service.costs.store import CostStore
from tree_service.servicing import Ctx, ServicerBase


class CostRpcs(ServicerBase):
    """TreeService RPCs of estimates, quotas, charges and comparisons (mixed into
    TreeServicer)."""

    comparisons: ComparisonStore
    costs: CostStore

    async def EstimateRequest(
        self, request: costs_pb2.EstimateRequestRequest, context: Ctx
    ) -> costs_pb2.EstimateRequestResponse:
        new = messages.new_estimate(request)

        async def action(conn: Any) -> costs_pb2.EstimateRequestResponse:
            estimate = await self.costs.estimate(conn, new)
            return costs_pb2.EstimateRequestResponse(estimate=messages.estimate_to_proto(estimate))

        return await self._write(
            "EstimateRequest", request, costs_pb2.EstimateRequestResponse, action
        )

    async def GetEstimate(
        self, request: costs_pb2.GetEstimateRequest, context: Ctx
    ) -> costs_pb2.GetEstimateResponse:
        check = convert.Checker()
        messages.estimate_id(check, request)
        check.done()
        estimate = await self.costs.get_estimate(request.estimate_id)
        return costs_pb2.GetEstimateResponse(estimate=messages.estimate_to_proto(estimate))

    async def ApproveEstimate(
        self, request: costs_pb2.ApproveEstimateRequest, context: Ctx
    ) -> costs_pb2.ApproveEstimateResponse:
        estimate_id, approved_by, reason = messages.approval(request)

        async def action(conn: Any) -> costs_pb2.ApproveEstimateResponse:
            estimate = await self.costs.approve(conn, estimate_id, approved_by, reason)
            return costs_pb2.ApproveEstimateResponse(estimate=messages.estimate_to_proto(estimate))

        return await self._write(
            "ApproveEstimate", request, costs_pb2.ApproveEstimateResponse, action
        )

    async def ChargeEstimate(
        self, request: costs_pb2.ChargeEstimateRequest, context: Ctx
    ) -> costs_pb2.ChargeEstimateResponse:
        check = convert.Checker()
        check.idempotency_key(request.idempotency_key)
        estimate_id = messages.estimate_id(check, request)
        check.done()

        async def action(conn: Any) -> costs_pb2.ChargeEstimateResponse:
            estimate, quota = await self.costs.charge(conn, estimate_id)
            return costs_pb2.ChargeEstimateResponse(
                estimate=messages.estimate_to_proto(estimate),
                quota=messages.quota_to_proto(quota),
            )

        return await self._write(
            "ChargeEstimate", request, costs_pb2.ChargeEstimateResponse, action
        )

    async def SettleCharge(
        self, request: costs_pb2.SettleChargeRequest, context: Ctx
    ) -> costs_pb2.SettleChargeResponse:
        settlement = messages.settlement(request)

        async def action(conn: Any) -> costs_pb2.SettleChargeResponse:
            estimate, quota = await self.costs.settle(conn, settlement)
            return costs_pb2.SettleChargeResponse(
                estimate=messages.estimate_to_proto(estimate),
                quota=messages.quota_to_proto(quota),
            )

        return await self._write("SettleCharge", request, costs_pb2.SettleChargeResponse, action)

    async def SetQuota(
        self, request: costs_pb2.SetQuotaRequest, context: Ctx
    ) -> costs_pb2.SetQuotaResponse:
        change = messages.quota_change(request)

        async def action(conn: Any) -> costs_pb2.SetQuotaResponse:
            quota = await self.costs.set_quota(conn, change)
            return costs_pb2.SetQuotaResponse(quota=messages.quota_to_proto(quota))

        return await self._write("SetQuota", request, costs_pb2.SetQuotaResponse, action)

    async def GetQuota(
        self, request: costs_pb2.GetQuotaRequest, context: Ctx
    ) -> costs_pb2.GetQuotaResponse:
        check = convert.Checker()
        check.text("owner", request.owner, messages.MAX_NAME)
        check.done()
        quota = await self.costs.get_quota(request.owner)
        return costs_pb2.GetQuotaResponse(quota=messages.quota_to_proto(quota))

    async def CompareCandidates(
        self, request: costs_pb2.CompareCandidatesRequest, context: Ctx
    ) -> costs_pb2.CompareCandidatesResponse:
        wanted = new_comparison(request)

        async def action(conn: Any) -> costs_pb2.CompareCandidatesResponse:
            node, revision = await self.comparisons.compare(conn, wanted)
            return costs_pb2.CompareCandidatesResponse(
                node_id=node.id,
                comparison=convert.node_to_proto(node).comparison,
                tree_revision=revision,
            )

        return await self._write(
            "CompareCandidates", request, costs_pb2.CompareCandidatesResponse, action
        )
