"""The read tier under real faults, with a primary and two streaming replicas: reads spread over
both; a read-your-writes token is served only where it has been replayed (replay paused with
pg_wal_replay_pause); a read without one goes to the replica within the lag bound of the
primary, and is refused when neither is; a replica's postmaster killed under read load costs no
INTERNAL answer, and the replica rejoins every time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import generate_latest

from devtools.pgcluster import faults, roles
from graph_service import app as graph_app
from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import graph_settings, replay_paused, unique, write_wal
from tests.faults.load import reading, search_request, wait_for
from tests.graph_service.test_replica_lag import refused_as_stale


@contextlib.asynccontextmanager
async def graph_stub(service) -> AsyncIterator[graph_pb2_grpc.StoryGraphStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
        yield graph_pb2_grpc.StoryGraphStub(channel)


async def write(faulty_tree, project: str) -> tree_pb2.CreateTreeResponse:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{faulty_tree.port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        response: tree_pb2.CreateTreeResponse = await stub.CreateTree(
            tree_pb2.CreateTreeRequest(
                idempotency_key=unique("k"), title="t", owner="o", project_id=project
            )
        )
        return response


def served(service) -> dict[str, int]:
    return {r.name: r.served for r in service.router.replicas}


async def test_two_replicas_under_load_each_serve_a_share(faulty_graph):
    before = served(faulty_graph)
    async with reading(faulty_graph.port, unique("p"), workers=6) as tally:
        await wait_for(lambda: tally.ok >= 400, 60, "400 reads")
    assert tally.bad() == {} and tally.ok == sum(tally.outcomes.values())
    shares = {name: count - before[name] for name, count in served(faulty_graph).items()}
    total = sum(shares.values())
    for name, count in shares.items():
        assert count >= total * 0.3, f"{name} served {count} of {total} reads: {shares}"
    metrics = generate_latest(faulty_graph.rpc.metrics.registry).decode()
    for name in shares:
        assert f'mirrortree_replica_up{{replica="{name}"}} 1.0' in metrics
        assert f'mirrortree_replica_reads_total{{replica="{name}"}}' in metrics
        assert f'mirrortree_replica_inflight_reads{{replica="{name}"}}' in metrics
        assert f'mirrortree_replica_lag_bytes{{replica="{name}"}}' in metrics


async def test_a_token_is_read_where_it_was_replayed_else_replica_lag_after_the_bound(
    faulty_cluster, faulty_tree, faulty_graph
):
    project = unique("p")
    first, second = faulty_cluster.replica_dsns
    async with graph_stub(faulty_graph) as stub, replay_paused(first):
        written = await write(faulty_tree, project)
        before = served(faulty_graph)
        for _ in range(10):
            await stub.Search(search_request(project, written.consistency))
        after = served(faulty_graph)
        # Only the replica that replays serves the token.
        assert after["replica1"] - before["replica1"] == 10, (before, after)
        assert after["replica0"] == before["replica0"]

        async with replay_paused(second) as replica:
            written = await write(faulty_tree, project)
            call = stub.Search(search_request(project, written.consistency))
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            failure = describe(caught.value)
            assert (failure.code, failure.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "consistency_timeout",
            )
            assert failure.metadata["lsn"] == written.consistency.lsn
            # Resumed while a read waits: that read is served.
            waiting = asyncio.ensure_future(
                stub.Search(search_request(project, written.consistency))
            )
            await asyncio.sleep(0.1)
            assert not waiting.done()
            await replica.execute("SELECT pg_wal_replay_resume()")
            await waiting


async def test_a_read_goes_to_the_replica_within_the_lag_bound_and_is_refused_when_none_is(
    faulty_cluster, faulty_tree
):
    bound = 64 * 1024
    project = unique("p")
    await write(faulty_tree, project)
    first, second = faulty_cluster.replica_dsns
    service = await graph_app.start(
        graph_settings(
            faulty_cluster,
            replica_dsns=tuple(roles.reader_dsn(dsn) for dsn in faulty_cluster.replica_dsns),
            health_interval_ms=50,
            consistency_wait_ms=300,
            max_lag_bytes=bound,
        )
    )
    router = service.router
    replica0, replica1 = router.replicas
    try:
        async with graph_stub(service) as stub:
            await wait_for(lambda: all(map(router.eligible, router.replicas)), 5, "both eligible")
            async with replay_paused(first):
                await write_wal(faulty_cluster.primary_dsn, 4 * bound)
                await wait_for(
                    lambda: not router.eligible(replica0) and router.eligible(replica1),
                    5,
                    "the paused replica out, the other in",
                )
                before = served(service)
                for _ in range(10):
                    await stub.Search(search_request(project))
                after = served(service)
                assert after["replica1"] - before["replica1"] == 10, (before, after)
                assert after["replica0"] == before["replica0"]

                async with replay_paused(second):
                    await write_wal(faulty_cluster.primary_dsn, 4 * bound)
                    await wait_for(
                        lambda: replica1.lag_bytes > bound, 5, "the second replica behind too"
                    )
                    stale = await refused_as_stale(stub, project)
                    lags = dict(p.split("=") for p in stale["lag_bytes"].split(","))
                    assert set(lags) == {"replica0", "replica1"}
                    assert all(int(lag) > bound for lag in lags.values()), lags
            await wait_for(lambda: all(map(router.eligible, router.replicas)), 5, "both back")
            await stub.Search(search_request(project))
    finally:
        await service.stop()


@pytest.mark.timeout(240)
async def test_a_replica_killed_under_read_load_rejoins_every_time_without_internal(
    faulty_config, faulty_graph
):
    victim = faulty_graph.router.replicas[0]  # the server called "replica"
    async with reading(faulty_graph.port, unique("p"), workers=6) as tally:
        await wait_for(lambda: tally.ok >= 50, 30, "reads before the first kill")
        for how in ("sigkill", "immediate", "fast", "sigkill"):
            await asyncio.to_thread(faults.take_down, faulty_config, "replica", how)
            down_at = tally.ok
            # Reads go on, on the other replica.
            await wait_for(lambda at=down_at: tally.ok >= at + 50, 30, f"reads after a {how} stop")
            await wait_for(lambda: not victim.healthy, 10, f"the replica marked down ({how})")
            await asyncio.to_thread(faults.restart, faulty_config, "replica")
            rejoined_at = victim.served
            await wait_for(
                lambda at=rejoined_at: victim.healthy and victim.served >= at + 20,
                15,
                f"the replica serving again after a {how} stop",
            )
    # In-flight reads on the dead replica failed over or answered UNAVAILABLE; none INTERNAL.
    assert tally.bad() == {}, tally.outcomes
    assert tally.ok > 400
