"""gRPC TreeService: request validation (convert), the store, and one error table."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from typing import Any, TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message

from mirrortree import rpcstatus
from mirrortree.v1 import common_pb2, tree_pb2, tree_pb2_grpc
from tree_service import convert, gating, graph_input
from tree_service.domain import (
    AnswerState,
    CanonicalScope,
    Generated,
    MainLineVersion,
    Node,
    StopReason,
)
from tree_service.errors import (
    Contention,
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
    PreconditionFailed,
    RevisionConflict,
    TreeServiceError,
)
from tree_service.store import BUD_LEASE_S, ChunkCommitter, ListedVersion, TreeStore

# grpc.aio.ServicerContext; grpc ships no type information, so it is Any to mypy.
Ctx: TypeAlias = Any
log = logging.getLogger("tree_service.buds")
R = TypeVar("R", bound=Message)
M = TypeVar("M", bound=Message)  # a message a page holds
T = TypeVar("T")

STATUS_BY_ERROR: dict[type[TreeServiceError], grpc.StatusCode] = {
    InvalidInput: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    PreconditionFailed: grpc.StatusCode.FAILED_PRECONDITION,
    RevisionConflict: grpc.StatusCode.ABORTED,
    Contention: grpc.StatusCode.ABORTED,
    IdempotencyKeyReused: grpc.StatusCode.ALREADY_EXISTS,
}

DEADLINE_TOLERANCE_S = 0.05
HALF_CLOSE_GRACE_S = 0.1
DEFAULT_PAGE = 50
MAX_PAGE = 500
DEFAULT_PATH_PAGE = 100
MAX_PATH_PAGE = 1000
DEFAULT_VERSION_PAGE = 20
MAX_VERSION_PAGE = 100
# A page of nodes stops early once it holds this many bytes, so that it stays under gRPC's
# 4 MiB default receive limit for clients and far under the 8 MiB send limit; a page always
# holds at least one node, and one node (an answer of at most 1,000,000 code points with its
# generated content) fits in a response on its own.
MAX_PAGE_BYTES = 4 * 1024 * 1024 - 4096  # room for the response's other fields


def byte_prefix(items: Iterable[T], to_proto: Callable[[T], M]) -> list[M]:
    """The messages of the longest prefix of `items` within MAX_PAGE_BYTES (never empty if
    `items` is not); items past it are never converted."""
    page: list[M] = []
    size = 0
    for item in items:
        message = to_proto(item)
        size += message.ByteSize() + 8  # the field's tag and length prefix
        if page and size > MAX_PAGE_BYTES:
            break
        page.append(message)
    return page


def byte_page(nodes: list[Node]) -> list[tree_pb2.Node]:
    """The longest prefix of `nodes` within MAX_PAGE_BYTES (never empty if `nodes` is not)."""
    return byte_prefix(nodes, convert.node_to_proto)


def offset_page(nodes: list[Node], offset: int, length: int) -> tuple[list[tree_pb2.Node], str]:
    """A page of nodes read from zero-based `offset` of a sequence of `length` nodes (a path,
    a snapshot), and the token of the next page ("" on the last)."""
    page = byte_page(nodes)
    following = offset + len(page)
    return page, str(following) if following < length else ""


def version_within(version: MainLineVersion, budget: int) -> tree_pb2.MainLineVersion:
    """A version with its snapshot when that fits in `budget` bytes, else without it
    (`snapshot_omitted`: GetMainLineSnapshot pages through it)."""
    message = convert.version_to_proto(version)
    if message.ByteSize() > budget:
        message.ClearField("snapshot")
        message.snapshot_omitted = True
    return message


async def version_page(
    store: TreeStore, listed: list[ListedVersion]
) -> list[tree_pb2.MainLineVersion]:
    """The longest prefix of `listed` within MAX_PAGE_BYTES (never empty if `listed` is not).
    A version whose snapshot would overflow a page of its own comes without it; one that would
    fit alone starts the next page instead.

    Snapshots are read a batch at a time, each batch about a page by the size they are stored
    in, and no further once the page is full: a page of large versions reads about a page of
    snapshots, not all of the versions listed. Stored sizes may be compressed, so a batch can
    hold a few pages of JSON text; never the whole list's."""
    messages: list[tree_pb2.MainLineVersion] = []
    start = 0
    while start < len(listed):
        end, stored = start + 1, listed[start].snapshot_stored_bytes
        while end < len(listed) and stored + listed[end].snapshot_stored_bytes <= MAX_PAGE_BYTES:
            stored += listed[end].snapshot_stored_bytes
            end += 1
        batch = await store.with_snapshots([v.version for v in listed[start:end]])
        messages.extend(version_within(version, MAX_PAGE_BYTES) for version in batch)
        page = byte_prefix(messages, lambda message: message)
        if len(page) < len(messages):
            return page
        start = end
    return messages


def request_hash(method: str, request: Message) -> bytes:
    """Fingerprint of a request without its idempotency key (deterministic serialization)."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("idempotency_key")
    return hashlib.sha256(
        method.encode() + b"\0" + copy.SerializeToString(deterministic=True)
    ).digest()


@rpcstatus.maps_errors(
    tree_pb2.DESCRIPTOR.services_by_name["TreeService"], TreeServiceError, STATUS_BY_ERROR
)
class TreeServicer(tree_pb2_grpc.TreeServiceServicer):
    """TreeService over a TreeStore on the primary."""

    def __init__(self, store: TreeStore, chunks: ChunkCommitter) -> None:
        self._store = store
        self.chunks = chunks
        self._background: set[asyncio.Task[None]] = set()

    @property
    def store(self) -> TreeStore:
        return self._store

    async def drain(self) -> None:
        """Wait for background work (bud freezes) started by RPCs that have ended."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def keep(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` as a task that outlives the RPC that started it (the event loop holds
        tasks only weakly); failures are logged."""
        task = asyncio.create_task(work)
        self._background.add(task)

        def finished(done: asyncio.Task[None]) -> None:
            self._background.discard(done)
            if not done.cancelled() and done.exception() is not None:
                log.error("background work failed", exc_info=done.exception())

        task.add_done_callback(finished)
        return task

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
        new = convert.new_tree(request)

        async def action(conn: Any) -> tree_pb2.CreateTreeResponse:
            tree = await self._store.create_tree(conn, new)
            return tree_pb2.CreateTreeResponse(tree=convert.tree_to_proto(tree))

        return await self._write(
            context, "CreateTree", request, tree_pb2.CreateTreeResponse, action
        )

    async def GetTree(
        self, request: tree_pb2.GetTreeRequest, context: Ctx
    ) -> tree_pb2.GetTreeResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        check.done()
        tree = await self._store.get_tree(request.tree_id)
        return tree_pb2.GetTreeResponse(tree=convert.tree_to_proto(tree))

    async def _append_node(
        self,
        context: Ctx,
        method: str,
        request: Any,
        response_type: type[R],
        append: Callable[[Any], Awaitable[tuple[Node, int]]],
    ) -> R:
        """The shape every node-creating RPC shares: one idempotent append, node + revision."""

        # Every response type here has these two fields; Message's own signature has none.
        build: Callable[..., R] = response_type

        async def action(conn: Any) -> R:
            node, revision = await append(conn)
            return build(node=convert.node_to_proto(node), tree_revision=revision)

        return await self._write(context, method, request, response_type, action)

    async def AskQuestion(
        self, request: tree_pb2.AskQuestionRequest, context: Ctx
    ) -> tree_pb2.AskQuestionResponse:
        question = convert.new_question(request)
        return await self._append_node(
            context,
            "AskQuestion",
            request,
            tree_pb2.AskQuestionResponse,
            lambda conn: self._store.ask_question(conn, question),
        )

    async def EditQuestion(
        self, request: tree_pb2.EditQuestionRequest, context: Ctx
    ) -> tree_pb2.EditQuestionResponse:
        edit = convert.question_edit(request)
        return await self._append_node(
            context,
            "EditQuestion",
            request,
            tree_pb2.EditQuestionResponse,
            lambda conn: self._store.edit_question(conn, edit),
        )

    async def AddAnswer(
        self, request: tree_pb2.AddAnswerRequest, context: Ctx
    ) -> tree_pb2.AddAnswerResponse:
        answer = convert.new_answer(request)
        return await self._append_node(
            context,
            "AddAnswer",
            request,
            tree_pb2.AddAnswerResponse,
            lambda conn: self._store.add_answer(conn, answer),
        )

    async def AddContinuation(
        self, request: tree_pb2.AddContinuationRequest, context: Ctx
    ) -> tree_pb2.AddContinuationResponse:
        continuation = convert.new_continuation(request)
        return await self._append_node(
            context,
            "AddContinuation",
            request,
            tree_pb2.AddContinuationResponse,
            lambda conn: self._store.add_continuation(conn, continuation),
        )

    async def AdoptAnswer(
        self, request: tree_pb2.AdoptAnswerRequest, context: Ctx
    ) -> tree_pb2.AdoptAnswerResponse:
        question_id, answer_id, expected = convert.adoption(request)

        async def action(conn: Any) -> tree_pb2.AdoptAnswerResponse:
            question = await self._store.adopt(conn, question_id, answer_id, expected)
            return tree_pb2.AdoptAnswerResponse(question=convert.node_to_proto(question))

        return await self._write(
            context, "AdoptAnswer", request, tree_pb2.AdoptAnswerResponse, action
        )

    async def Canonicalize(
        self, request: tree_pb2.CanonicalizeRequest, context: Ctx
    ) -> tree_pb2.CanonicalizeResponse:
        canonicalization = convert.canonicalization(request)

        async def action(conn: Any) -> tree_pb2.CanonicalizeResponse:
            version = await self._store.canonicalize(conn, canonicalization)
            # The version is saved whatever its size: a response that could not be sent
            # would report a failure, and a retry would replay the same oversized answer.
            return tree_pb2.CanonicalizeResponse(version=version_within(version, MAX_PAGE_BYTES))

        return await self._write(
            context, "Canonicalize", request, tree_pb2.CanonicalizeResponse, action
        )

    async def StreamAnswer(
        self, request_iterator: AsyncIterator[tree_pb2.StreamAnswerRequest], context: Ctx
    ) -> AsyncIterator[tree_pb2.StreamAnswerResponse]:
        """Bud streaming (T6); see BudStream for the rules."""
        stream = BudStream(self, context)
        async for response in stream.run(request_iterator):
            yield response

    async def GetNode(
        self, request: tree_pb2.GetNodeRequest, context: Ctx
    ) -> tree_pb2.GetNodeResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        check.done()
        node = await self._store.get_node(request.node_id)
        return tree_pb2.GetNodeResponse(node=convert.node_to_proto(node))

    async def GetPath(
        self, request: tree_pb2.GetPathRequest, context: Ctx
    ) -> tree_pb2.GetPathResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        limit = check.page_size(request.page_size, DEFAULT_PATH_PAGE, MAX_PATH_PAGE)
        offset = convert.page_token(check, request.page_token)
        check.done()
        nodes, length = await self._store.get_path(request.node_id, offset, limit)
        page, token = offset_page(nodes, offset, length)
        return tree_pb2.GetPathResponse(nodes=page, next_page_token=token, path_length=length)

    async def ListMainLineVersions(
        self, request: tree_pb2.ListMainLineVersionsRequest, context: Ctx
    ) -> tree_pb2.ListMainLineVersionsResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        check.identifier("world", request.world, required=False)
        limit = check.page_size(request.page_size, DEFAULT_VERSION_PAGE, MAX_VERSION_PAGE)
        check.identifier("page_token", request.page_token, required=False)
        check.done()
        scope = convert.scope_filter(request.scope)
        if request.world:
            # Only world canon has worlds: a world alone means that scope, and a world
            # with another scope could only ever match nothing.
            if scope is None:
                scope = CanonicalScope.WORLD_CANON
            elif scope is not CanonicalScope.WORLD_CANON:
                raise InvalidInput.one("world", "is only allowed with scope WORLD_CANON")
        versions = await self._store.list_main_line_versions(
            request.tree_id, scope, request.world, request.page_token or None, limit + 1
        )
        page = await version_page(self._store, versions[:limit])
        return tree_pb2.ListMainLineVersionsResponse(
            versions=page,
            next_page_token=page[-1].id if len(versions) > len(page) else "",
        )

    async def GetMainLineSnapshot(
        self, request: tree_pb2.GetMainLineSnapshotRequest, context: Ctx
    ) -> tree_pb2.GetMainLineSnapshotResponse:
        check = convert.Checker()
        check.identifier("version_id", request.version_id)
        limit = check.page_size(request.page_size, DEFAULT_PATH_PAGE, MAX_PATH_PAGE)
        offset = convert.page_token(check, request.page_token)
        check.done()
        nodes, length = await self._store.main_line_snapshot(request.version_id, offset, limit)
        page, token = offset_page(nodes, offset, length)
        return tree_pb2.GetMainLineSnapshotResponse(
            nodes=page, next_page_token=token, snapshot_length=length
        )

    async def ListNodes(
        self, request: tree_pb2.ListNodesRequest, context: Ctx
    ) -> tree_pb2.ListNodesResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        limit = check.page_size(request.page_size, DEFAULT_PAGE, MAX_PAGE)
        after = convert.page_token(check, request.page_token)
        check.done()
        nodes = await self._store.list_nodes(request.tree_id, after, limit + 1)
        page = byte_page(nodes[:limit])
        more = len(nodes) > len(page)
        return tree_pb2.ListNodesResponse(
            nodes=page,
            next_page_token=str(page[-1].ordinal) if more else "",
        )

    async def RecordReview(
        self, request: tree_pb2.RecordReviewRequest, context: Ctx
    ) -> tree_pb2.RecordReviewResponse:
        review = graph_input.review_result(request)
        # The result id is a second idempotency handle: identical content under another
        # key replays, different content under the same result id is refused.
        content_hash = request_hash("RecordReview", request)

        async def action(conn: Any) -> tree_pb2.RecordReviewResponse:
            recorded = await self._store.record_review(conn, review, content_hash)
            return convert.recorded_to_proto(recorded)

        return await self._write(
            context, "RecordReview", request, tree_pb2.RecordReviewResponse, action
        )

    async def RecordSource(
        self, request: tree_pb2.RecordSourceRequest, context: Ctx
    ) -> tree_pb2.RecordSourceResponse:
        new = graph_input.source_revision(request)

        async def action(conn: Any) -> tree_pb2.RecordSourceResponse:
            return convert.source_record_to_proto(await self._store.record_source(conn, new))

        return await self._write(
            context, "RecordSource", request, tree_pb2.RecordSourceResponse, action
        )

    async def SetPreference(
        self, request: tree_pb2.SetPreferenceRequest, context: Ctx
    ) -> tree_pb2.SetPreferenceResponse:
        new = graph_input.preference(request)

        async def action(conn: Any) -> tree_pb2.SetPreferenceResponse:
            record = await self._store.set_preference(conn, new)
            return tree_pb2.SetPreferenceResponse(preference=convert.preference_to_proto(record))

        return await self._write(
            context, "SetPreference", request, tree_pb2.SetPreferenceResponse, action
        )

    async def GetSettings(
        self, request: tree_pb2.GetSettingsRequest, context: Ctx
    ) -> tree_pb2.Settings:
        async with self._store.pool.acquire() as conn:
            return await gating.read_settings(conn)

    async def SetAppEnabled(
        self, request: tree_pb2.SetAppEnabledRequest, context: Ctx
    ) -> tree_pb2.Settings:
        enabled, expected = gating.app_request(request)
        return await self._write(
            context,
            "SetAppEnabled",
            request,
            tree_pb2.Settings,
            lambda conn: gating.set_app(conn, enabled, expected),
        )

    async def SetCapability(
        self, request: tree_pb2.SetCapabilityRequest, context: Ctx
    ) -> tree_pb2.Settings:
        enabled, assignments, expected = gating.capability_request(request)
        return await self._write(
            context,
            "SetCapability",
            request,
            tree_pb2.Settings,
            lambda conn: gating.set_capability(conn, enabled, assignments, expected),
        )

    async def SetSessionStoryGraph(
        self, request: tree_pb2.SetSessionStoryGraphRequest, context: Ctx
    ) -> tree_pb2.SessionContext:
        session, enabled = gating.switch_request(request)
        return await self._write(
            context,
            "SetSessionStoryGraph",
            request,
            tree_pb2.SessionContext,
            lambda conn: gating.set_session_switch(conn, session, enabled),
        )

    async def SaveSessionContext(
        self, request: tree_pb2.SaveSessionContextRequest, context: Ctx
    ) -> tree_pb2.SessionContext:
        session, state, expected = gating.save_request(request)
        return await self._write(
            context,
            "SaveSessionContext",
            request,
            tree_pb2.SessionContext,
            lambda conn: gating.save_context(conn, session, state, expected),
        )

    async def GetSessionContext(
        self, request: tree_pb2.GetSessionContextRequest, context: Ctx
    ) -> tree_pb2.SessionContext:
        async with self._store.pool.acquire() as conn:
            return await gating.read_context(conn, request.session_id)

    async def CreateBinding(
        self, request: tree_pb2.CreateBindingRequest, context: Ctx
    ) -> tree_pb2.CreateBindingResponse:
        session_id, runtime, allowed = convert.binding_request(request)

        async def action(conn: Any) -> tree_pb2.CreateBindingResponse:
            binding = await self._store.create_binding(conn, session_id, runtime, allowed)
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


class BudStream:
    """One StreamAnswer call: open → chunks → complete, or frozen when the stream ends early.

    Chunks must arrive in order (1, 2, 3 …). Each is acknowledged only after the group commit
    that stored it; re-sending an acknowledged chunk is acknowledged again without storing it
    twice. Any end other than `complete` — the client half-closing, cancelling, a deadline, or
    a bad message — freezes the bud with every acknowledged chunk and the reason. While the
    stream lives it renews the bud's lease; if this process dies, another instance's sweeper
    freezes the bud when the lease runs out.
    """

    def __init__(self, servicer: TreeServicer, context: Ctx) -> None:
        self._servicer = servicer
        self._context = context
        self._bud: str | None = None
        self._acked = 0
        self._length = 0  # code points of the acknowledged chunks
        self._ended = False
        self._lease: asyncio.Task[None] | None = None

    async def _keep_lease(self, bud: str) -> None:
        """Renew the bud's lease while this stream lives, even when no chunk arrives."""
        while True:
            await asyncio.sleep(BUD_LEASE_S / 3)
            try:
                if not await self._servicer.store.renew_bud_lease(bud):
                    return  # the bud ended (sealed, frozen, or swept)
            except Exception:  # a missed renewal is retried; the lease has slack for two
                log.warning("bud lease renewal failed", extra={"answer_id": bud})

    def _release_lease(self) -> None:
        if self._lease is not None:
            self._lease.cancel()
            self._lease = None

    async def run(
        self, requests: AsyncIterator[tree_pb2.StreamAnswerRequest]
    ) -> AsyncIterator[tree_pb2.StreamAnswerResponse]:
        try:
            async for message in requests:
                kind = message.WhichOneof("message")
                if self._ended:
                    raise InvalidInput.one(kind or "message", "the bud is already sealed")
                if kind == "open":
                    yield await self._open(message)
                elif self._bud is None:
                    raise InvalidInput.one(kind or "message", "the first message must be open")
                elif kind == "chunk":
                    yield await self._chunk(message.chunk)
                elif kind == "complete":
                    yield await self._complete(message.complete)
                else:
                    raise InvalidInput.one("message", "is empty")
            # A client that cancels also ends the request stream, and grpc delivers the
            # cancellation just after; wait briefly for it before calling this a half-close
            # (an abnormal end either way: a well-behaved client sends `complete`).
            if self._bud is not None and not self._ended:
                await asyncio.sleep(HALF_CLOSE_GRACE_S)
            await self._freeze(StopReason.CLIENT_CLOSED)
        except asyncio.CancelledError:
            # grpc cancels a call at its deadline a few milliseconds early by the server's
            # clock, so "nearly none left" counts as the deadline.
            remaining = self._context.time_remaining()
            expired = remaining is not None and remaining < DEADLINE_TOLERANCE_S
            await self._freeze(StopReason.DEADLINE_EXCEEDED if expired else StopReason.CANCELLED)
            raise
        except TreeServiceError:
            await self._freeze("invalid_message")
            raise
        except GeneratorExit:
            # grpc closes the response generator when the call dies while it is sending;
            # nothing may be awaited here, so the freeze is scheduled on its own.
            self._schedule_freeze(StopReason.CANCELLED)
            raise
        except Exception:
            await self._freeze("server_error")
            raise

    async def _open(self, message: tree_pb2.StreamAnswerRequest) -> tree_pb2.StreamAnswerResponse:
        if self._bud is not None:
            raise InvalidInput.one("open", "was already sent on this stream")
        answer = convert.bud_open(message.open)
        store = self._servicer.store

        async def action(conn: Any) -> tree_pb2.StreamAnswerResponse:
            node, _ = await store.add_answer(conn, answer)
            # Known before the commit: a cancellation that lands during the commit still
            # finds the bud to freeze (freezing a bud that never committed is a no-op).
            self._bud = node.id
            return tree_pb2.StreamAnswerResponse(opened=convert.node_to_proto(node))

        outcome = await store.write(
            key=message.open.idempotency_key,
            method="StreamAnswer",
            request_hash=request_hash("StreamAnswer", message.open),
            action=action,
            encode=lambda r: r.SerializeToString(),
        )
        if outcome.value is None:
            opened = tree_pb2.StreamAnswerResponse.FromString(outcome.replayed or b"")
            current = await store.get_node(opened.opened.id)
            raise PreconditionFailed(
                f"bud {current.id!r} was opened by an earlier stream and is "
                f"{current.answer_state}; a bud is never reattached — read it, or continue a "
                "frozen one with extends_answer_id",
                {"answer_id": current.id, "answer_state": str(current.answer_state)},
            )
        self._bud = outcome.value.opened.id
        self._lease = asyncio.create_task(self._keep_lease(self._bud))
        outcome.value.consistency.lsn = outcome.lsn
        return outcome.value

    async def _chunk(
        self, chunk: tree_pb2.StreamAnswerRequest.Chunk
    ) -> tree_pb2.StreamAnswerResponse:
        convert.chunk(chunk, self._acked + 1, self._length)
        assert self._bud is not None
        lsn = await self._servicer.chunks.submit(self._bud, chunk.seq, chunk.text)
        if chunk.seq > self._acked:  # a re-send is stored once, so counted once
            self._acked = chunk.seq
            self._length += len(chunk.text)
        return tree_pb2.StreamAnswerResponse(
            ack=tree_pb2.StreamAnswerResponse.Ack(seq=chunk.seq),
            consistency=common_pb2.ConsistencyToken(lsn=lsn),
        )

    async def _complete(
        self, complete: tree_pb2.StreamAnswerRequest.Complete
    ) -> tree_pb2.StreamAnswerResponse:
        if self._acked == 0:
            # Every acknowledged chunk is non-empty, so none acknowledged means no text: a
            # sealed empty answer could be adopted and canonicalized as if it said something.
            raise InvalidInput.one(
                "complete", "needs at least one acknowledged chunk; an empty answer is not sealed"
            )
        made = convert.bud_complete(complete)
        assert self._bud is not None
        node, lsn = await self._servicer.store.end_bud(self._bud, AnswerState.SEALED, None, made)
        self._ended = True
        self._release_lease()
        return tree_pb2.StreamAnswerResponse(
            sealed=convert.node_to_proto(node), consistency=common_pb2.ConsistencyToken(lsn=lsn)
        )

    async def _freeze(self, reason: str) -> None:
        """Freeze the bud unless it already ended. The freeze runs as its own task that this
        call's cancellation cannot interrupt: the call may be gone, but its acknowledged
        chunks must stay readable."""
        freezing = self._schedule_freeze(reason)
        if freezing is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(freezing)

    def _schedule_freeze(self, reason: str) -> asyncio.Task[None] | None:
        self._release_lease()
        if self._bud is None or self._ended:
            return None
        self._ended = True
        return self._servicer.keep(self._end_frozen(self._bud, reason))

    async def _end_frozen(self, bud: str, reason: str) -> None:
        # NotFound: the open never committed; PreconditionFailed: it ended another way.
        with contextlib.suppress(NotFound, PreconditionFailed):
            await self._servicer.store.end_bud(bud, AnswerState.FROZEN, reason, Generated())
            log.info("bud frozen", extra={"answer_id": bud, "stop_reason": reason})
