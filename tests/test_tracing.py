"""OpenTelemetry traces: one trace from an MCP tool call through the gRPC client and server
spans to the SQL statements, collected in-process by the SDK's in-memory exporter; and
tracing off by default, without importing the SDK."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from devtools.pgcluster import roles
from graph_service import app as graph_app
from mirrortree import tracing
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tests.conftest import free_port, graph_settings, unique, uvicorn_serving
from tests.gateway.harness import in_memory
from tests.gateway.test_tools import bound_project
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings
from webview.app import build_app as build_webview
from webview.config import Settings as WebviewSettings

ROOT = Path(__file__).resolve().parent.parent
SEARCH = "/mirrortree.v1.StoryGraph/Search"


@pytest.fixture(scope="module")
def spans(graph_service) -> Iterator[InMemorySpanExporter]:
    # After the session's services started (they stay untraced); servers started from here
    # on get the tracing interceptor.
    exporter = InMemorySpanExporter()
    assert tracing.configure("mirrortree-test", span_exporter=exporter)
    yield exporter
    tracing.shutdown()


@pytest_asyncio.fixture(scope="module")
async def traced_graph(cluster, spans) -> AsyncIterator[graph_app.GraphService]:
    service = await graph_app.start(graph_settings(cluster))
    yield service
    await service.stop()


@pytest_asyncio.fixture(scope="module")
async def traced_tree(cluster, spans) -> AsyncIterator[tree_app.TreeService]:
    service = await tree_app.start(
        TreeSettings(dsn=roles.writer_dsn(cluster.primary_dsn), listen="127.0.0.1:0", migrate=False)
    )
    yield service
    await service.stop()


def ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[ReadableSpan]:
    chain = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        chain.append(span)
    return chain


def is_sql(span: ReadableSpan) -> bool:
    attributes = span.attributes or {}
    return "postgresql" in (attributes.get("db.system"), attributes.get("db.system.name"))


def one(spans: list[ReadableSpan]) -> ReadableSpan:
    assert len(spans) == 1, [s.name for s in spans]
    return spans[0]


async def test_a_tool_call_is_one_trace_through_grpc_to_sql(
    spans, traced_graph, tree_stub, graph_stub
):
    token, _ = await bound_project(tree_stub, graph_stub, "Traced decision")
    spans.clear()
    async with in_memory(traced_graph.port, token) as client:
        result = await client.call_tool("story_graph_search", {"query": "traced"})
    assert not result.is_error, result.content
    finished = list(spans.get_finished_spans())
    tool = one([s for s in finished if s.name == "tools/call story_graph_search"])
    assert tool.kind == SpanKind.SERVER
    assert tool.context is not None
    trace_id = tool.context.trace_id
    in_trace = [s for s in finished if s.context is not None and s.context.trace_id == trace_id]
    by_id = {s.context.span_id: s for s in in_trace if s.context is not None}

    sent = one([s for s in in_trace if s.name == SEARCH and s.kind == SpanKind.CLIENT])
    served = one([s for s in in_trace if s.name == SEARCH and s.kind == SpanKind.SERVER])
    assert tool in ancestors(sent, by_id)
    # Across the wire: the server span's parent is the client span, from the metadata.
    assert served.parent is not None and sent.context is not None
    assert served.parent.span_id == sent.context.span_id
    assert served.parent.is_remote
    statements = [s for s in in_trace if is_sql(s) and served in ancestors(s, by_id)]
    assert statements, [(s.name, s.attributes) for s in in_trace]
    for statement in statements:
        assert statement.kind == SpanKind.CLIENT
        assert statement.start_time is not None and served.end_time is not None
        # Started within the call; a read's transaction may end just after the answer is sent.
        assert statement.start_time <= served.end_time
    # Nothing of the call escaped into another trace.
    elsewhere = [
        s
        for s in finished
        if s.name == SEARCH and s.context is not None and s.context.trace_id != trace_id
    ]
    assert not elsewhere


async def test_a_write_to_tree_service_is_traced_to_its_sql(spans, traced_tree):
    tracer = trace.get_tracer("tests")
    spans.clear()
    async with grpc.aio.insecure_channel(
        f"127.0.0.1:{traced_tree.port}", interceptors=tracing.client_interceptors()
    ) as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        with tracer.start_as_current_span("host app request") as parent:
            await stub.CreateTree(
                tree_pb2.CreateTreeRequest(
                    idempotency_key=unique("k"), title="Traced", owner="tester"
                )
            )
    trace_id = parent.get_span_context().trace_id
    finished = [
        s
        for s in spans.get_finished_spans()
        if s.context is not None and s.context.trace_id == trace_id
    ]
    by_id = {s.context.span_id: s for s in finished if s.context is not None}
    name = "/mirrortree.v1.TreeService/CreateTree"
    served = one([s for s in finished if s.name == name and s.kind == SpanKind.SERVER])
    statements = [s for s in finished if is_sql(s) and served in ancestors(s, by_id)]
    assert any(s.name == "INSERT" for s in statements), [s.name for s in statements]


async def test_queries_and_health_checks_outside_a_request_start_no_trace(spans, traced_graph):
    # The replicas' health checks ran all along (every 200 ms here): no lone statement spans.
    assert not [s for s in spans.get_finished_spans() if is_sql(s) and s.parent is None]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{traced_graph.port}") as channel:
        from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: PLC0415

        await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert not [s for s in spans.get_finished_spans() if "Health" in s.name]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MIRRORTREE_", "OTEL_"))}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_tracing_is_off_by_default_and_imports_no_sdk():
    result = run_python(
        "import sys\n"
        "from mirrortree import tracing\n"
        "import gateway.server, graph_service.app, tree_service.app\n"
        "on = tracing.configure_from_env('x')\n"
        "print(on, tracing.server_interceptors(), tracing.client_interceptors(),\n"
        "      sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk',\n"
        "             'opentelemetry.instrumentation'))))\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "()", "()", "[]"]


def test_the_console_exporter_writes_spans_to_stderr():
    result = run_python(
        "from opentelemetry import trace\n"
        "from mirrortree import tracing\n"
        "assert tracing.configure_from_env('console-test')\n"
        "with trace.get_tracer('t').start_as_current_span('hello'): pass\n"
        "tracing.shutdown()\n",
        MIRRORTREE_OTEL_EXPORTER="console",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    # One JSON document per line, as the logs are: a collector parses each line on its own.
    spans = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    (hello,) = [s for s in spans if s.get("name") == "hello"]
    assert hello["resource"]["attributes"]["service.name"] == "console-test"


@pytest.mark.parametrize("service", ["tree_service", "graph_service", "gateway"])
def test_an_unknown_exporter_is_refused_naming_the_variable(service):
    result = subprocess.run(
        [sys.executable, "-m", service],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("MIRRORTREE_")},
            "MIRRORTREE_OTEL_EXPORTER": "jaeger",
            "MIRRORTREE_TREE_DSN": "postgresql://127.0.0.1:1/x",
            "MIRRORTREE_GRAPH_REPLICA_DSNS": "postgresql://127.0.0.1:1/x",
            "MIRRORTREE_CURSOR_SECRET": "x" * 40,
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "MIRRORTREE_OTEL_EXPORTER='jaeger'" in result.stderr
    assert "none, console, otlp" in result.stderr


def test_otlp_without_its_extra_names_the_extra_to_install():
    result = run_python(
        "from mirrortree import tracing\n"
        "try:\n"
        "    import opentelemetry.exporter.otlp.proto.grpc  # noqa: F401\n"
        "    print('installed')\n"
        "except ImportError:\n"
        "    try:\n"
        "        tracing.configure('x', 'otlp')\n"
        "    except ValueError as error:\n"
        "        print(error)\n"
    )
    assert result.returncode == 0, result.stderr
    if result.stdout.strip() == "installed":
        pytest.skip("the otlp extra is installed here")
    assert "pip install 'mirrortree[otlp]'" in result.stdout


async def test_a_web_view_page_is_one_trace_through_its_grpc_calls(
    spans, traced_tree, traced_graph, tree_stub
):
    tree = (
        await tree_stub.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="Traced page", owner="t")
        )
    ).tree
    bound = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=tree.id, runtime="OpenCode"
        )
    )
    port = free_port()
    settings = WebviewSettings(
        listen=f"127.0.0.1:{port}",
        tree_target=f"127.0.0.1:{traced_tree.port}",
        graph_target=f"127.0.0.1:{traced_graph.port}",
        binding_ttl_s=0.0,
    )
    async with uvicorn_serving(build_webview(settings), port):
        spans.clear()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/tree/{tree.id}")
        request.add_header("Authorization", f"Bearer {bound.token}")
        with await asyncio.to_thread(urllib.request.urlopen, request, timeout=10) as answer:
            assert answer.status == 200
    finished = list(spans.get_finished_spans())
    page = one([s for s in finished if s.name == "GET /tree/{tree_id}"])
    assert page.kind == SpanKind.SERVER and page.context is not None
    in_trace = [s for s in finished if s.context and s.context.trace_id == page.context.trace_id]
    served = [s for s in in_trace if s.kind == SpanKind.SERVER and "TreeService" in s.name]
    assert served and all(s.parent is not None and s.parent.is_remote for s in served)
