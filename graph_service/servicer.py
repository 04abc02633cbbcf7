"""gRPC StoryGraph: caller and scope resolution, cursors, the store, and one error table."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message

from graph_service import convert, leaf_reads, source_convert
from graph_service.cursors import CursorCodec, CursorState, fingerprint
from graph_service.errors import (
    ConsistencyTimeout,
    Disabled,
    GraphError,
    HistoricalVersionUnavailable,
    InvalidCursor,
    InvalidInput,
    NotFound,
    ReplicaUnavailable,
    ResponseTooLarge,
    ScopeMismatch,
    ScopeRequired,
    SearchBudgetExceeded,
    SourceUnavailable,
    StaleCursor,
    Unauthenticated,
)
from graph_service.gate import Gate
from graph_service.store import GraphStore
from graph_service.views import (
    Caller,
    ContextContinuation,
    ContextRead,
    MatchCounts,
    ResolvedScope,
    TimeFilter,
)
from mirrortree import rpcstatus
from mirrortree.lsn import parse_lsn
from mirrortree.protoscope import scope_to_proto
from mirrortree.scopes import ScopeValue
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, leaves_pb2

# grpc.aio.ServicerContext; grpc ships no type information, so it is Any to mypy.
Ctx: TypeAlias = Any
R = TypeVar("R", bound=Message)

STATUS_BY_ERROR: dict[type[GraphError], grpc.StatusCode] = {
    InvalidInput: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidCursor: grpc.StatusCode.INVALID_ARGUMENT,
    StaleCursor: grpc.StatusCode.FAILED_PRECONDITION,
    ScopeRequired: grpc.StatusCode.FAILED_PRECONDITION,
    ScopeMismatch: grpc.StatusCode.PERMISSION_DENIED,
    NotFound: grpc.StatusCode.NOT_FOUND,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    ConsistencyTimeout: grpc.StatusCode.UNAVAILABLE,
    ReplicaUnavailable: grpc.StatusCode.UNAVAILABLE,
    HistoricalVersionUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    SourceUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    ResponseTooLarge: grpc.StatusCode.OUT_OF_RANGE,
    SearchBudgetExceeded: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Disabled: grpc.StatusCode.PERMISSION_DENIED,
}


def within_limit(response: R, advice: str) -> R:
    """Refuse an answer over MAX_RESPONSE_BYTES instead of cutting it silently."""
    size = response.ByteSize()
    if size > convert.MAX_RESPONSE_BYTES:
        raise ResponseTooLarge(
            f"the answer would be {size:,} bytes, over the {convert.MAX_RESPONSE_BYTES:,}-byte "
            f"limit; {advice}",
            {"response_bytes": str(size), "limit_bytes": str(convert.MAX_RESPONSE_BYTES)},
        )
    return response


def bearer_token(context: Ctx) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthenticated("authorization metadata must be 'Bearer <binding token>'")
            return token.strip()
    return None


def consistency_lsn(options: graph_pb2.ReadOptions) -> str:
    lsn = options.min_consistency.lsn
    if lsn:
        try:
            parse_lsn(lsn)
        except ValueError as exc:
            raise InvalidInput.one("options.min_consistency.lsn", str(exc)) from None
    return lsn


def context_continuation(state: CursorState) -> ContextContinuation:
    """Positions are ["collection", prefs, name, *keyset] or
    ["content", prefs, name, offset, content digest, type, id, result id]."""
    kind, _, name, *rest = state.position
    # Counts are [the collection's total, the read's unknown-time exclusions] of the first page.
    total, excluded = (*(state.counts or []), None, None)[:2]
    if kind == "collection":
        return ContextContinuation("collection", name, rest, total, excluded)
    offset, digest, *key = rest
    return ContextContinuation("content", name, [*key, offset, digest], total, excluded)


def carried_counts(state: CursorState | None, tf: TimeFilter) -> MatchCounts | None:
    """The first page's counts, from the cursor; None on a first page (count now)."""
    if state is None or state.counts is None:
        return None
    total, unknown_time = state.counts
    return MatchCounts(total, unknown_time, tf.excludes_unknown_times)


def context_collections(
    read: ContextRead,
    continuation: ContextContinuation | None,
    content_size: int,
    cursor: Callable[[list[Any], list[int | None]], str],
) -> list[graph_pb2.ContextCollection]:
    """Each collection's page of a context read, its items' content cut to `content_size`
    code points, with the cursors that continue a collection or an item's content."""
    collections = []
    for page in read.collections:
        items = []
        for entry in page.entries:
            start = 0
            if continuation is not None and continuation.kind == "content":
                start = int(continuation.position[3])
                if fingerprint(entry.content) != continuation.position[4]:
                    raise StaleCursor(
                        "this item's content changed since its first fragment; read "
                        "the context again",
                        {"collection": page.name},
                    )
            more = start + content_size < len(entry.content)
            items.append(
                convert.context_item(
                    entry,
                    start,
                    content_size,
                    cursor(
                        [
                            "content",
                            read.preferences_version,
                            page.name,
                            start + content_size,
                            fingerprint(entry.content),
                            *entry.key,
                        ],
                        [page.total, read.unknown_time_excluded],
                    )
                    if more
                    else "",
                )
            )
        next_cursor = ""
        if page.has_more:
            next_cursor = cursor(
                ["collection", read.preferences_version, page.name, *page.position],
                [page.total, read.unknown_time_excluded],
            )
        # An item's content continued alone is not a page of its collection: the
        # collection goes on as the page that held the item said (its cursor).
        continues_content = continuation is not None and continuation.kind == "content"
        collections.append(
            graph_pb2.ContextCollection(
                name=page.name,
                items=items,
                page=common_pb2.PageInfo(
                    returned_count=len(items),
                    has_more=page.has_more,
                    next_cursor=next_cursor,
                    complete=not page.has_more and not continues_content,
                    limit_reason=(
                        "content_continuation"
                        if continues_content
                        else "page_size"
                        if page.has_more
                        else ""
                    ),
                    total=convert.count(page.total, convert.UNCOUNTED),
                ),
            )
        )
    return collections


@rpcstatus.maps_errors(
    graph_pb2.DESCRIPTOR.services_by_name["StoryGraph"], GraphError, STATUS_BY_ERROR
)
class StoryGraphServicer(graph_pb2_grpc.StoryGraphServicer):
    """The three story-graph reads (and binding resolution) over replicas."""

    def __init__(
        self, store: GraphStore, cursors: CursorCodec, gate: Gate, anonymous_reads: bool = False
    ) -> None:
        self._store = store
        self._cursors = cursors
        self._gate = gate
        self._anonymous_reads = anonymous_reads

    @contextlib.asynccontextmanager
    async def _answering(self, caller: Caller) -> AsyncIterator[None]:
        """The block that builds an answer from data already read. The switches
        (Gate.require) are asked for as it starts — after the read, so that a switch flipped
        during the read still withholds the answer — and their answer is awaited as it ends:
        the check's round trip overlaps building the answer instead of following it. An error
        raised while building wins, as when the check came last, and cancels the check."""
        check = asyncio.ensure_future(self._gate.require(caller))
        await asyncio.sleep(0)  # let the check send its query before the building starts
        try:
            yield
        except BaseException:
            check.cancel()
            check.add_done_callback(lambda done: done.cancelled() or done.exception())
            raise
        await check

    async def _caller(self, context: Ctx, options: graph_pb2.ReadOptions, lsn: str) -> Caller:
        token = bearer_token(context)
        if token is not None:
            return await self._store.resolve_binding(token, lsn)
        if not self._anonymous_reads:
            raise Unauthenticated(
                "a runtime binding token is required (authorization: Bearer <token>); reads "
                "without one are switched off (MIRRORTREE_GRAPH_ANONYMOUS_READS)"
            )
        if options.session_id:
            try:
                session = uuid.UUID(options.session_id)
            except ValueError:
                raise InvalidInput(
                    [
                        rpcstatus.FieldViolation(
                            "options.session_id", "is not a session id (a UUID from CreateTree)"
                        )
                    ]
                ) from None
            exists, project = await self._store.session_project(session, lsn)
            if not exists:
                raise NotFound(
                    f"session {options.session_id!r} does not exist",
                    {"resource": "session", "id": options.session_id},
                )
            return Caller(options.session_id, project)
        return Caller(None, None)

    @staticmethod
    def _resolve_scope(requested: ScopeValue | None, caller: Caller) -> ResolvedScope:
        """Explicit scope wins; else the session's current project; never a silent Global."""
        if requested is not None:
            return ResolvedScope(requested, requested, "explicit")
        if caller.project_id:
            return ResolvedScope(
                None, ScopeValue.of_projects([caller.project_id]), "session_current_project"
            )
        why = (
            "the calling session has no current project"
            if caller.session_id
            else "the call names no session"
        )
        raise ScopeRequired(
            f"{why}; pass an explicit scope (one project, a project set, or Global)",
            {"session_id": caller.session_id or ""},
        )

    @staticmethod
    def _confine(scope: ResolvedScope, caller: Caller) -> ResolvedScope:
        """A runtime binding reads its session's project, plus the scopes it was granted when
        a call names them explicitly; an explicit scope or a cursor naming anything else is
        refused. Trusted callers without a binding are not confined."""
        if caller.binding_id is None:
            return scope
        own = ScopeValue.of_projects([caller.project_id]) if caller.project_id else None
        if scope.requested is not None and scope.resolved.key in caller.allowed_scopes:
            return scope
        if scope.resolved != own:
            raise ScopeMismatch(
                f"this runtime binding may read only its session's current project "
                f"({own.describe() if own else 'it has none'}) and the scopes it was granted, "
                f"not {scope.resolved.describe()}",
                {"requested_scope": scope.resolved.describe()},
            )
        return scope

    def _scope_and_cursor(
        self,
        cursor: str,
        tool: str,
        filters: str,
        requested: ScopeValue | None,
        caller: Caller,
        *,
        foreign: str,
    ) -> tuple[CursorState | None, ResolvedScope]:
        """The cursor's state (None on a first page) and the scope to read.

        A cursor must have been issued for this tool and these filters (`foreign` says so
        otherwise); paging keeps the first request's scope, even if the session's project has
        moved since. Either way a binding is confined to what it may read.
        """
        if not cursor:
            return None, self._confine(self._resolve_scope(requested, caller), caller)
        state = self._cursors.decode(cursor, tool)
        if state.fingerprint != filters:
            raise InvalidCursor(foreign)
        scope = ResolvedScope(requested, ScopeValue.from_key(state.scope_key), state.resolution)
        return state, self._confine(scope, caller)

    async def Search(
        self, request: graph_pb2.SearchRequest, context: Ctx
    ) -> graph_pb2.SearchResponse:
        convert.reject_unknown_fields(request)
        check = convert.Checker()
        query = convert.search_query(check, request.query)
        requested = check.scope("scope", request.scope, required=False)
        types = convert.object_types(check, list(request.object_types))
        tf = convert.time_filter(check, request.time_range, request.time_basis)
        size = check.page_size(request.page_size, convert.DEFAULT_PAGE, convert.MAX_PAGE)
        check.done()
        lsn = consistency_lsn(request.options)
        filters = fingerprint(
            query, types, tf.start, tf.end, tf.basis, requested.key if requested else None
        )
        # Every page authenticates its caller, even when a cursor fixes the scope.
        caller = await self._caller(context, request.options, lsn)
        state, scope = self._scope_and_cursor(
            request.cursor,
            "search",
            filters,
            requested,
            caller,
            foreign="cursor belongs to a search with other filters; start a new search",
        )
        page = await self._store.search(
            query=query,
            scope=scope,
            object_types=types,
            time_filter=tf,
            page_size=size,
            position=state.position if state else None,
            expected_revision=state.read_revision if state else None,
            carried_counts=carried_counts(state, tf),
            min_lsn=lsn,
        )
        # Re-checked after the read: a switch that flipped meanwhile withholds the page.
        async with self._answering(caller):
            next_cursor = ""
            if page.has_more:
                next_cursor = self._cursors.encode(
                    CursorState(
                        "search",
                        filters,
                        scope.resolved.key,
                        scope.resolution,
                        page.read_revision,
                        page.position,
                        [page.counts.total, page.counts.unknown_time_excluded],
                    )
                )
            response = convert.search_response(page, query, tf, next_cursor)
            response.linked_leaves.extend(leaf_reads.linked_hit(row) for row in page.linked)
        return within_limit(response, "ask for a smaller page_size")

    async def SearchLeaves(
        self, request: leaves_pb2.SearchLeavesRequest, context: Ctx
    ) -> leaves_pb2.SearchLeavesResponse:
        convert.reject_unknown_fields(request)
        requested, query, source_type, source_id, size = leaf_reads.filters(request)
        options = graph_pb2.ReadOptions(
            min_consistency=request.min_consistency, session_id=request.session_id
        )
        lsn = consistency_lsn(options)
        filters = fingerprint(query, source_type, source_id, requested.key if requested else None)
        caller = await self._caller(context, options, lsn)
        state, scope = self._scope_and_cursor(
            request.cursor,
            "search_leaves",
            filters,
            requested,
            caller,
            foreign="cursor belongs to a leaf search with other filters; start a new one",
        )
        last = leaf_reads.after(state.position if state else None)
        rows = await self._store.search_leaves(
            scope,
            query=query,
            source=(source_type, source_id),
            last_leaf=last,
            page_size=size,
            min_lsn=lsn,
        )
        async with self._answering(caller):
            next_cursor = ""
            if len(rows) > size:
                position = [rows[size - 1]["leaf_id"]]
                next_cursor = self._cursors.encode(
                    CursorState(
                        "search_leaves", filters, scope.resolved.key, scope.resolution, 0, position
                    )
                )
            response = leaves_pb2.SearchLeavesResponse(
                leaves=[leaf_reads.leaf(row) for row in rows[:size]],
                page=leaf_reads.page(rows, size, next_cursor),
                scope=scope_to_proto(scope.resolved),
                resolution=scope.resolution,
            )
        return within_limit(response, "ask for a smaller page_size")

    async def GetContext(
        self, request: graph_pb2.GetContextRequest, context: Ctx
    ) -> graph_pb2.GetContextResponse:
        convert.reject_unknown_fields(request)
        check = convert.Checker()
        object_type, object_id = convert.object_ref(check, request.object_ref)
        requested = check.scope("scope", request.scope, required=False)
        mode = convert.context_mode(check, request.mode)
        tf = convert.time_filter(check, request.time_range, request.time_basis)
        size = check.page_size(request.page_size, convert.DEFAULT_PAGE, convert.MAX_PAGE)
        content_size = convert.content_page_size(check, request.content_page_size)
        result_filter = check.identifier("result_id", request.result_id, required=False)
        check.done()
        lsn = consistency_lsn(request.options)
        filters = fingerprint(
            object_type,
            object_id,
            mode,
            tf.start,
            tf.end,
            tf.basis,
            requested.key if requested else None,
            result_filter,
        )
        caller = await self._caller(context, request.options, lsn)
        state, scope = self._scope_and_cursor(
            request.cursor,
            "get_context",
            filters,
            requested,
            caller,
            foreign="cursor belongs to another object, mode, filter or scope; read the context "
            "again without it",
        )
        continuation = context_continuation(state) if state else None
        read = await self._store.get_context(
            object_type=object_type,
            object_id=object_id,
            scope=scope,
            mode=mode,
            time_filter=tf,
            result_filter=result_filter or None,
            page_size=size,
            continuation=continuation,
            expected_revision=state.read_revision if state else None,
            expected_preferences=str(state.position[1]) if state else None,
            min_lsn=lsn,
        )

        def cursor(position: list[Any], counts: list[int | None] | None = None) -> str:
            return self._cursors.encode(
                CursorState(
                    "get_context",
                    filters,
                    scope.resolved.key,
                    scope.resolution,
                    read.read_revision,
                    position,
                    counts,
                )
            )

        # Re-checked after the read: a switch that flipped meanwhile withholds the answer.
        async with self._answering(caller):
            collections = context_collections(read, continuation, content_size, cursor)
            response = convert.context_response(read, scope, mode, tf, collections)
            response.linked_leaves.extend(leaf_reads.linked_hit(row) for row in read.linked)
        return within_limit(
            response,
            "ask for a smaller page_size or content_page_size, or continue one collection "
            "with its cursor",
        )

    async def ReadSource(
        self, request: graph_pb2.ReadSourceRequest, context: Ctx
    ) -> graph_pb2.ReadSourceResponse:
        convert.reject_unknown_fields(request)
        check = convert.Checker()
        check.identifier("source_reference_id", request.source_reference_id)
        requested = check.scope("scope", request.scope, required=False)
        kind = source_convert.read_kind(check, request.read_kind, request.source_version)
        offset, size = source_convert.content_page(check, request.offset, request.page_size)
        if request.cursor and request.offset:
            check.fail("offset", "leave it 0 when continuing with a cursor")
        check.done()
        lsn = consistency_lsn(request.options)
        caller = await self._caller(context, request.options, lsn)
        filters = fingerprint(
            request.source_reference_id,
            kind,
            request.source_version,
            requested.key if requested else None,
        )
        state, scope = self._scope_and_cursor(
            request.cursor,
            "read_source",
            filters,
            requested,
            caller,
            foreign="cursor belongs to another read; start a new read",
        )
        if state is not None:
            offset = int(state.position[0])
        read = await self._store.read_source(
            reference_id=request.source_reference_id,
            scope=scope,
            kind=kind,
            version=request.source_version,
            min_lsn=lsn,
        )
        # Re-checked after the read: a switch that flipped meanwhile withholds the answer.
        async with self._answering(caller):
            digest = fingerprint(read.content, read.returned_version)
            if state is not None and state.position[1] != digest:
                raise StaleCursor(
                    "the source changed since the first page; read it again from the start",
                    {"source_reference_id": request.source_reference_id},
                )
            if offset > len(read.content):
                raise InvalidInput.one(
                    "offset",
                    f"is past the end of the content ({len(read.content)} code points)",
                )
            next_cursor = ""
            if offset + size < len(read.content):
                next_cursor = self._cursors.encode(
                    CursorState(
                        "read_source",
                        filters,
                        scope.resolved.key,
                        scope.resolution,
                        read.read_revision,
                        [offset + size, digest],
                    )
                )
            response = source_convert.read_source_response(
                read,
                scope,
                requested_version=request.source_version,
                start=offset,
                size=size,
                next_cursor=next_cursor,
            )
        return within_limit(response, "ask for a smaller page_size")

    async def ResolveBinding(
        self, request: graph_pb2.ResolveBindingRequest, context: Ctx
    ) -> graph_pb2.ResolveBindingResponse:
        if not request.token:
            raise Unauthenticated("a binding token is required")
        caller = await self._store.resolve_binding(request.token)
        why = await self._gate.reason(caller)
        return graph_pb2.ResolveBindingResponse(
            binding_id=caller.binding_id or "",
            session_id=caller.session_id or "",
            runtime=caller.runtime or "",
            project_id=caller.project_id or "",
            enabled=not why,
            disabled_reason=why,
            allowed_scopes=[
                scope_to_proto(ScopeValue.from_key(key)) for key in caller.allowed_scopes
            ],
        )
