"""Limits that protect the services from one greedy client: a call past a service's
concurrent-call limit is refused RESOURCE_EXHAUSTED `overloaded` at once (health checks still
answer), a binding past its call rate gets the tool error `rate_limited` with the time to wait,
and graph_service refuses reads without a binding unless anonymous reads are switched on."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from mcp import Client

from devtools.pgcluster import roles
from gateway.ratelimit import RateLimiter
from gateway.server import build_server
from graph_service import app as graph_app
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import graph_settings, unique
from tests.gateway.harness import settings_for, tool_error
from tests.gateway.test_tools import bound_project
from tests.tree_service.helpers import ask, new_tree
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

Req = tree_pb2.StreamAnswerRequest


async def test_a_call_past_the_concurrency_limit_is_refused_overloaded(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id, "Which plan?")
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),
            migrate=False,
            listen="127.0.0.1:0",
            max_concurrent_rpcs=1,
        )
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            stub = tree_pb2_grpc.TreeServiceStub(channel)
            stream = stub.StreamAnswer(timeout=30)  # holds the one slot while open
            await stream.write(
                Req(open=Req.Open(idempotency_key=unique("k"), question_id=question.id))
            )
            assert (await stream.read()).HasField("opened")
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.GetSettings(tree_pb2.GetSettingsRequest(), timeout=10)
            failure = describe(caught.value)
            assert failure.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert failure.reason == "overloaded"
            assert failure.metadata["retry_after_ms"]
            health = health_pb2_grpc.HealthStub(channel)
            checked = await health.Check(health_pb2.HealthCheckRequest(), timeout=10)
            assert checked.status == health_pb2.HealthCheckResponse.SERVING
            await stream.done_writing()
            while await stream.read() is not grpc.aio.EOF:
                pass
            # The slot is free again.
            await stub.GetSettings(tree_pb2.GetSettingsRequest(), timeout=10)
    finally:
        await service.stop()


def test_a_bucket_refills_at_its_rate_and_says_how_long_to_wait():
    limiter = RateLimiter(per_minute=60, burst=2)
    assert limiter.take("t", now=0.0) == 0
    assert limiter.take("t", now=0.0) == 0
    assert limiter.take("t", now=0.0) == pytest.approx(1.0)
    assert limiter.take("other", now=0.0) == 0  # per binding
    assert limiter.take("t", now=1.0) == 0  # one call a second refilled


async def test_a_binding_past_its_rate_gets_rate_limited_with_a_retry_time(
    tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Rate limited plan")
    settings = settings_for(graph_service.port, token, rate_per_minute=1, rate_burst=2)
    async with Client(build_server(settings), cache=None) as client:
        results = [
            await client.call_tool("story_graph_search", {"query": "plan"}) for _ in range(3)
        ]
    assert [r.is_error for r in results] == [False, False, True]
    error = tool_error(results[2])
    assert error["code"] == "rate_limited"
    assert "retry_after_s=" in error["message"]
    assert error["next_step"]


async def test_graph_service_refuses_reads_without_a_binding_unless_configured(
    cluster, tree_stub, graph_stub, graph_service
):
    token, project = await bound_project(tree_stub, graph_stub, "Anonymous plan")
    request = graph_pb2.SearchRequest(
        query="plan",
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
    )
    service = await graph_app.start(graph_settings(cluster, anonymous_reads=False))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            stub = graph_pb2_grpc.StoryGraphStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Search(request, timeout=30)
            failure = describe(caught.value)
            assert failure.code == grpc.StatusCode.UNAUTHENTICATED
            assert failure.reason == "unauthenticated"
            bound = await stub.Search(
                request, metadata=(("authorization", f"Bearer {token}"),), timeout=30
            )
            assert bound.hits
    finally:
        await service.stop()
    # The suite's own graph_service is configured for anonymous reads.
    assert (await graph_stub.Search(request, timeout=30)).hits
