"""The bud streaming RPC."""

from __future__ import annotations

from collections.abc import AsyncIterator

from mirrortree.v1 import tree_pb2
from tree_service.buds.committer import ChunkCommitter
from tree_service.buds.store import BudStore
from tree_service.buds.stream_rpc import BudStream
from tree_service.servicing import Ctx, ServicerBase


class BudRpcs(ServicerBase):
    """TreeService's StreamAnswer (mixed into TreeServicer)."""

    buds: BudStore
    chunks: ChunkCommitter

    async def StreamAnswer(
        self, request_iterator: AsyncIterator[tree_pb2.StreamAnswerRequest], context: Ctx
    ) -> AsyncIterator[tree_pb2.StreamAnswerResponse]:
        """Bud streaming (T6); see BudStream for the rules."""
        stream = BudStream(
            context, primary=self.primary, buds=self.buds, chunks=self.chunks, keep=self.keep
        )
        async for response in stream.run(request_iterator):
            yield response
