"""gRPC server plumbing shared by tree_service and graph_service.

Every server gets: a request-id/logging/metrics interceptor, grpc.health.v1 health checking,
server reflection, optional Prometheus metrics over HTTP, and graceful shutdown:
SIGTERM/SIGINT → health NOT_SERVING → `server.stop(grace)` → the service's own cleanup.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIServer

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from mirrortree import dbloss, handlers, rpcstatus, tracing
from mirrortree.logs import REQUEST_ID_HEADER, new_request_id, request_id_var

log = logging.getLogger("mirrortree.server")

MAX_MESSAGE_BYTES = 8 * 1024 * 1024

# The latency histograms' buckets (seconds, 1 ms to 10 s), the same in every service so that
# the dashboard reads their quantiles alike.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

# Python collects its youngest generation every 700 net allocations — every request or two
# here. A serving process keeps what start-up made for its whole life, so start-up's objects
# are frozen out of collection and the youngest generation runs less often (the gain on
# story-graph p99 is in docs/performance-history.md). The two older generations then hold
# only what outlived a collection and are collected every few times the youngest is: cycles
# in flight at a collection (a refused call leaves about a hundred objects in cycles) would
# otherwise wait hours there, pinning memory (docs/load.md).
SERVING_GC_THRESHOLDS = (50_000, 1, 1)


def tune_gc_for_serving() -> None:
    """Call once a service has started (see SERVING_GC_THRESHOLDS)."""
    gc.collect()
    gc.freeze()
    # Python runs a full collection only once what reached the oldest generation since the
    # last one exceeds a quarter of what that one kept: collecting again after the freeze
    # makes that a quarter of nothing, not of all start-up.
    gc.collect()
    gc.set_threshold(*SERVING_GC_THRESHOLDS)


@dataclass
class RpcMetrics:
    """Per-RPC Prometheus metrics, in a registry owned by one server."""

    registry: CollectorRegistry
    calls: Counter
    latency: Histogram
    errors: Counter
    http: WSGIServer | None = None  # the /metrics endpoint, once served

    @classmethod
    def create(cls, service: str) -> RpcMetrics:
        registry = CollectorRegistry()
        calls = Counter(
            "mirrortree_rpc_total",
            "RPCs served, by method and status code",
            ["service", "method", "code"],
            registry=registry,
        )
        latency = Histogram(
            "mirrortree_rpc_duration_seconds",
            "RPC latency, by method",
            ["service", "method"],
            registry=registry,
            buckets=LATENCY_BUCKETS,
        )
        errors = Counter(
            "mirrortree_rpc_errors",
            "RPCs that failed, by method, status code and ErrorReason (none: no reason given)",
            ["service", "method", "code", "reason"],
            registry=registry,
        )
        calls.labels(service, "", "OK")  # make the family visible before the first call
        return cls(registry, calls, latency, errors)


def _status_of(context: grpc.aio.ServicerContext[Any, Any], error: BaseException | None) -> str:
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if error is not None:
        return "UNKNOWN"
    return "OK"


@dataclass(frozen=True)
class _Undecodable:
    """Stands in for a request message that failed to parse (e.g. invalid UTF-8)."""

    error: str


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """Turn a parse failure into a value the handler wrapper can refuse with INVALID_ARGUMENT;
    left to grpc, it would surface as an opaque INTERNAL error."""
    if deserializer is None:
        return None

    def decode(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # protobuf raises DecodeError; anything else is just as bad
            return _Undecodable(str(exc) or type(exc).__name__)

    return decode


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], bad: _Undecodable) -> None:
    await rpcstatus.abort(
        context,
        grpc.StatusCode.INVALID_ARGUMENT,
        "invalid_argument",
        "the request is not a valid protobuf message for this method (for example, a string "
        f"field holds invalid UTF-8): {bad.error}",
        violations=[rpcstatus.FieldViolation("request", "cannot be parsed")],
    )


async def _checked(
    request: Any, streaming: bool, context: grpc.aio.ServicerContext[Any, Any]
) -> Any:
    if not streaming:
        if isinstance(request, _Undecodable):
            await _refuse(context, request)
        return request

    async def messages() -> AsyncIterator[Any]:
        async for message in request:
            if isinstance(message, _Undecodable):
                await _refuse(context, message)
            yield message

    return messages()


async def _conceal(
    exc: BaseException, context: grpc.aio.ServicerContext[Any, Any], request_id: str
) -> None:
    """A bug must not leak internals to the client: anything that is not already a gRPC
    status becomes INTERNAL with the request id to look up in the logs. A database that went
    away is UNAVAILABLE instead, which clients retry."""
    if isinstance(exc, (asyncio.CancelledError, grpc.aio.AbortError)) or not isinstance(
        exc, Exception
    ):
        return
    unknown = dbloss.outcome_unknown(exc)
    if unknown is not None:
        log.warning("write outcome unknown: %s", unknown.__cause__ or unknown)
        await rpcstatus.abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "outcome_unknown",
            "the database was lost while this write was committing, so it may or may not have "
            "been applied; retry it with the same idempotency key, which applies it at most once "
            f"(request id {request_id})",
        )
    lost = dbloss.database_lost(exc)
    if lost is not None:
        log.warning("database unavailable: %s: %s", type(lost).__name__, lost)
        await rpcstatus.abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            "database_unavailable",
            "the database cannot be reached right now; retry shortly (a write retried with the "
            f"same idempotency key is applied at most once; request id {request_id})",
        )
    log.error("unexpected error", exc_info=exc)
    await context.abort(
        grpc.StatusCode.INTERNAL,
        f"internal error; the service logged it under request id {request_id}",
    )


def _reset(token: contextvars.Token[str]) -> None:
    # A streaming handler abandoned by grpc is closed from another context, where the
    # token cannot be reset (the value dies with that context anyway).
    with contextlib.suppress(ValueError):
        request_id_var.reset(token)


class ObservabilityInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Binds the caller's request id (or a new one), logs each RPC once and records metrics."""

    def __init__(
        self, service: str, metrics: RpcMetrics, polled_methods: frozenset[str] = frozenset()
    ) -> None:
        self._service = service
        self._metrics = metrics
        # Methods clients call on a timer (health checks, the gateway re-checking bindings):
        # their successful calls are logged at debug, or they would drown the log.
        self._polled = polled_methods | {"Check", "Watch"}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        method = details.method.rsplit("/", 1)[-1]
        incoming = dict(details.invocation_metadata or ())
        request_id = str(incoming.get(REQUEST_ID_HEADER) or new_request_id())
        service, metrics = self._service, self._metrics
        polled = method in self._polled

        def observe(
            behavior: Callable[..., Any], streaming_request: bool, streaming_response: bool
        ) -> Callable[..., Any]:
            async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                token = request_id_var.set(request_id)
                rpcstatus.aborted_reason.set("")
                held = dbloss.start_call()
                started = time.perf_counter()
                error: BaseException | None = None
                try:
                    request = await _checked(request, streaming_request, context)
                    return await behavior(request, context)
                except BaseException as exc:
                    error = exc
                    await _conceal(exc, context, request_id)
                    raise
                finally:
                    _finish(context, started, error)
                    error = None  # its traceback holds this frame: no cycle left to collect
                    dbloss.end_call(held)
                    _reset(token)

            async def streaming(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                token = request_id_var.set(request_id)
                rpcstatus.aborted_reason.set("")
                held = dbloss.start_call()
                started = time.perf_counter()
                error: BaseException | None = None
                try:
                    request = await _checked(request, streaming_request, context)
                    async for item in behavior(request, context):
                        yield item
                except BaseException as exc:
                    error = exc
                    if not isinstance(exc, GeneratorExit):
                        await _conceal(exc, context, request_id)
                    raise
                finally:
                    _finish(context, started, error)
                    error = None  # its traceback holds this frame: no cycle left to collect
                    dbloss.end_call(held)
                    _reset(token)

            return streaming if streaming_response else unary

        def _finish(
            context: grpc.aio.ServicerContext[Any, Any],
            started: float,
            error: BaseException | None,
        ) -> None:
            elapsed = time.perf_counter() - started
            code = _status_of(context, error)
            metrics.calls.labels(service, method, code).inc()
            metrics.latency.labels(service, method).observe(elapsed)
            if code != "OK":
                reason = rpcstatus.aborted_reason.get() or "none"
                metrics.errors.labels(service, method, code, reason).inc()
            log.log(
                logging.DEBUG if polled and code == "OK" else logging.INFO,
                "rpc",
                extra={"rpc": method, "code": code, "duration_ms": round(elapsed * 1000, 2)},
            )

        return handlers.rewrap(handler, observe, _tolerant(handler.request_deserializer))


@dataclass
class RunningServer:
    """A started gRPC server with its health servicer and bound port."""

    server: grpc.aio.Server
    health: health.aio.HealthServicer
    port: int
    service_names: Sequence[str]
    metrics: RpcMetrics

    async def stop(self, grace: float = 5.0) -> None:
        """Drain: report NOT_SERVING, stop accepting RPCs, give in-flight ones `grace` s."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        if self.metrics.http is not None:
            await asyncio.to_thread(stop_http, self.metrics.http)
            self.metrics.http = None


async def start_server(
    *,
    service: str,
    listen: str,
    register: Callable[[grpc.aio.Server], None],
    service_names: Sequence[str],
    maximum_concurrent_rpcs: int | None = None,
    polled_methods: frozenset[str] = frozenset(),
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
) -> RunningServer:
    """Create, register and start an aio server on `listen` ("host:port"; port 0 = any).
    `polled_methods`: methods called on a timer, whose successful calls log at debug.
    `interceptors` run inside the observing one (callers, limits: mirrortree.callers/limits)."""
    metrics = RpcMetrics.create(service)
    server = grpc.aio.server(
        interceptors=[
            *tracing.server_interceptors(),  # first: the whole call runs inside its span
            ObservabilityInterceptor(service, metrics, polled_methods),
            *interceptors,
        ],
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ],
        maximum_concurrent_rpcs=maximum_concurrent_rpcs,
    )
    register(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            *service_names,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    port = server.add_insecure_port(listen)
    if port == 0:
        raise OSError(f"cannot listen on {listen}: address in use or not available")
    await server.start()
    for name in ("", *service_names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return RunningServer(server, health_servicer, port, service_names, metrics)


def serve_metrics(address: str, metrics: RpcMetrics) -> None:
    """Expose the server's metrics at http://address/metrics (a daemon thread); "" = off.
    Port 0 takes any free port: `metrics.http.server_port` tells which."""
    metrics.http = start_metrics_http(address, metrics.registry)


def start_metrics_http(address: str, registry: CollectorRegistry) -> WSGIServer | None:
    """Serve registry at http://address/metrics from a daemon thread; "" = off."""
    if not address:
        return None
    host, _, port = address.rpartition(":")
    server, _ = start_http_server(int(port), addr=host or "0.0.0.0", registry=registry)
    return server


def stop_http(server: WSGIServer) -> None:
    server.shutdown()
    server.server_close()


async def wait_for_shutdown_signal() -> None:
    """Return once SIGTERM or SIGINT arrives."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
