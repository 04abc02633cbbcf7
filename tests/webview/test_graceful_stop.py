"""A graceful stop of the web view, as `python -m webview` runs it (uvicorn with a graceful
timeout): a page being answered when the stop begins is answered whole, and no new connection
is taken meanwhile."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request

from graph_service import app as graph_app
from mirrortree.v1 import tree_pb2
from tests.conftest import (
    create_tree,
    free_port,
    graph_settings,
    replay_paused,
    unique,
    uvicorn_serving,
    write_wal,
)
from tests.graph_service.test_replica_lag import BOUND
from webview.app import build_app
from webview.config import Settings


def fetch(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        status: int = answer.status
        return status


def connects(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


async def test_a_stopping_web_view_answers_the_page_in_flight_and_takes_no_new_one(
    cluster, tree_service, tree_stub, graph_service
):
    project = unique("drain")
    session = (await create_tree(tree_stub, project)).tree
    bound = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="OpenCode"
        )
    )
    replica = cluster.replica_dsns[0] if cluster.replica_dsns else cluster.replica_dsn
    # A graph_service that takes no read from a replica more than BOUND behind, and waits up
    # to 20 s for one to catch up: a page read through it waits while replay is paused.
    graph = await graph_app.start(
        graph_settings(
            cluster, health_interval_ms=50, max_lag_bytes=BOUND, consistency_wait_ms=20_000
        )
    )
    try:
        port = free_port()
        settings = Settings(
            listen=f"127.0.0.1:{port}",
            tree_target=f"127.0.0.1:{tree_service.port}",
            graph_target=f"127.0.0.1:{graph.port}",
            binding_ttl_s=0.0,
        )
        async with (
            uvicorn_serving(build_app(settings), port, timeout_graceful_shutdown=30) as server,
            replay_paused(replica) as paused,
        ):
            await write_wal(cluster.primary_dsn, 4 * BOUND)
            await asyncio.sleep(0.5)  # the monitor sees the replica fall behind
            page = asyncio.create_task(
                asyncio.to_thread(fetch, f"http://127.0.0.1:{port}/search?q=x", bound.token)
            )
            await asyncio.sleep(0.5)
            assert not page.done()  # waiting for a fresh replica

            server.should_exit = True
            for _ in range(100):
                if not connects(port):
                    break
                await asyncio.sleep(0.02)
            assert not connects(port)  # no new connection while it drains
            await paused.execute("SELECT pg_wal_replay_resume()")
            assert await page == 200
    finally:
        await graph.stop()
