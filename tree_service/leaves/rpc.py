"""PlanExtraction: what a reviewer still has to extract before it calls a model."""

from __future__ import annotations

from mirrortree.v1 import leaves_pb2
from tree_service.leaves import input as leaf_input
from tree_service.leaves import store
from tree_service.servicing import Ctx, ServicerBase


def _range(r: tuple[int, int]) -> leaves_pb2.CodePointRange:
    return leaves_pb2.CodePointRange(start=r[0], end=r[1])


class LeafRpcs(ServicerBase):
    """TreeService RPCs of shared leaves (mixed into TreeServicer)."""

    async def PlanExtraction(
        self, request: leaves_pb2.PlanExtractionRequest, context: Ctx
    ) -> leaves_pb2.PlanExtractionResponse:
        """Which parts of the named source versions already have leaves under the contract,
        and which still need extraction. Reads the primary, so a review just recorded counts."""
        wanted = leaf_input.plan_request(request)
        async with self.primary.pool.acquire() as conn:
            plans = await store.plan(conn, wanted)
        return leaves_pb2.PlanExtractionResponse(
            parts=[
                leaves_pb2.PartPlan(
                    requested=leaves_pb2.SourcePart(
                        source_type=p.part.source_type,
                        source_id=p.part.source_id,
                        source_version=p.part.source_version,
                        range=_range(p.requested),
                    ),
                    canonical_source_id=p.canonical_id,
                    extracted=[_range(r) for r in p.extracted],
                    missing=[_range(r) for r in p.missing],
                    leaf_count=p.leaf_count,
                    source_project=p.source_project or "",
                )
                for p in plans
            ]
        )
