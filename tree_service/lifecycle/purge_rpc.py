"""The RPCs of purging an archived branch (T16)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import purge_pb2
from tree_service import convert
from tree_service.lifecycle.messages import MAX_REASON
from tree_service.lifecycle.purge_rules import parse_token
from tree_service.lifecycle.purge_store import PurgeOrder, PurgeStore
from tree_service.servicing import Ctx, ServicerBase


def purge_order(request: purge_pb2.PurgeRequest) -> PurgeOrder:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    check.identifier("node_id", request.node_id)
    if not request.preview_token:
        check.fail("preview_token", "is required: the token PreviewPurge returned")
    elif parse_token(request.preview_token) is None:
        check.fail("preview_token", "is not a token PreviewPurge returned")
    check.text("purged_by", request.purged_by, 200)
    check.text("reason", request.reason, MAX_REASON)
    check.done()
    return PurgeOrder(
        tree_id=request.tree_id,
        node_id=request.node_id,
        preview_token=request.preview_token,
        choice=request.choice,
        purged_by=request.purged_by,
        reason=request.reason,
    )


class PurgeRpcs(ServicerBase):
    """TreeService RPCs of purges (mixed into TreeServicer)."""

    purges: PurgeStore

    async def PreviewPurge(
        self, request: purge_pb2.PreviewPurgeRequest, context: Ctx
    ) -> purge_pb2.PreviewPurgeResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        check.done()
        impact, token = await self.purges.preview(
            request.node_id, request.include_transplant_copies
        )
        return purge_pb2.PreviewPurgeResponse(impact=impact, preview_token=token)

    async def Purge(self, request: purge_pb2.PurgeRequest, context: Ctx) -> purge_pb2.PurgeResponse:
        order = purge_order(request)

        async def action(conn: Any) -> purge_pb2.PurgeResponse:
            return await self.purges.purge(conn, order)

        return await self._write("Purge", request, purge_pb2.PurgeResponse, action)

    async def GetPurgeTombstone(
        self, request: purge_pb2.GetPurgeTombstoneRequest, context: Ctx
    ) -> purge_pb2.GetPurgeTombstoneResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        check.done()
        tombstone = await self.purges.tombstone(request.node_id)
        return purge_pb2.GetPurgeTombstoneResponse(tombstone=tombstone)
