"""Health checking, reflection, metrics and request ids carried from gateway to services."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging

import asyncpg
import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from mirrortree import logs
from mirrortree.healthcheck import check
from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2, tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.gateway.harness import in_memory
from tests.gateway.test_tools import bound_project
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings


async def test_both_services_report_serving(tree_service, graph_service):
    for port, name in (
        (tree_service.port, "mirrortree.v1.TreeService"),
        (graph_service.port, "mirrortree.v1.StoryGraph"),
    ):
        status = await asyncio.to_thread(check, f"127.0.0.1:{port}", name)
        assert status == "SERVING"


async def test_reflection_lists_the_services(tree_service, graph_service):
    for port, name in (
        (tree_service.port, "mirrortree.v1.TreeService"),
        (graph_service.port, "mirrortree.v1.StoryGraph"),
    ):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            responses = stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            )
            services = [s.name async for r in responses for s in r.list_services_response.service]
        assert name in services
        assert "grpc.health.v1.Health" in services


async def test_each_rpc_is_counted_by_method_and_code(graph_service, graph_stub):
    await graph_stub.Search(graph_pb2.SearchRequest(query="metrics", scope=project_scope(["p"])))
    value = graph_service.rpc.metrics.registry.get_sample_value(
        "mirrortree_rpc_total",
        {"service": "graph_service", "method": "Search", "code": "OK"},
    )
    assert value is not None and value >= 1


async def test_the_gateways_request_id_reaches_the_graph_service_logs(graph_service):
    buffer = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    logs.configure("info", buffer)

    def logged() -> list[dict[str, str]]:
        return [json.loads(line) for line in buffer.getvalue().splitlines()]

    def is_search_rpc(line: dict[str, str]) -> bool:
        return line["message"] == "rpc" and line["rpc"] == "Search"

    try:
        async with in_memory(graph_service.port, "mtb_unknown") as client:
            await client.call_tool("story_graph_search", {"query": unique("q")})
        # The service logs a refused call once its status is on the way to the client, which
        # can therefore see the answer first.
        for _ in range(500):
            if any(is_search_rpc(line) for line in logged()):
                break
            await asyncio.sleep(0.01)
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    lines = logged()
    tool_call = next(line for line in lines if line["message"] == "tool call")
    rpc = next(line for line in lines if is_search_rpc(line))
    assert tool_call["request_id"] and rpc["request_id"] == tool_call["request_id"]
    assert rpc["code"] == "UNAUTHENTICATED"


async def test_calls_clients_make_on_a_timer_log_at_debug_unless_they_fail(
    graph_service, graph_stub, tree_stub
):
    token, _ = await bound_project(tree_stub, graph_stub, "Polled")
    buffer = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    logs.configure("debug", buffer)
    try:
        await graph_stub.ResolveBinding(graph_pb2.ResolveBindingRequest(token=token))
        with contextlib.suppress(grpc.aio.AioRpcError):
            await graph_stub.ResolveBinding(graph_pb2.ResolveBindingRequest(token="mtb_unknown"))
        await graph_stub.Search(graph_pb2.SearchRequest(query="x", scope=project_scope(["p"])))
        for _ in range(500):  # each call is logged once its status is on the way
            if buffer.getvalue().count('"message": "rpc"') >= 3:
                break
            await asyncio.sleep(0.01)
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    levels = [
        (line["rpc"], line["code"], line["level"])
        for line in map(json.loads, buffer.getvalue().splitlines())
        if line["message"] == "rpc"
    ]
    assert levels == [
        ("ResolveBinding", "OK", "debug"),
        ("ResolveBinding", "UNAUTHENTICATED", "info"),
        ("Search", "OK", "info"),
    ]


async def test_a_write_that_loses_its_database_connection_is_unavailable_and_retried_safely(
    cluster,
):
    # Its own service with one connection, named so that only it is cut off: its write waits
    # on a lock, and its backend is terminated meanwhile, as a failover or a restart of the
    # primary would (a connection that was merely idle is replaced by the pool unnoticed).
    name = unique("cut-off")
    dsn = f"{cluster.primary_dsn}?application_name={name}"
    service = await tree_app.start(
        TreeSettings(dsn=dsn, listen="127.0.0.1:0", pool_min=1, pool_max=1)
    )
    admin = await asyncpg.connect(cluster.primary_dsn)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            stub = tree_pb2_grpc.TreeServiceStub(channel)
            request = tree_pb2.CreateTreeRequest(
                idempotency_key=unique("k"), title="t", owner="o", project_id="p"
            )
            async with admin.transaction():
                await admin.execute("LOCK TABLE trees IN ACCESS EXCLUSIVE MODE")
                call = asyncio.ensure_future(stub.CreateTree(request))
                for _ in range(500):
                    waiting = await admin.fetchval(
                        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 "
                        "AND wait_event_type = 'Lock'",
                        name,
                    )
                    if waiting:
                        break
                    await asyncio.sleep(0.01)
                assert waiting, "the write never waited on the lock"
                await admin.execute("SELECT pg_terminate_backend($1)", waiting)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await call
            failure = describe(caught.value)
            assert (failure.code, failure.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "database_unavailable",
            )
            assert "same idempotency key" in failure.message
            # The pool replaces the connection; the retry is applied once.
            created = await stub.CreateTree(request)
            replayed = await stub.CreateTree(request)
            assert replayed.tree.id == created.tree.id
    finally:
        await admin.close()
        await service.stop()
