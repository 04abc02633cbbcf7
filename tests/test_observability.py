"""Every service's Prometheus endpoint, scraped over HTTP after real calls: per-RPC counts and
latency, errors by ErrorReason, pool usage, replica lag, bud and ingestion counters, and the
gateway's MCP tool calls and the web view's requests (the gateway and the web view run as
`python -m gateway` and `python -m webview`, configured by environment)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from devtools.pgcluster import roles
from graph_service import app as graph_app
from graph_service.config import Settings as GraphSettings
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import create_tree, free_port, graph_settings, unique
from tests.gateway.harness import http_client, tool_error
from tests.tree_service.purging import preview, purge_request, world
from tests.tree_service.reviews import scope_of
from tests.tree_service.test_buds import Stream, chunk, open_message, question_in_new_tree
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

ROOT = Path(__file__).resolve().parent.parent
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


# Straight to loopback, whatever proxy the environment names.
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def scrape(port: int) -> Samples:
    with LOOPBACK.open(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


async def scrape_after_refusal(port: int, method: str, before: Samples) -> Samples:
    """The metrics once they count one more refusal of `method` than `before` did: a call's
    metrics are recorded just after its status is sent, so its client can see the status
    first (waits at most 5 s)."""
    counted = refusals(before, method)
    deadline = time.monotonic() + 5
    while True:
        samples = await asyncio.to_thread(scrape, port)
        if refusals(samples, method) > counted or time.monotonic() > deadline:
            return samples
        await asyncio.sleep(0.02)


def refusals(samples: Samples, method: str) -> float:
    name = "mirrortree_rpc_errors_total"
    return sum(
        value(samples, name, **labels)
        for labels in series(samples, name)
        if labels["method"] == method
    )


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample's value, 0 when absent (a counter not yet incremented)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def series(samples: Samples, name: str) -> list[dict[str, str]]:
    return [dict(labels) for (sample, labels) in samples if sample == name]


@pytest_asyncio.fixture(scope="module")
async def tree(cluster, graph_service) -> AsyncIterator[tree_app.TreeService]:
    # graph_service (the session's) has migrated and switched the app on.
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),
            listen="127.0.0.1:0",
            migrate=False,
            metrics="127.0.0.1:0",
        )
    )
    yield service
    await service.stop()


@pytest_asyncio.fixture(scope="module")
async def graph(cluster, graph_service) -> AsyncIterator[graph_app.GraphService]:
    service = await graph_app.start(graph_settings(cluster, metrics="127.0.0.1:0"))
    yield service
    await service.stop()


def metrics_port(service: tree_app.TreeService | graph_app.GraphService) -> int:
    http = service.rpc.metrics.http
    assert http is not None, "the metrics endpoint is not served"
    return int(http.server_port)


@pytest_asyncio.fixture(scope="module")
async def tree_client(tree) -> AsyncIterator[tree_pb2_grpc.TreeServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tree.port}") as channel:
        yield tree_pb2_grpc.TreeServiceStub(channel)


@pytest_asyncio.fixture(scope="module")
async def graph_client(graph) -> AsyncIterator[graph_pb2_grpc.StoryGraphStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{graph.port}") as channel:
        yield graph_pb2_grpc.StoryGraphStub(channel)


@contextlib.contextmanager
def http_service(module: str, prefix: str, settings: dict[str, str]) -> Iterator[tuple[int, int]]:
    """`python -m module` with `settings` and its HTTP and metrics addresses (`prefix`_LISTEN,
    `prefix`_METRICS), once it answers /healthz; yields (its port, its metrics port)."""
    port, metrics = free_port(), free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MIRRORTREE_")},
        **settings,
        f"{prefix}_LISTEN": f"127.0.0.1:{port}",
        f"{prefix}_METRICS": f"127.0.0.1:{metrics}",
        "MIRRORTREE_LOG_LEVEL": "warning",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", module], cwd=ROOT, env=env, stdin=subprocess.DEVNULL
    )
    try:
        for _ in range(300):
            assert process.poll() is None, f"{module} exited"
            with contextlib.suppress(OSError):
                LOOPBACK.open(f"http://127.0.0.1:{port}/healthz", timeout=2).close()
                break
            subprocess.run(["sleep", "0.1"], check=True)
        yield port, metrics
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def gateway(graph) -> Iterator[tuple[str, int]]:
    """`python -m gateway` over HTTP with its metrics endpoint; yields (MCP URL, metrics port)."""
    target = {"MIRRORTREE_GATEWAY_GRAPH_TARGET": f"127.0.0.1:{graph.port}"}
    with http_service("gateway", "MIRRORTREE_GATEWAY", target) as (port, metrics):
        yield f"http://127.0.0.1:{port}/mcp", metrics


@pytest.fixture(scope="module")
def webview(tree, graph) -> Iterator[tuple[str, int]]:
    """`python -m webview` with its metrics endpoint; yields (its URL, metrics port)."""
    targets = {
        "MIRRORTREE_WEBVIEW_TREE_TARGET": f"127.0.0.1:{tree.port}",
        "MIRRORTREE_WEBVIEW_GRAPH_TARGET": f"127.0.0.1:{graph.port}",
    }
    with http_service("webview", "MIRRORTREE_WEBVIEW", targets) as (port, metrics):
        yield f"http://127.0.0.1:{port}", metrics


def fetch_status(url: str) -> int:
    try:
        with LOOPBACK.open(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code


async def test_the_web_view_counts_requests_by_route_template_and_status(webview):
    url, port = webview
    before = scrape(port)
    assert fetch_status(f"{url}/healthz") == 200
    assert fetch_status(f"{url}/tree/some-tree-id") == 401  # not signed in
    assert fetch_status(f"{url}/tree/another-tree-id") == 401
    assert fetch_status(f"{url}/no-such-page") == 404
    after = scrape(port)

    def delta(**labels: str) -> float:
        name = "mirrortree_webview_requests_total"
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta(route="/healthz", status="200") == 1
    assert delta(route="/tree/{tree_id}", status="401") == 2  # one series, whatever the id
    assert delta(route="unmatched", status="404") == 1
    assert not [s for s in series(after, "mirrortree_webview_requests_total") if "-id" in str(s)]
    assert value(after, "mirrortree_webview_request_duration_seconds_count", route="/healthz") >= 1


async def bound_review(tree_client, graph_client, objects: int) -> str:
    """A binding on a session in a fresh project holding `objects` decision events."""
    project = unique("proj")
    session = (await create_tree(tree_client, project_id=project)).tree
    binding = await tree_client.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="OpenCode"
        )
    )
    written = await tree_client.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
            phase="daily",
            review_generated_at="2026-10-02T01:00:00Z",
            events=[
                tree_pb2.EventInput(id=f"d{i}", kind=tree_pb2.DECISION, title=f"Metric {i}")
                for i in range(objects)
            ],
        )
    )
    options = graph_pb2.ReadOptions(min_consistency=written.consistency, session_id=session.id)
    await graph_client.Search(graph_pb2.SearchRequest(query="x", options=options))
    if objects:
        await graph_client.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=common_pb2.ObjectRef(type=common_pb2.EVENT, id="d0"), options=options
            )
        )
    return str(binding.token)


async def test_tree_service_counts_rpcs_errors_pools_buds_and_ingestion(
    tree, tree_client, graph_stub
):
    port = metrics_port(tree)
    before = scrape(port)
    # Two chunks then the client goes away: frozen (client_closed); two more sealed.
    question = await question_in_new_tree(tree_client)
    stream = Stream(tree_client)
    await stream.send(open_message(question.id))
    await stream.send(chunk(1, "a"))
    await stream.send(chunk(1, "a"))  # a re-send: acknowledged again, counted once
    await stream.send(chunk(2, "b"))
    await stream.finish()
    question = await question_in_new_tree(tree_client)
    stream = Stream(tree_client)
    await stream.send(open_message(question.id))
    await stream.send(chunk(1, "c"))
    await stream.send(chunk(2, "d"))
    await stream.send(
        tree_pb2.StreamAnswerRequest(complete=tree_pb2.StreamAnswerRequest.Complete())
    )
    await stream.close()
    await bound_review(tree_client, graph_stub, 3)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await tree_client.GetNode(tree_pb2.GetNodeRequest(node_id="not-a-node"))
    after = await scrape_after_refusal(port, "GetNode", before)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("mirrortree_bud_chunks_acknowledged_total") == 4
    assert delta("mirrortree_buds_ended_total", state="frozen", reason="client_closed") == 1
    assert delta("mirrortree_buds_ended_total", state="sealed", reason="") == 1
    assert delta("mirrortree_review_results_recorded_total") == 1
    assert delta("mirrortree_review_objects_ingested_total") == 3

    ok = {"service": "tree_service", "method": "RecordReview", "code": "OK"}
    assert delta("mirrortree_rpc_total", **ok) == 1
    assert delta("mirrortree_rpc_total", service="tree_service", method="StreamAnswer", code="OK")
    latency = {"service": "tree_service", "method": "RecordReview"}
    assert delta("mirrortree_rpc_duration_seconds_count", **latency) == 1
    assert delta("mirrortree_rpc_duration_seconds_sum", **latency) > 0
    code = refused.value.code().name
    errors = [
        labels
        for labels in series(after, "mirrortree_rpc_errors_total")
        if labels["method"] == "GetNode" and labels["code"] == code
    ]
    assert len(errors) == 1, errors
    assert errors[0]["reason"] not in {"", "none"}
    assert delta("mirrortree_rpc_errors_total", **errors[0]) == 1

    size = value(after, "mirrortree_db_pool_size", pool="primary")
    idle = value(after, "mirrortree_db_pool_idle", pool="primary")
    in_use = value(after, "mirrortree_db_pool_in_use", pool="primary")
    assert value(after, "mirrortree_db_pool_max", pool="primary") == TreeSettings.pool_max
    assert 1 <= size <= TreeSettings.pool_max
    assert in_use >= 0 and idle >= 0 and idle + in_use == size


async def test_graph_service_reports_reads_replica_lag_and_pools(tree_client, graph, graph_client):
    await bound_review(tree_client, graph_client, 1)
    before = scrape(metrics_port(graph))
    with pytest.raises(grpc.aio.AioRpcError):
        await graph_client.Search(graph_pb2.SearchRequest(query=""))
    after = await scrape_after_refusal(metrics_port(graph), "Search", before)
    searched = value(
        after, "mirrortree_rpc_total", service="graph_service", method="Search", code="OK"
    )
    assert searched >= 1
    refused = [
        labels
        for labels in series(after, "mirrortree_rpc_errors_total")
        if labels["method"] == "Search"
    ]
    assert refused and all(labels["reason"] != "none" for labels in refused), refused
    replicas = {labels["replica"] for labels in series(after, "mirrortree_replica_lag_bytes")}
    assert replicas == {f"replica{i}" for i in range(len(graph.router.replicas))}
    for replica in replicas:
        assert value(after, "mirrortree_replica_up", replica=replica) == 1
        assert value(after, "mirrortree_replica_lag_bytes", replica=replica) >= 0
    pools = {labels["pool"] for labels in series(after, "mirrortree_db_pool_size")}
    assert pools == replicas | {"gate"}
    for pool in pools:
        assert value(after, "mirrortree_db_pool_size", pool=pool) >= 1
        assert value(after, "mirrortree_db_pool_max", pool=pool) >= 1
    # The context read above left its neighbourhood in the cache, within the cache's bound.
    assert value(after, "mirrortree_graph_context_cache_objects") >= 1
    held = value(after, "mirrortree_graph_context_cache_bytes")
    assert 0 < held <= GraphSettings.context_cache_mb << 20


async def test_the_gateway_counts_mcp_tool_calls_by_outcome(
    tree_client, graph_client, gateway
) -> None:
    url, port = gateway
    token = await bound_review(tree_client, graph_client, 1)
    before = scrape(port)
    async with http_client(url, token) as client:
        found = await client.call_tool("story_graph_search", {"query": "metric"})
        refused = await client.call_tool("story_graph_search", {"query": "x", "as_of": "2026"})
    assert not found.is_error, found.content
    assert tool_error(refused)["code"] == "as_of_unsupported"
    after = scrape(port)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    tool = "story_graph_search"
    assert delta("mirrortree_tool_calls_total", tool=tool, outcome="ok") == 1
    assert delta("mirrortree_tool_calls_total", tool=tool, outcome="as_of_unsupported") == 1
    assert delta("mirrortree_tool_call_duration_seconds_count", tool=tool) == 2
    assert delta("mirrortree_gateway_rpc_total", method="Search", code="OK") == 1
    assert delta("mirrortree_gateway_rpc_duration_seconds_count", method="Search") == 1


DASHBOARD = ROOT / "deploy" / "grafana" / "mirrortree.json"
_METRIC = re.compile(r"\bmirrortree_[a-z0-9_]+\b")
_SUFFIXES = ("_bucket", "_count", "_sum", "_created", "_total")


def family(sample: str) -> str:
    for suffix in _SUFFIXES:
        if sample.endswith(suffix):
            return sample.removesuffix(suffix)
    return sample


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
    queries = []
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel
        assert panel["targets"], panel["title"]
        queries += [target["expr"] for target in panel["targets"]]
    return queries


async def test_the_dashboard_queries_only_exported_metrics_and_all_of_them(
    tree, tree_client, graph, graph_client, gateway, *, webview
):
    url, gateway_port = gateway
    webview_url, webview_port = webview
    assert fetch_status(f"{webview_url}/healthz") == 200
    token = await bound_review(tree_client, graph_client, 1)
    with pytest.raises(grpc.aio.AioRpcError):  # so that the error series exist
        await tree_client.GetNode(tree_pb2.GetNodeRequest(node_id="not-a-node"))
    async with http_client(url, token) as client:
        await client.call_tool("story_graph_search", {"query": "metric"})
    exported = {
        name
        for port in (metrics_port(tree), metrics_port(graph), gateway_port, webview_port)
        for name, _ in scrape(port)
        if name.startswith("mirrortree_")
    }
    queried = {name for expr in dashboard_queries() for name in _METRIC.findall(expr)}
    assert queried
    assert not queried - exported, f"the dashboard queries missing series {queried - exported}"
    shown = {family(name) for name in queried}
    assert not {family(n) for n in exported} - shown, "exported but not on the dashboard"


async def test_logs_and_metrics_carry_no_user_words(caplog, tree, tree_client, graph, graph_client):
    """A branch with a unique marker in its words is written, refused, read, purged and its
    grant revoked while every log record is kept: neither a log line (message, arguments,
    traceback) nor either service's metrics carry the marker."""
    caplog.set_level(logging.DEBUG)
    w = await world(tree_client)
    marker = w.secret
    with contextlib.suppress(grpc.aio.AioRpcError):  # refused: the parent is unknown
        await tree_client.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"), tree_id=w.tree_id, parent_id=w.root_id[::-1],
                text=marker,
            )
        )  # fmt: skip
    await graph_client.Search(graph_pb2.SearchRequest(query=marker, scope=scope_of(w.project)))
    shown = await preview(tree_client, w.branch_id)
    await tree_client.Purge(purge_request(w, shown.preview_token))
    logged = "\n".join(
        f"{r.getMessage()} {r.args!r} {r.exc_text or ''} {vars(r)!r}" for r in caplog.records
    )
    assert caplog.records and marker not in logged
    for port in (metrics_port(tree), metrics_port(graph)):
        with LOOPBACK.open(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            assert marker not in response.read().decode()
