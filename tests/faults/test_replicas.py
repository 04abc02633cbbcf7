"""The read tier under real faults, with a primary and two streaming replicas: reads spread over
both; a read-your-writes token is served only where it has been replayed (replay paused with
pg_wal_replay_pause); a read without one goes to the replica within the lag bound of the
primary, and is refused when neither is; a replica cut from the primary (its WAL receiver
stopped) leaves the reads to the other once past the lag bound, or, with nothing written, once
past the grace, and takes them back when it reconnects; a replica's postmaster killed under
read load costs no INTERNAL answer, and the replica rejoins every time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest
from prometheus_client import generate_latest

from devtools.pgcluster import faults
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2, tree_pb2_grpc
from tests.conftest import graph_stub_of, own_graph_service, replay_paused, unique, write_wal
from tests.faults.load import reading, search_request, wait_for
from tests.graph_service.test_replica_lag import refused_as_stale


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


async def searches_served(
    service, stub, project: str, calls: int, token: common_pb2.ConsistencyToken | None = None
) -> dict[str, int]:
    """`calls` searches one after another: how many reads each replica answered meanwhile."""
    before = served(service)
    for _ in range(calls):
        await stub.Search(search_request(project, token))
    return {name: count - before[name] for name, count in served(service).items()}


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
    async with graph_stub_of(faulty_graph) as stub, replay_paused(first):
        written = await write(faulty_tree, project)
        # Only the replica that replays serves the token.
        shares = await searches_served(faulty_graph, stub, project, 10, written.consistency)
        assert shares == {"replica0": 0, "replica1": 10}, shares

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


@contextlib.asynccontextmanager
async def cut_from_primary(replica_dsn: str) -> AsyncIterator[None]:
    """Stop the replica's WAL receiver, the server itself staying up, until the block ends:
    an empty primary_conninfo (reloading a changed one restarts the receiver), then the
    cluster's own setting back."""
    conn = await asyncpg.connect(replica_dsn)
    try:
        await conn.execute("ALTER SYSTEM SET primary_conninfo = ''")
        await conn.execute("SELECT pg_reload_conf()")
        await wait_for_receiver(conn, streaming=False)
        yield
    finally:
        await conn.execute("ALTER SYSTEM RESET primary_conninfo")
        await conn.execute("SELECT pg_reload_conf()")
        await wait_for_receiver(conn, streaming=True)
        await conn.close()


async def wait_for_receiver(conn: asyncpg.Connection, *, streaming: bool) -> None:
    for _ in range(500):
        status = await conn.fetchval("SELECT status FROM pg_stat_wal_receiver")
        if (status == "streaming") == streaming:
            return
        await conn.execute("SELECT pg_sleep(0.02)")
    raise AssertionError(f"the WAL receiver {'streaming' if streaming else 'gone'} after 10 s")


@pytest.mark.parametrize(
    "fall_behind", [replay_paused, cut_from_primary], ids=["replay_paused", "cut_from_primary"]
)
async def test_a_replica_behind_past_the_bound_leaves_reads_to_the_other_until_both_are(
    faulty_cluster, faulty_tree, fall_behind
):
    """Behind by more than the bound — its replay paused, or its WAL receiver cut while the
    primary writes on — a replica takes no reads and the other takes them all; with both
    behind a read is refused for the lag of each; caught up, both share the reads again."""
    bound = 64 * 1024
    project = unique("p")
    await write(faulty_tree, project)
    first, second = faulty_cluster.replica_dsns
    async with (
        own_graph_service(
            faulty_cluster,
            health_interval_ms=50,
            consistency_wait_ms=300,
            max_lag_bytes=bound,
            primary_grace_ms=60_000,  # so that here only the lag takes a cut replica out
        ) as service,
        graph_stub_of(service) as stub,
    ):
        router = service.router
        replica0, replica1 = router.replicas
        await wait_for(lambda: all(map(router.eligible, router.replicas)), 5, "both eligible")
        async with fall_behind(first):
            await write_wal(faulty_cluster.primary_dsn, 4 * bound)
            await wait_for(
                lambda: not router.eligible(replica0) and router.eligible(replica1),
                5,
                "the replica behind out, the other in",
            )
            assert replica0.healthy and replica0.lag_bytes > bound
            shares = await searches_served(service, stub, project, 10)
            assert shares == {"replica0": 0, "replica1": 10}, shares

            async with replay_paused(second):
                await write_wal(faulty_cluster.primary_dsn, 4 * bound)
                await wait_for(
                    lambda: replica1.lag_bytes > bound, 5, "the second replica behind too"
                )
                stale = await refused_as_stale(stub, project)
                lags = dict(p.split("=") for p in stale["lag_bytes"].split(","))
                assert set(lags) == {"replica0", "replica1"}
                assert all(int(lag) > bound for lag in lags.values()), lags
                assert int(lags["replica0"]) > int(lags["replica1"]), lags

        await wait_for(lambda: all(map(router.eligible, router.replicas)), 10, "both back")
        shares = await searches_served(service, stub, project, 20)
        assert all(count >= 5 for count in shares.values()), shares


async def test_a_replica_cut_from_an_idle_primary_takes_no_reads_once_past_the_grace(
    faulty_cluster, faulty_tree
):
    project = unique("p")
    await write(faulty_tree, project)
    first, second = faulty_cluster.replica_dsns
    async with (
        own_graph_service(
            faulty_cluster, health_interval_ms=50, consistency_wait_ms=300, primary_grace_ms=500
        ) as service,
        graph_stub_of(service) as stub,
    ):
        router = service.router
        replica0, replica1 = router.replicas
        await wait_for(lambda: all(map(router.eligible, router.replicas)), 5, "both eligible")
        async with cut_from_primary(first):
            await wait_for(
                lambda: not router.eligible(replica0) and router.eligible(replica1),
                5,
                "the cut replica out, the other in",
            )
            # Nothing written shows it behind: only the lost connection takes it out.
            assert replica0.healthy and replica0.lag_bytes <= router.max_lag_bytes
            assert router.primary_unreachable_s is None
            shares = await searches_served(service, stub, project, 10)
            assert shares["replica1"] == 10, shares

            async with cut_from_primary(second):
                await wait_for(lambda: not router.eligible(replica1), 5, "both out")
                stale = await refused_as_stale(stub, project)
                cut = dict(p.split("=") for p in stale["cut_from_primary_s"].split(","))
                assert set(cut) == {"replica0", "replica1"}, stale
                assert stale["primary_grace_s"] == "0.5"
        await wait_for(lambda: all(map(router.eligible, router.replicas)), 10, "both back")
        await stub.Search(search_request(project))


async def test_with_no_primary_to_ask_a_cut_replica_serves_until_its_last_commit_is_too_old(
    faulty_cluster, faulty_tree
):
    """No primary DSN: a cut replica cannot be told from a primary that is down, so its last
    replayed commit decides, as when the primary does not answer — never a silent forever."""
    project = unique("p")
    first, _ = faulty_cluster.replica_dsns
    async with (
        own_graph_service(
            faulty_cluster,
            primary_dsn="",
            gate_dsn="",  # the switches from the replicas: no primary is known at all
            health_interval_ms=50,
            consistency_wait_ms=300,
            primary_grace_ms=300,
            max_replay_age_ms=3000,
        ) as service,
        graph_stub_of(service) as stub,
    ):
        router = service.router
        replica0, replica1 = router.replicas
        await wait_for(lambda: all(map(router.eligible, router.replicas)), 5, "both eligible")
        await write(faulty_tree, project)  # a fresh commit for the cut replica to hold
        await wait_for(lambda: router.replay_age(replica0) is not None, 5, "a commit seen")
        async with cut_from_primary(first):
            await wait_for(
                lambda: (router.cut_from_primary_s(replica0) or 0) > 0.3, 5, "cut past grace"
            )
            assert router.eligible(replica0), "a recent last commit keeps it in"
            await stub.Search(search_request(project))
            await wait_for(lambda: not router.eligible(replica0), 10, "its last commit too old")
            assert router.eligible(replica1)
            # The switches are read from the replicas too: more reads than searches.
            shares = await searches_served(service, stub, project, 5)
            assert shares["replica0"] == 0 and shares["replica1"] > 0, shares
        await wait_for(lambda: all(map(router.eligible, router.replicas)), 10, "both back")
