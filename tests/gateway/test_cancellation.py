"""A cancelled tool call cancels the gRPC call and leaves the gateway serving the next one."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import asyncpg
import pytest

from tests.gateway.harness import in_memory, stdio_gateway
from tests.gateway.test_tools import bound_project


async def block_replica_reads(cluster: Any) -> asyncpg.Connection:
    """Hold an ACCESS EXCLUSIVE lock on graph_objects on the primary, once every replica has
    replayed it.

    Hot standbys replay that lock, so replica queries on the table wait until it is released:
    a real, slow read without any fake server.
    """
    holder = await asyncpg.connect(cluster.primary_dsn)
    await holder.execute("BEGIN; LOCK TABLE graph_objects IN ACCESS EXCLUSIVE MODE")
    # A committed write from another session flushes WAL, shipping the lock record.
    other = await asyncpg.connect(cluster.primary_dsn)
    try:
        await other.execute("CREATE TEMP TABLE nudge (x int)")  # catalog rows are WAL-logged
        shipped = await other.fetchval("SELECT pg_current_wal_lsn()")
    finally:
        await other.close()
    # A read sent before a replica replays the lock would not wait: the test would race.
    for dsn in cluster.replica_dsns or (cluster.replica_dsn,):
        replica = await asyncpg.connect(dsn)
        try:
            with anyio.fail_after(10):
                for _ in range(1000):
                    if await replica.fetchval(
                        "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", shipped
                    ):
                        break
                    await anyio.sleep(0.01)
        finally:
            await replica.close()
    return holder


async def waiting_replica_queries(replica_dsn: str, within_s: float = 3.0) -> list[str]:
    """Queries still running on the replica against graph_objects, after a grace period."""
    conn = await asyncpg.connect(replica_dsn)
    try:
        deadline = anyio.current_time() + within_s
        while True:
            rows = await conn.fetch(
                "SELECT query FROM pg_stat_activity WHERE state = 'active' "
                "AND query ILIKE '%graph_objects%' AND pid <> pg_backend_pid()"
            )
            if not rows or anyio.current_time() > deadline:
                return [r["query"][:80] for r in rows]
            await anyio.sleep(0.1)
    finally:
        await conn.close()


@pytest.mark.parametrize("transport", ["in_memory", "stdio"])
async def test_a_cancelled_call_leaves_the_gateway_serving(
    cluster, tree_stub, graph_stub, graph_service, transport
):
    token, _ = await bound_project(tree_stub, graph_stub, "Cancellation survives")
    connect = in_memory if transport == "in_memory" else stdio_gateway
    metrics = graph_service.rpc.metrics.registry
    labels = {"service": "graph_service", "method": "Search", "code": "CANCELLED"}
    cancelled_before = metrics.get_sample_value("mirrortree_rpc_total", labels) or 0
    async with connect(graph_service.port, token) as client:
        holder = await block_replica_reads(cluster)
        try:
            with anyio.move_on_after(1.0) as scope:
                await client.call_tool("story_graph_search", {"query": "survives"})
            assert scope.cancelled_caught, "the search should have been blocked by the lock"
            # The SQL query on the replica was cancelled too, while the lock is still held.
            assert await waiting_replica_queries(cluster.replica_dsn) == []
        finally:
            await holder.execute("ROLLBACK")
            await holder.close()
        result = await client.call_tool("story_graph_search", {"query": "survives"})
    assert not result.is_error, result.content
    assert [h["ref"]["id"] for h in result.structured_content["hits"]] == ["d1"]
    # The gRPC call itself was cancelled (and with it the replica query), not left running.
    assert (metrics.get_sample_value("mirrortree_rpc_total", labels) or 0) == cancelled_before + 1


class ToolCallLog(logging.Handler):
    """Collects the gateway's "tool call" records and signals the first one."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []
        self.logged = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == "tool call":
            self.records.append(record)
            self.logged.set()


async def test_the_log_says_a_cancelled_call_was_cancelled(
    cluster, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Logged truthfully")
    handler = ToolCallLog()
    gateway_log = logging.getLogger("gateway")
    level = gateway_log.level
    gateway_log.addHandler(handler)
    gateway_log.setLevel(logging.INFO)
    try:
        async with in_memory(graph_service.port, token) as client:
            holder = await block_replica_reads(cluster)
            try:
                with anyio.move_on_after(1.0):
                    await client.call_tool("story_graph_search", {"query": "truthfully"})
                with anyio.fail_after(5):
                    await handler.logged.wait()
            finally:
                await holder.execute("ROLLBACK")
                await holder.close()
    finally:
        gateway_log.removeHandler(handler)
        gateway_log.setLevel(level)
    [logged] = handler.records
    assert logged.outcome == "cancelled"  # type: ignore[attr-defined]
