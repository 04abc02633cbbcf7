"""The RPCs of transplanting a branch into a new tree (T14)."""

from __future__ import annotations

from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.domain import MAX_TITLE
from tree_service.lifecycle.rules import TransplantOrigin, TransplantRequest
from tree_service.lifecycle.transplant_store import TransplantStore
from tree_service.servicing import Ctx, ServicerBase


def transplant_request(request: tree_pb2.TransplantBranchRequest) -> TransplantRequest:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    check.text("title", request.title, MAX_TITLE)
    check.text("transplanted_by", request.transplanted_by, 200)
    check.done()
    return TransplantRequest(request.node_id, request.title, request.transplanted_by)


def origin_to_proto(origin: TransplantOrigin) -> tree_pb2.TransplantOrigin:
    return tree_pb2.TransplantOrigin(
        tree_id=origin.tree_id,
        source_tree_id=origin.source_tree_id,
        source_node_id=origin.source_node_id,
        source_tree_revision=origin.source_tree_revision,
        ancestor_path=[convert.node_to_proto(n) for n in origin.ancestor_path],
        copies=origin.copies,
        transplanted_by=origin.transplanted_by,
        transplanted_at=format_utc(origin.transplanted_at),
    )


class TransplantRpcs(ServicerBase):
    """TreeService RPCs of transplants (mixed into TreeServicer)."""

    transplants: TransplantStore

    async def TransplantBranch(
        self, request: tree_pb2.TransplantBranchRequest, context: Ctx
    ) -> tree_pb2.TransplantBranchResponse:
        wanted = transplant_request(request)

        async def action(conn: Any) -> tree_pb2.TransplantBranchResponse:
            tree, origin = await self.transplants.transplant(conn, wanted)
            return tree_pb2.TransplantBranchResponse(
                tree=convert.tree_to_proto(tree), origin=origin_to_proto(origin)
            )

        return await self._write(
            "TransplantBranch", request, tree_pb2.TransplantBranchResponse, action
        )

    async def GetTransplantOrigin(
        self, request: tree_pb2.GetTransplantOriginRequest, context: Ctx
    ) -> tree_pb2.GetTransplantOriginResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        check.done()
        origin = await self.transplants.origin(request.tree_id)
        return tree_pb2.GetTransplantOriginResponse(origin=origin_to_proto(origin))
