"""gRPC TreeService: request validation (convert), the store, and one error table."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message

from mirrortree import rpcstatus
from mirrortree.v1 import common_pb2, tree_pb2, tree_pb2_grpc
from tree_service import convert
from tree_service.errors import (
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
    PreconditionFailed,
    RevisionConflict,
    TreeServiceError,
)
from tree_service.store import TreeStore

# grpc.aio.ServicerContext; grpc ships no type information, so it is Any to mypy.
Ctx: TypeAlias = Any
R = TypeVar("R", bound=Message)

STATUS_BY_ERROR: dict[type[TreeServiceError], grpc.StatusCode] = {
    InvalidInput: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    PreconditionFailed: grpc.StatusCode.FAILED_PRECONDITION,
    RevisionConflict: grpc.StatusCode.ABORTED,
    IdempotencyKeyReused: grpc.StatusCode.ALREADY_EXISTS,
}

DEFAULT_PAGE = 50
MAX_PAGE = 500


def request_hash(method: str, request: Message) -> bytes:
    """Fingerprint of a request without its idempotency key (deterministic serialization)."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("idempotency_key")
    return hashlib.sha256(
        method.encode() + b"\0" + copy.SerializeToString(deterministic=True)
    ).digest()


async def fail(context: Ctx, error: TreeServiceError) -> Any:
    """Abort with the status code that the error table assigns to this error class."""
    code = STATUS_BY_ERROR.get(type(error), grpc.StatusCode.INTERNAL)
    violations = error.violations if isinstance(error, InvalidInput) else ()
    await rpcstatus.abort(
        context, code, error.reason, error.message, metadata=error.metadata, violations=violations
    )


class TreeServicer(tree_pb2_grpc.TreeServiceServicer):
    """TreeService over a TreeStore on the primary."""

    def __init__(self, store: TreeStore) -> None:
        self._store = store

    async def _write(
        self,
        context: Ctx,
        method: str,
        request: Any,
        response_type: type[R],
        action: Callable[[Any], Awaitable[R]],
        *,
        stored: Callable[[R], R] = lambda r: r,
    ) -> R:
        """Run one idempotent write; attach the consistency token to the response.

        `stored` shapes what a replay returns (e.g. without a one-time secret).
        """
        outcome = await self._store.write(
            key=request.idempotency_key,
            method=method,
            request_hash=request_hash(method, request),
            action=action,
            encode=lambda r: stored(r).SerializeToString(),
        )
        if outcome.value is not None:
            response = outcome.value
        else:
            response = response_type()
            response.ParseFromString(outcome.replayed or b"")
        response.consistency.CopyFrom(common_pb2.ConsistencyToken(lsn=outcome.lsn))  # type: ignore[attr-defined]
        return response

    async def CreateTree(
        self, request: tree_pb2.CreateTreeRequest, context: Ctx
    ) -> tree_pb2.CreateTreeResponse:
        try:
            new = convert.new_tree(request)

            async def action(conn: Any) -> tree_pb2.CreateTreeResponse:
                tree = await self._store.create_tree(conn, new)
                return tree_pb2.CreateTreeResponse(tree=convert.tree_to_proto(tree))

            return await self._write(
                context, "CreateTree", request, tree_pb2.CreateTreeResponse, action
            )
        except TreeServiceError as error:
            return await fail(context, error)  # type: ignore[no-any-return]

    async def GetTree(
        self, request: tree_pb2.GetTreeRequest, context: Ctx
    ) -> tree_pb2.GetTreeResponse:
        try:
            check = convert.Checker()
            check.identifier("tree_id", request.tree_id)
            check.done()
            tree = await self._store.get_tree(request.tree_id)
            return tree_pb2.GetTreeResponse(tree=convert.tree_to_proto(tree))
        except TreeServiceError as error:
            return await fail(context, error)  # type: ignore[no-any-return]

    async def AskQuestion(
        self, request: tree_pb2.AskQuestionRequest, context: Ctx
    ) -> tree_pb2.AskQuestionResponse:
        try:
            question = convert.new_question(request)

            async def action(conn: Any) -> tree_pb2.AskQuestionResponse:
                node, revision = await self._store.ask_question(conn, question)
                return tree_pb2.AskQuestionResponse(
                    node=convert.node_to_proto(node), tree_revision=revision
                )

            return await self._write(
                context, "AskQuestion", request, tree_pb2.AskQuestionResponse, action
            )
        except TreeServiceError as error:
            return await fail(context, error)  # type: ignore[no-any-return]

    async def ListNodes(
        self, request: tree_pb2.ListNodesRequest, context: Ctx
    ) -> tree_pb2.ListNodesResponse:
        try:
            check = convert.Checker()
            check.identifier("tree_id", request.tree_id)
            if not 0 <= request.page_size <= MAX_PAGE:
                check.fail("page_size", f"must be between 1 and {MAX_PAGE} (0 = {DEFAULT_PAGE})")
            after = 0
            if request.page_token:
                try:
                    after = int(request.page_token)
                except ValueError:
                    check.fail("page_token", "is not a token this service issued")
            check.done()
            limit = request.page_size or DEFAULT_PAGE
            nodes = await self._store.list_nodes(request.tree_id, after, limit + 1)
            page = nodes[:limit]
            more = len(nodes) > limit
            return tree_pb2.ListNodesResponse(
                nodes=[convert.node_to_proto(n) for n in page],
                next_page_token=str(page[-1].ordinal) if more else "",
            )
        except TreeServiceError as error:
            return await fail(context, error)  # type: ignore[no-any-return]

    async def RecordReview(
        self, request: tree_pb2.RecordReviewRequest, context: Ctx
    ) -> tree_pb2.RecordReviewResponse:
        try:
            review = convert.review_result(request)
            # The result id is a second idempotency handle: identical content under another
            # key replays, different content under the same result id is refused.
            content_hash = request_hash("RecordReview", request)

            async def action(conn: Any) -> tree_pb2.RecordReviewResponse:
                recorded = await self._store.record_review(conn, review, content_hash)
                return convert.recorded_to_proto(recorded)

            return await self._write(
                context, "RecordReview", request, tree_pb2.RecordReviewResponse, action
            )
        except TreeServiceError as error:
            return await fail(context, error)  # type: ignore[no-any-return]

    async def CreateBinding(
        self, request: tree_pb2.CreateBindingRequest, context: Ctx
    ) -> tree_pb2.CreateBindingResponse:
        try:
            session_id, runtime = convert.binding_request(request)

            async def action(conn: Any) -> tree_pb2.CreateBindingResponse:
                binding = await self._store.create_binding(conn, session_id, runtime)
                return convert.binding_to_proto(binding)

            def without_token(
                response: tree_pb2.CreateBindingResponse,
            ) -> tree_pb2.CreateBindingResponse:
                copy = tree_pb2.CreateBindingResponse()
                copy.CopyFrom(response)
                copy.token = ""
                return copy

            return await self._write(
                context,
                "CreateBinding",
                request,
                tree_pb2.CreateBindingResponse,
                action,
                stored=without_token,
            )
        except TreeServiceError as error:
            return await fail(context, error)  # type: ignore[no-any-return]
