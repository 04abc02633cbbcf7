"""The RPCs of merging trees by reference (T15)."""

from __future__ import annotations

from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.domain import MAX_QUESTION
from tree_service.lifecycle.merge_store import MergeStore
from tree_service.lifecycle.rules import MergeReference, MergeRequest, MergeSourceState
from tree_service.servicing import Ctx, ServicerBase

MAX_SOURCES = 100
SOURCE_STATE_TO_PROTO = {
    MergeSourceState.AVAILABLE: tree_pb2.SOURCE_AVAILABLE,
    MergeSourceState.ARCHIVED: tree_pb2.SOURCE_ARCHIVED,
    MergeSourceState.PURGED: tree_pb2.SOURCE_PURGED,
}


def merge_request(request: tree_pb2.MergeByReferenceRequest) -> MergeRequest:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    check.identifier("parent_id", request.parent_id, required=False)
    check.text("text", request.text, MAX_QUESTION)
    check.text("merged_by", request.merged_by, 200)
    sources = tuple(request.source_node_ids)
    if not sources:
        check.fail("source_node_ids", "must name at least one source node")
    elif len(sources) > MAX_SOURCES:
        check.fail("source_node_ids", f"names {len(sources)} nodes; the limit is {MAX_SOURCES}")
    elif len(set(sources)) != len(sources):
        check.fail("source_node_ids", "names a node twice")
    for i, source in enumerate(sources[:MAX_SOURCES]):
        check.identifier(f"source_node_ids[{i}]", source)
    check.done()
    return MergeRequest(
        request.tree_id, request.parent_id or None, request.text, sources, request.merged_by
    )


def reference_to_proto(reference: MergeReference) -> tree_pb2.MergeReference:
    return tree_pb2.MergeReference(
        question_id=reference.question_id,
        position=reference.position,
        source_node_id=reference.source_node_id,
        source_tree_id=reference.source_tree_id,
        source_state=SOURCE_STATE_TO_PROTO[reference.source_state],
        merged_by=reference.merged_by,
        created_at=format_utc(reference.created_at),
    )


class MergeRpcs(ServicerBase):
    """TreeService RPCs of merges by reference (mixed into TreeServicer)."""

    merges: MergeStore

    async def MergeByReference(
        self, request: tree_pb2.MergeByReferenceRequest, context: Ctx
    ) -> tree_pb2.MergeByReferenceResponse:
        wanted = merge_request(request)

        async def action(conn: Any) -> tree_pb2.MergeByReferenceResponse:
            question, revision, references = await self.merges.merge(conn, wanted)
            return tree_pb2.MergeByReferenceResponse(
                question=convert.node_to_proto(question),
                references=[reference_to_proto(r) for r in references],
                tree_revision=revision,
            )

        return await self._write(
            "MergeByReference", request, tree_pb2.MergeByReferenceResponse, action
        )

    async def ListMergeReferences(
        self, request: tree_pb2.ListMergeReferencesRequest, context: Ctx
    ) -> tree_pb2.ListMergeReferencesResponse:
        check = convert.Checker()
        check.identifier("question_id", request.question_id)
        check.done()
        references = await self.merges.list_references(request.question_id)
        return tree_pb2.ListMergeReferencesResponse(
            references=[reference_to_proto(r) for r in references]
        )
