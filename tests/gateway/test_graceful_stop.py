"""A graceful stop of the gateway, as SIGTERM starts it in `python -m gateway` (uvicorn): it
stops serving at once (/healthz answers 503, or the port takes no connection), a new MCP
request is refused, and a tool call in flight finishes within the grace period with its result
reaching the client, in both protocol eras; the streams that never end by themselves do not hold
the stop up. A call that outlasts the grace period is cut off and the process exits."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from typing import Any

import asyncpg
import httpx2
import pytest
from mcp import MCPError
from mcp.client.subscriptions import SubscriptionLost

from tests.gateway.harness import GatewayProcess, gateway_process, http_client
from tests.gateway.test_cancellation import block_replica_reads
from tests.gateway.test_tools import bound_project

GRACE_S = 20.0


def grace(seconds: float) -> dict[str, str]:
    return {"MIRRORTREE_GATEWAY_SHUTDOWN_GRACE_MS": str(int(seconds * 1000))}


async def not_serving_soon(gateway: GatewayProcess) -> float:
    """Seconds until /healthz stops saying 200: it answers 503, or (once the gateway takes no
    new connection) cannot be asked (fails after 2 s)."""
    began = time.monotonic()
    while time.monotonic() - began < 2:
        async with httpx2.AsyncClient(timeout=0.5) as fresh:
            try:
                answer = await fresh.get(gateway.healthz)
            except httpx2.TransportError:
                return time.monotonic() - began
        if answer.status_code == 503:
            return time.monotonic() - began
        assert answer.status_code == 200, answer.text
        await asyncio.sleep(0.01)
    pytest.fail("/healthz still said 200 2 s after the stop")


async def assert_refused(gateway: GatewayProcess, token: str) -> None:
    """A new MCP request finds no connection, or is answered 503."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
    }
    request = {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}
    async with httpx2.AsyncClient(timeout=2) as fresh:
        try:
            answer = await fresh.post(gateway.url, headers=headers, json=request)
        except httpx2.TransportError:
            return
    assert answer.status_code == 503, answer.text


async def search_waiting_on_replica(cluster: Any) -> None:
    """Returns once a replica runs a query waiting for the lock block_replica_reads holds:
    the search has reached the database, so the stop begins with the call in flight."""
    dsns = cluster.replica_dsns or (cluster.replica_dsn,)
    replicas = [await asyncpg.connect(dsn) for dsn in dsns]
    try:
        for _ in range(1000):
            for replica in replicas:
                if await replica.fetchval(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE state = 'active' AND wait_event_type = 'Lock'"
                ):
                    return
            await asyncio.sleep(0.01)
        pytest.fail("no search reached a replica")
    finally:
        for replica in replicas:
            await replica.close()


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_stopping_gateway_answers_the_call_in_flight_and_takes_no_new_one(
    cluster, tree_stub, graph_stub, graph_service, mode
):
    token, _ = await bound_project(tree_stub, graph_stub, "Drained whole")
    async with (
        gateway_process(graph_service.port, grace(GRACE_S)) as gateway,
        http_client(gateway.url, token, mode) as client,
        contextlib.AsyncExitStack() as streams,
    ):
        # A client lists the tools before calling one (the SDK reads their output schemas).
        await client.list_tools()
        subscription = None
        if mode != "legacy":
            # A 2026 change stream open across the stop, as a legacy session's GET stream is.
            subscription = await streams.enter_async_context(client.listen(tools_list_changed=True))
        holder = await block_replica_reads(cluster)
        try:
            call = asyncio.create_task(client.call_tool("story_graph_search", {"query": "whole"}))
            await search_waiting_on_replica(cluster)

            gateway.process.send_signal(signal.SIGTERM)
            assert await not_serving_soon(gateway) < 1
            await assert_refused(gateway, token)
            # Well into the stop (sse_starlette, which ended SSE responses at a stop, looks
            # every 0.5 s), the call still waits for its read.
            await asyncio.sleep(1.5)
            assert not call.done()
        finally:
            await holder.execute("ROLLBACK")
            await holder.close()
        result = await asyncio.wait_for(call, GRACE_S)
        began = time.monotonic()
        await asyncio.wait_for(gateway.process.wait(), GRACE_S)
        # Drained: neither the call nor a stream left open holds the stop to the grace's end.
        assert time.monotonic() - began < 2
        if subscription is not None:
            # Ended as a dropped stream: the client listens again, to another instance.
            with pytest.raises(SubscriptionLost):
                await asyncio.wait_for(subscription.__anext__(), 5)

    assert not result.is_error, result.content
    assert [h["ref"]["id"] for h in result.structured_content["hits"]] == ["d1"]


async def test_a_call_outlasting_the_grace_period_is_cut_off_and_the_gateway_exits(
    cluster, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Cut off")
    grace_s = 1.0
    async with (
        gateway_process(graph_service.port, grace(grace_s)) as gateway,
        http_client(gateway.url, token) as client,
    ):
        await client.list_tools()
        holder = await block_replica_reads(cluster)
        try:
            call = asyncio.create_task(client.call_tool("story_graph_search", {"query": "cut"}))
            await search_waiting_on_replica(cluster)
            began = time.monotonic()
            gateway.process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(gateway.process.wait(), grace_s + 10)
            stopped_after = time.monotonic() - began
        finally:
            await holder.execute("ROLLBACK")
            await holder.close()
        with pytest.raises(MCPError):
            await asyncio.wait_for(call, 10)
    assert grace_s <= stopped_after < grace_s + 3
