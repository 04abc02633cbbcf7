"""OpenTelemetry traces: an MCP tool call through gRPC to SQL, one trace across the services.

Off by default. MIRRORTREE_OTEL_EXPORTER chooses where finished spans go:
  none     no tracing at all (the SDK and the instrumentations are never imported)
  console  each span as JSON on stderr (development)
  otlp     OTLP over gRPC to OTEL_EXPORTER_OTLP_ENDPOINT (the `otlp` extra installs it)
The MCP SDK opens the tool call's span; the gRPC interceptors here carry the trace context
in the call's metadata (W3C traceparent) and open client and server spans; asyncpg's
instrumentation opens one span per statement under them.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger("mirrortree.tracing")

ENV_EXPORTER = "MIRRORTREE_OTEL_EXPORTER"
EXPORTERS = ("none", "console", "otlp")
# Called on a timer or by tools, never part of a request worth tracing.
UNTRACED_SERVICES = ("grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection")


class _State:
    provider: TracerProvider | None = None
    instrumentor: Any = None


_state = _State()


def exporter_from_env() -> str:
    """The configured exporter; a clear error for anything else."""
    name = os.environ.get(ENV_EXPORTER, "none").strip().lower() or "none"
    if name not in EXPORTERS:
        raise ValueError(f"{ENV_EXPORTER}={name!r}: use one of {', '.join(EXPORTERS)}")
    return name


def enabled() -> bool:
    return _state.provider is not None


def configure(
    service: str, exporter: str = "none", span_exporter: SpanExporter | None = None
) -> bool:
    """Turn tracing on for this process as `service` (once); whether it is on.
    `span_exporter` (tests) receives every span synchronously, whatever `exporter` says."""
    if enabled():
        return True
    if exporter not in EXPORTERS:
        raise ValueError(f"{ENV_EXPORTER}={exporter!r}: use one of {', '.join(EXPORTERS)}")
    if exporter == "none" and span_exporter is None:
        return False
    from opentelemetry import trace  # noqa: PLC0415 - imported only when tracing is on
    from opentelemetry.instrumentation.asyncpg import AsyncPGInstrumentor  # noqa: PLC0415
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import (  # noqa: PLC0415
        BatchSpanProcessor,
        SimpleSpanProcessor,
    )
    from opentelemetry.sdk.trace.sampling import ParentBased  # noqa: PLC0415

    provider = TracerProvider(
        resource=Resource.create({"service.name": service}),
        sampler=ParentBased(root=_without_lone_queries()),
    )
    if span_exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    elif exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # noqa: PLC0415

        # stderr, like the logs (a stdio gateway's stdout is the MCP wire), and like them one
        # JSON document per line, so a log collector reading the stream parses every span.
        console = ConsoleSpanExporter(out=sys.stderr, formatter=_span_line)
        provider.add_span_processor(BatchSpanProcessor(console))
    else:
        provider.add_span_processor(BatchSpanProcessor(_otlp_exporter()))
    trace.set_tracer_provider(provider)
    instrumentor = AsyncPGInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    _state.provider, _state.instrumentor = provider, instrumentor
    log.info("tracing on", extra={"exporter": exporter, "service": service})
    return True


def configure_from_env(service: str) -> bool:
    return configure(service, exporter_from_env())


def shutdown() -> None:
    """Flush and stop exporting; stop instrumenting new servers, channels and queries."""
    provider, instrumentor = _state.provider, _state.instrumentor
    _state.provider = _state.instrumentor = None
    if instrumentor is not None:
        instrumentor.uninstrument()
    if provider is not None:
        provider.shutdown()


def _span_line(span: ReadableSpan) -> str:
    """A span as one line of JSON (the exporter's default spreads it over many)."""
    line: str = span.to_json(indent=None)
    return line + "\n"


def _otlp_exporter() -> SpanExporter:
    try:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # noqa: PLC0415
            OTLPSpanExporter,
        )
    except ImportError:
        raise ValueError(
            f"{ENV_EXPORTER}=otlp needs the OTLP exporter: pip install 'mirrortree[otlp]'"
        ) from None
    exporter: SpanExporter = OTLPSpanExporter()  # endpoint etc. from the OTEL_EXPORTER_OTLP_* env
    return exporter


def _without_lone_queries() -> Any:
    """A root sampler that drops client spans outside any request (replica health checks,
    sweeps, the gateway polling bindings): each would be a one-span trace, many per second,
    telling nothing."""
    from opentelemetry.sdk.trace.sampling import (  # noqa: PLC0415
        ALWAYS_ON,
        Decision,
        Sampler,
        SamplingResult,
    )
    from opentelemetry.trace import SpanKind  # noqa: PLC0415

    class WithoutLoneClientSpans(Sampler):
        def should_sample(  # noqa: PLR0917 - the SDK's Sampler signature
            self,
            parent_context: Any,
            trace_id: int,
            name: str,
            kind: Any = None,
            attributes: Any = None,
            links: Any = None,
            trace_state: Any = None,
        ) -> SamplingResult:
            if kind == SpanKind.CLIENT:
                return SamplingResult(Decision.DROP)
            result: SamplingResult = ALWAYS_ON.should_sample(
                parent_context, trace_id, name, kind, attributes, links, trace_state
            )
            return result

        def get_description(self) -> str:
            return "WithoutLoneClientSpans"

    return WithoutLoneClientSpans()


def _untraced() -> Any:
    from opentelemetry.instrumentation.grpc import filters  # noqa: PLC0415

    return filters.negate(filters.any_of(*(filters.service_name(s) for s in UNTRACED_SERVICES)))


def server_interceptors() -> Sequence[Any]:
    """The interceptor to put first on a grpc.aio server (none while tracing is off)."""
    if not enabled():
        return ()
    from opentelemetry.instrumentation.grpc import aio_server_interceptor  # noqa: PLC0415

    return (aio_server_interceptor(tracer_provider=_state.provider, filter_=_untraced()),)


def client_interceptors() -> Sequence[Any]:
    """The interceptors for a grpc.aio channel (none while tracing is off)."""
    if not enabled():
        return ()
    from opentelemetry.instrumentation.grpc import aio_client_interceptors  # noqa: PLC0415

    return tuple(aio_client_interceptors(tracer_provider=_state.provider, filter_=_untraced()))
