"""Prometheus metrics of the gateway: MCP tool calls and the gRPC calls it makes to
graph_service, in one registry per process, served at MIRRORTREE_GATEWAY_METRICS."""

from __future__ import annotations

import grpc
from prometheus_client import CollectorRegistry, Counter, Histogram

from mirrortree.server import LATENCY_BUCKETS

REGISTRY = CollectorRegistry()

TOOL_CALLS = Counter(
    "mirrortree_tool_calls",
    "MCP tool calls, by tool and outcome (ok, or the error code the model saw)",
    ["tool", "outcome"],
    registry=REGISTRY,
)
TOOL_LATENCY = Histogram(
    "mirrortree_tool_call_duration_seconds",
    "MCP tool call latency, by tool",
    ["tool"],
    registry=REGISTRY,
    buckets=LATENCY_BUCKETS,
)
GRAPH_CALLS = Counter(
    "mirrortree_gateway_rpc",
    "gRPC calls the gateway made to graph_service, by method and status code",
    ["method", "code"],
    registry=REGISTRY,
)
GRAPH_LATENCY = Histogram(
    "mirrortree_gateway_rpc_duration_seconds",
    "Latency of the gateway's gRPC calls to graph_service, by method",
    ["method"],
    registry=REGISTRY,
    buckets=LATENCY_BUCKETS,
)


def record_rpc(method: str, error: BaseException | None, elapsed: float) -> None:
    if error is None:
        code = "OK"
    elif isinstance(error, grpc.aio.AioRpcError):
        code = error.code().name
    else:
        code = "CANCELLED" if type(error).__name__ == "CancelledError" else "UNKNOWN"
    GRAPH_CALLS.labels(method, code).inc()
    GRAPH_LATENCY.labels(method).observe(elapsed)
