"""The MCP server "Story Graph": three read-only tools forwarded to graph_service over gRPC.

One code path serves stdio, Streamable HTTP and in-memory clients. The caller's binding token
(HTTP: the bearer token; stdio: given at start) travels to graph_service as gRPC metadata;
graph_service resolves the session, runtime and project from it. The gateway holds no
database credentials and no copy of the data.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from mcp import types
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.authentication import AuthenticationError

from gateway import credentials, metrics, results, tools, translate
from gateway.config import Settings
from gateway.ratelimit import RateLimiter
from gateway.translate import ToolError
from mirrortree import rpcstatus, tracing
from mirrortree.logs import REQUEST_ID_HEADER, new_request_id, request_id_var
from mirrortree.v1 import graph_pb2, graph_pb2_grpc
from mirrortree.validation import SHOWN_CHARS

log = logging.getLogger("gateway")
VERSION = "0.1.0"

INSTRUCTIONS = (
    "Story Graph answers 'how did we decide this, what changed, what holds now' from the "
    "user's reviewed work history, with evidence and honest unknowns. Search first, then get "
    "an object's context, then read a source when exact words matter. Every result states "
    "requested_scope, resolved_scope, revision, coverage, page and evidence. Cite what you "
    "use; treat 'unknown' as unknown, and a value left out as not known."
)

# Round-robin over every address the name resolves to, so several graph_service instances
# behind one DNS name (dns:///graph_service:50052) all take load.
CHANNEL_OPTIONS = [
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.max_receive_message_length", 8 * 1024 * 1024),
]


@dataclass
class GraphClient:
    """The gRPC channel to graph_service, created lazily inside the running event loop."""

    target: str
    timeout_s: float
    _channel: grpc.aio.Channel | None = None
    _stub: graph_pb2_grpc.StoryGraphStub | None = None

    @property
    def stub(self) -> graph_pb2_grpc.StoryGraphStub:
        if self._stub is None:
            self._channel = grpc.aio.insecure_channel(
                self.target, options=CHANNEL_OPTIONS, interceptors=tracing.client_interceptors()
            )
            self._stub = graph_pb2_grpc.StoryGraphStub(self._channel)
        return self._stub

    async def call(self, method: str, request: Any, token: str) -> Any:
        problem = credentials.token_problem(token)
        if problem is not None:
            raise credentials.failed(grpc.StatusCode.UNAUTHENTICATED, f"the token {problem}")
        metadata = [
            (REQUEST_ID_HEADER, request_id_var.get() or new_request_id()),
            ("authorization", f"Bearer {token}"),
        ]
        problem = credentials.metadata_problem(metadata)
        if problem is not None:
            raise credentials.failed(grpc.StatusCode.INVALID_ARGUMENT, problem)
        rpc = getattr(self.stub, method)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            call = rpc(request, timeout=self.timeout_s, metadata=metadata)
            return await credentials.await_rpc(call, self.timeout_s)
        except BaseException as exc:
            error = exc
            raise
        finally:
            metrics.record_rpc(method, error, time.perf_counter() - started)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
            self._stub = None


class GraphUnreachable(AuthenticationError):
    """The token could not be checked because graph_service did not answer: the HTTP app turns
    this into 503 (retry later), never 401, which would tell the client to drop a good token."""


@dataclass
class BindingVerifier:
    """Authenticates HTTP bearer tokens as runtime bindings via graph_service.

    Positive answers are cached briefly to spare one RPC per HTTP request; graph_service still
    re-checks the binding on every tool call, so the cache never widens access.
    """

    client: GraphClient
    ttl_s: float = 10.0
    grace_s: float = 300.0
    _cache: dict[bytes, tuple[float, AccessToken]] = field(default_factory=dict)

    async def verify_token(self, token: str) -> AccessToken | None:
        if credentials.token_problem(token) is not None:
            return None  # 401 at once: such a token was never issued
        key = hashlib.sha256(token.encode()).digest()
        cached = self._cache.get(key)
        now = time.monotonic()
        if cached and cached[0] > now:
            return cached[1]
        try:
            binding = await self.client.call(
                "ResolveBinding", graph_pb2.ResolveBindingRequest(token=token), token
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                self._cache.pop(key, None)
                return None
            log.warning("binding check failed", extra={"code": error.code().name})
            # graph_service is briefly unreachable: a token it recently accepted stays
            # accepted (every tool call is re-checked there anyway); any other is neither
            # accepted nor declared invalid, so the client keeps its credential and retries.
            if cached and cached[0] + self.grace_s > now:
                return cached[1]
            raise GraphUnreachable(
                "the story graph cannot check credentials right now; retry shortly"
            ) from None
        access = AccessToken(
            token=token,
            client_id=binding.binding_id,
            scopes=[],
            subject=binding.session_id,
            claims={"runtime": binding.runtime, "session_id": binding.session_id},
        )
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[key] = (now + self.ttl_s, access)
        return access


@dataclass
class AccessWatcher:
    """Whether the story-graph tools are on for each binding, as graph_service says (app,
    session switch, capability, runtime assignment), and `tools/list_changed` when it flips.

    Discovery asks graph_service afresh each time (never from a cache). Bindings seen recently
    are polled in the background; a flip publishes ToolsListChanged on the subscription bus,
    which reaches every open `subscriptions/listen` stream (2026-07-28 clients). Legacy clients
    have no stream here and see the change at their next tools/list; either way graph_service
    refuses calls while the tools are off.
    """

    client: GraphClient
    bus: InMemorySubscriptionBus
    poll_s: float
    forget_after_s: float = 600.0
    _known: dict[str, tuple[bool, float]] = field(default_factory=dict)  # token → (on, seen)
    # Legacy (2025-11-25) sessions told `tools.listChanged: true` at initialize (stdio), by
    # token: they have no listen stream, so a flip is sent to each session directly.
    _sessions: dict[str, list[ServerSession]] = field(default_factory=dict)

    def notify_session(self, token: str, session: ServerSession) -> None:
        """Send this legacy session `notifications/tools/list_changed` when token's tools flip."""
        sessions = self._sessions.setdefault(token, [])
        if not any(s is session for s in sessions):
            sessions.append(session)

    async def enabled(self, token: str) -> bool:
        """Fresh from graph_service; False for an unknown or revoked binding."""
        try:
            binding = await self.resolve(token)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                # Listing no tools is the answer, but an operator who set a wrong token needs
                # to see why.
                log.warning(
                    "binding refused: the token is unknown or revoked; no tools are listed",
                    extra={"token_sha256": hashlib.sha256(token.encode()).hexdigest()[:12]},
                )
                return False
            raise MCPError(
                types.INTERNAL_ERROR, "the story graph is unreachable; try again shortly"
            ) from None
        await self._record(token, binding.enabled, seen=time.monotonic())
        return bool(binding.enabled)

    async def resolve(self, token: str) -> graph_pb2.ResolveBindingResponse:
        response: graph_pb2.ResolveBindingResponse = await self.client.call(
            "ResolveBinding", graph_pb2.ResolveBindingRequest(token=token), token
        )
        return response

    async def _record(self, token: str, on: bool, seen: float) -> None:
        before = self._known.get(token)
        self._known[token] = (on, seen)
        if before is not None and before[0] != on:
            log.info("story-graph tools switched", extra={"enabled": on})
            await self.bus.publish(ToolsListChanged())
            for session in list(self._sessions.get(token, [])):
                try:
                    await session.send_tool_list_changed()
                except Exception:  # the connection is gone; forget it
                    self._sessions[token].remove(session)

    async def run(self) -> None:
        """Poll the recently seen bindings until cancelled."""
        while True:
            await asyncio.sleep(self.poll_s)
            now = time.monotonic()
            for token, (_, seen) in list(self._known.items()):
                if now - seen > self.forget_after_s:
                    self._known.pop(token, None)
                    continue
                try:
                    binding = await self.resolve(token)
                except grpc.aio.AioRpcError:
                    continue  # unreachable or revoked: graph_service refuses calls anyway
                await self._record(token, binding.enabled, seen)


REQUESTS: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]] = {
    tools.SEARCH: ("Search", translate.search_request),
    tools.GET_CONTEXT: ("GetContext", translate.get_context_request),
    tools.READ_SOURCE: ("ReadSource", translate.read_source_request),
}


def error_result(error: ToolError) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=error.as_text())], is_error=True
    )


def build_server(
    settings: Settings, client: GraphClient | None = None, *, legacy_list_changed: bool = False
) -> Server[GraphClient]:
    """The low-level MCP server; `settings.binding_token` serves stdio and in-memory use.

    legacy_list_changed: the transport tells legacy clients `tools.listChanged: true` (stdio
    does; see initialization_options), so the server must send them the notification.
    """
    graph = client or GraphClient(settings.graph_target, settings.call_timeout_s)
    bus = InMemorySubscriptionBus()
    watcher = AccessWatcher(graph, bus, settings.access_poll_s)
    limiter = RateLimiter(settings.rate_per_minute, settings.rate_burst)

    @asynccontextmanager
    async def lifespan(_: Server[GraphClient]) -> AsyncIterator[GraphClient]:
        polling = asyncio.create_task(watcher.run())
        try:
            yield graph
        finally:
            polling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await polling
            await graph.close()

    def caller_token() -> str:
        access = get_access_token()
        return access.token if access is not None else settings.binding_token

    async def list_tools(
        ctx: ServerRequestContext[GraphClient], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The three tools when every switch is on for this binding; none otherwise."""
        token = caller_token()
        on = bool(token) and await watcher.enabled(token)
        if token and legacy_list_changed and ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            watcher.notify_session(token, ctx.session)
        return types.ListToolsResult(tools=list(tools.TOOLS) if on else [])

    async def binding_of(token: str) -> graph_pb2.ResolveBindingResponse | None:
        """The binding behind a token (its project and granted scopes), or None if unknown."""
        try:
            return await watcher.resolve(token)
        except grpc.aio.AioRpcError:
            return None

    async def call_tool(
        ctx: ServerRequestContext[GraphClient], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        route = REQUESTS.get(params.name)
        if route is None:
            name = translate.bounded(params.name, SHOWN_CHARS)
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")
        method, build = route
        request_id = new_request_id()
        token_var = request_id_var.set(request_id)
        started = time.perf_counter()
        outcome = "ok"
        try:
            token = caller_token()
            if not token:
                raise ToolError("unauthenticated", "This connection has no runtime binding.")
            wait = limiter.take(token)
            if wait:
                raise ToolError(
                    "rate_limited",
                    f"Too many story-graph calls on this connection; retry after "
                    f"{math.ceil(wait)} s (retry_after_s={math.ceil(wait)}).",
                )
            arguments = dict(params.arguments or {})
            translate.check_arguments(params.name, arguments)
            request = translate.build_request(build, arguments)
            try:
                response = await ctx.lifespan_context.call(method, request, token)
            except grpc.aio.AioRpcError as error:
                failure = rpcstatus.describe(error)
                next_step = ""
                if failure.reason in ("scope_required", "scope_mismatch"):
                    next_step = translate.scope_next_step(failure, await binding_of(token))
                raise translate.tool_error_from_rpc(failure, next_step) from None
            data = results.result_json(response)
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        type="text",
                        text=json.dumps(data, ensure_ascii=False, separators=(",", ":")),
                    )
                ],
                structured_content=data,
            )
        except ToolError as error:
            outcome = error.code
            return error_result(error)
        except BaseException as error:
            # The SDK answers -32603 (or the call was cancelled); the log says which.
            outcome = "cancelled" if isinstance(error, asyncio.CancelledError) else "internal_error"
            raise
        finally:
            elapsed = time.perf_counter() - started
            metrics.TOOL_CALLS.labels(params.name, outcome).inc()
            metrics.TOOL_LATENCY.labels(params.name).observe(elapsed)
            log.info(
                "tool call",
                extra={
                    "tool": params.name,
                    "outcome": outcome,
                    "duration_ms": round(elapsed * 1000, 2),
                },
            )
            request_id_var.reset(token_var)

    return Server(
        tools.SERVER_NAME,
        version=VERSION,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=tools.input_schema,
        on_subscriptions_listen=ListenHandler(bus),
    )
