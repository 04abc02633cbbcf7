"""The RPCs of context assembly: caller-written summaries, assembling a node's context and
reading a recorded context version back."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service.context_assembly import messages
from tree_service.context_assembly.store import ContextStore
from tree_service.convert import Checker
from tree_service.servicing import Ctx, ServicerBase


class ContextRpcs(ServicerBase):
    """TreeService RPCs of context assembly (mixed into TreeServicer)."""

    contexts: ContextStore

    async def RecordContextSummary(
        self, request: tree_pb2.RecordContextSummaryRequest, context: Ctx
    ) -> tree_pb2.RecordContextSummaryResponse:
        new = messages.summary_request(request)

        async def action(conn: Any) -> tree_pb2.RecordContextSummaryResponse:
            stored = await self.contexts.record_summary(conn, new)
            return tree_pb2.RecordContextSummaryResponse(summary=messages.summary_to_proto(stored))

        return await self._write(
            "RecordContextSummary", request, tree_pb2.RecordContextSummaryResponse, action
        )

    async def AssembleContext(
        self, request: tree_pb2.AssembleContextRequest, context: Ctx
    ) -> tree_pb2.AssembleContextResponse:
        wanted = messages.context_request(request)

        async def action(conn: Any) -> tree_pb2.AssembleContextResponse:
            version = await self.contexts.assemble(conn, wanted)
            return messages.context_to_proto(version)

        return await self._write(
            "AssembleContext", request, tree_pb2.AssembleContextResponse, action
        )

    async def GetContextVersion(
        self, request: tree_pb2.GetContextVersionRequest, context: Ctx
    ) -> tree_pb2.AssembleContextResponse:
        check = Checker()
        check.identifier("context_version_id", request.context_version_id)
        check.done()
        version = await self.contexts.get_version(request.context_version_id)
        return messages.context_to_proto(version)
