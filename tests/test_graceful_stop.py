"""A graceful stop of each gRPC service, as SIGTERM starts it (mirrortree.server): health says
NOT_SERVING at once (then, as gRPC stops taking calls, refuses to be asked), a new call is
refused, and a call already in flight finishes within the grace period with its result — a bud
being streamed is sealed with every chunk, a read waiting for its replica to catch up answers."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from devtools.pgcluster import roles
from graph_service import app as graph_app
from mirrortree.protoscope import project_scope
from mirrortree.v1 import graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import graph_settings, replay_paused, unique
from tests.tree_service.helpers import ask, new_tree
from tests.tree_service.test_buds import Stream, chunk, open_message
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

GRACE_S = 20.0
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


# How a call that arrives once the server stopped taking new ones ends: refused, or held
# unanswered until the caller's deadline (gRPC may hold it while the server drains).
REFUSALS = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
}
PROBE_DEADLINE_S = 0.5


async def not_serving_soon(channel: grpc.aio.Channel) -> float:
    """Seconds until the server stops saying SERVING: its health says NOT_SERVING, or (once it
    takes no new call, health checks included) refuses the check (fails after 2 s)."""
    health = health_pb2_grpc.HealthStub(channel)
    began = time.monotonic()
    while time.monotonic() - began < 2:
        try:
            answer = await health.Check(
                health_pb2.HealthCheckRequest(service=""), timeout=PROBE_DEADLINE_S
            )
        except grpc.aio.AioRpcError as refusal:
            assert refusal.code() in REFUSALS
            return time.monotonic() - began
        if answer.status == NOT_SERVING:
            return time.monotonic() - began
        await asyncio.sleep(0.01)
    pytest.fail("health still said SERVING 2 s after the stop")


async def refused(call) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() in REFUSALS


async def test_a_stopping_tree_service_seals_its_streams_and_refuses_new_calls(
    cluster, tree_service, tree_stub
):
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),
            migration_dsn=cluster.primary_dsn,
            listen="127.0.0.1:0",
            shutdown_grace_s=GRACE_S,
        )
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        tree = await new_tree(stub)
        question = await ask(stub, tree.id)
        stream = Stream(stub)
        opened = (await stream.send(open_message(question.id))).opened
        await stream.send(chunk(1, "part one,"))

        stopping = asyncio.create_task(service.stop())
        assert await not_serving_soon(channel) < 1
        await refused(
            stub.GetTree(tree_pb2.GetTreeRequest(tree_id=tree.id), timeout=PROBE_DEADLINE_S)
        )
        await stream.send(chunk(2, " part two"))
        sealed = (await stream.send(tree_pb2.StreamAnswerRequest(complete={}))).sealed
        await stream.finish()
        began = time.monotonic()
        await stopping
        assert time.monotonic() - began < GRACE_S  # drained, not cut at the grace's end

    assert (sealed.answer_state, sealed.text) == (tree_pb2.SEALED, "part one, part two")
    kept = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=opened.id))).node
    assert (kept.answer_state, kept.text) == (tree_pb2.SEALED, "part one, part two")


async def test_a_stopping_graph_service_answers_the_read_in_flight_and_refuses_new_ones(
    cluster, graph_service, tree_stub
):
    service = await graph_app.start(graph_settings(cluster, shutdown_grace_s=GRACE_S))
    project = unique("drain")
    tree = await new_tree(tree_stub, project_id=project)
    replica = cluster.replica_dsns[0] if cluster.replica_dsns else cluster.replica_dsn
    async with (
        grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel,
        replay_paused(replica) as paused,
    ):
        stub = graph_pb2_grpc.StoryGraphStub(channel)
        # A write the paused replica has not replayed: a read asking to see it waits.
        written = await ask(tree_stub, tree.id, "written while the replica is paused")
        consistency = await tree_stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=unique("k"), session_id=tree.id, runtime="OpenCode"
            )
        )
        waiting = asyncio.ensure_future(
            stub.Search(
                graph_pb2.SearchRequest(
                    query="paused",
                    scope=project_scope([project]),
                    options=graph_pb2.ReadOptions(min_consistency=consistency.consistency),
                )
            )
        )
        await asyncio.sleep(0.3)
        assert not waiting.done()

        stopping = asyncio.create_task(service.stop())
        assert await not_serving_soon(channel) < 1
        await refused(
            stub.Search(
                graph_pb2.SearchRequest(query="x", scope=project_scope([project])),
                timeout=PROBE_DEADLINE_S,
            )
        )
        await paused.execute("SELECT pg_wal_replay_resume()")
        answered = await waiting
        await stopping

    # It answered once its replica had replayed the write it waited for.
    assert when(answered.basis.read_at) >= when(written.created_at)


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
