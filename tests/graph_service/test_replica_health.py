"""The replica monitor and the read tier's refusals, on the suite's own replica: a check that
fails in any way marks the replica down and the monitor goes on, taking it back as soon as it
answers; a consistency token beyond any WAL position is refused naming its field."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import asyncpg
import grpc
import pytest

from graph_service.errors import ReplicaUnavailable
from graph_service.replicas import Replica, ReplicaRouter
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2
from tests.faults.load import wait_for


async def read_one(conn) -> int:
    return int(await conn.fetchval("SELECT 1"))


def broken_position(sql: str) -> Callable[[Replica], Awaitable[asyncpg.Record]]:
    """A replica check that runs `sql` instead of asking the replica where it stands."""

    async def position(replica: Replica) -> asyncpg.Record:
        assert replica.pool is not None
        row: asyncpg.Record = await replica.pool.fetchrow(sql)
        return row

    return position


async def test_a_check_failing_in_an_unexpected_way_marks_the_replica_down_and_the_monitor_goes_on(
    cluster, monkeypatch
):
    router = ReplicaRouter((cluster.replica_dsn,), pool_max=2, health_interval_s=0.02)
    await router.start()
    try:
        (replica,) = router.replicas
        assert replica.healthy
        # Not a connection error: a statement the server refuses, then an answer the check
        # cannot read at all.
        for broken in ("SELECT 1/0 AS standby", "SELECT 'x' AS standby, 'y' AS unexpected"):
            # This router's checks only: the suite's graph_service checks the same replica.
            monkeypatch.setattr(router, "_position", broken_position(broken))
            await wait_for(lambda: not replica.healthy, 5, f"marked down after {broken!r}")
            with pytest.raises(ReplicaUnavailable):
                await router.run(read_one)
            monkeypatch.undo()
            await wait_for(lambda: replica.healthy, 5, f"back after {broken!r}")
            assert await router.run(read_one) == 1
        assert router._monitor is not None and not router._monitor.done()
    finally:
        await router.close()


@pytest.mark.parametrize("lsn", ["80000000/0", "FFFFFFFF/FFFFFFFF"])
async def test_a_token_beyond_every_wal_position_is_refused_naming_its_field(graph_stub, lsn):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="x",
                scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=["p"])),
                options=graph_pb2.ReadOptions(min_consistency=common_pb2.ConsistencyToken(lsn=lsn)),
            )
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["options.min_consistency.lsn"]
    assert "beyond the largest WAL position" in failure.violations[0].description


async def test_reads_wait_for_a_replica_that_comes_back_within_the_bound(cluster):
    """A token read arriving while the only replica is marked down fails at once with
    replica_unavailable (nothing to wait on); the monitor then takes it back."""
    router = ReplicaRouter((cluster.replica_dsn,), pool_max=2, health_interval_s=0.02)
    await router.start()
    try:
        (replica,) = router.replicas
        replica.healthy = False
        with pytest.raises(ReplicaUnavailable):
            await router.run(read_one, min_lsn="0/1")
        await wait_for(lambda: replica.healthy, 5, "the replica back in rotation")
        assert await router.run(read_one, min_lsn="0/1") == 1
    finally:
        await asyncio.sleep(0)
        await router.close()
