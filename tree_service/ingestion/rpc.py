"""The story-graph ingestion RPCs: review results, sources and preferences."""

from __future__ import annotations

from typing import Any

from mirrortree import counters
from mirrortree.v1 import tree_pb2
from tree_service.ingestion import messages, review_input, source_input
from tree_service.ingestion.statistics import GraphStatistics
from tree_service.ingestion.store import IngestionStore
from tree_service.servicing import Ctx, ServicerBase, request_hash


class IngestionRpcs(ServicerBase):
    """TreeService RPCs that write the story graph (mixed into TreeServicer)."""

    graph_statistics: GraphStatistics
    ingestion: IngestionStore

    async def RecordReview(
        self, request: tree_pb2.RecordReviewRequest, context: Ctx
    ) -> tree_pb2.RecordReviewResponse:
        review = review_input.review_result(request)
        # The result id is a second idempotency handle: identical content under another
        # key replays, different content under the same result id is refused.
        content_hash = request_hash("RecordReview", request)

        async def action(conn: Any) -> tree_pb2.RecordReviewResponse:
            recorded = await self.ingestion.record_review(conn, review, content_hash)
            return messages.recorded_to_proto(recorded)

        response = await self._write("RecordReview", request, tree_pb2.RecordReviewResponse, action)
        self.graph_statistics.recorded(review.scope.key)
        counters.REVIEW_RESULTS.inc()
        counters.REVIEW_OBJECTS.inc(len(review.objects))
        return response

    async def RecordSource(
        self, request: tree_pb2.RecordSourceRequest, context: Ctx
    ) -> tree_pb2.RecordSourceResponse:
        new = source_input.source_revision(request)

        async def action(conn: Any) -> tree_pb2.RecordSourceResponse:
            return messages.source_record_to_proto(await self.ingestion.record_source(conn, new))

        return await self._write("RecordSource", request, tree_pb2.RecordSourceResponse, action)

    async def SetPreference(
        self, request: tree_pb2.SetPreferenceRequest, context: Ctx
    ) -> tree_pb2.SetPreferenceResponse:
        new = source_input.preference(request)

        async def action(conn: Any) -> tree_pb2.SetPreferenceResponse:
            record = await self.ingestion.set_preference(conn, new)
            return tree_pb2.SetPreferenceResponse(preference=messages.preference_to_proto(record))

        return await self._write("SetPreference", request, tree_pb2.SetPreferenceResponse, action)
