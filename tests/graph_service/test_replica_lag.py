"""Replica lag against the primary, and an honest read_at, on the suite's own replica: a replica
whose replay is paused while the primary writes on is refused for reads past the lag bound
(`consistency_timeout`, cause `replica_lag`) and taken back once it catches up; a read from it
says when its last replayed commit was made, not the time of the read; with the primary
unreachable, a replica whose last replayed commit grows older than the bound is refused too."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from datetime import datetime

import asyncpg
import grpc
import pytest

from graph_service.app import GraphService
from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2_grpc
from tests.conftest import (
    create_tree,
    free_port,
    graph_stub_of,
    own_graph_service,
    replay_paused,
    unique,
    write_wal,
)
from tests.faults.load import search_request, wait_for

# WAL the primary writes while replay is paused: four times the bound the tests set.
BOUND = 64 * 1024


def serving(cluster, **overrides: object) -> AbstractAsyncContextManager[GraphService]:
    """A graph_service of the test's own, checking its replica often (callers take the suite's
    `graph_service` fixture, which switches the tools on)."""
    return own_graph_service(cluster, health_interval_ms=50, consistency_wait_ms=300, **overrides)


async def refused_as_stale(stub: graph_pb2_grpc.StoryGraphStub, project: str) -> Mapping[str, str]:
    """A search refused because no replica is fresh enough to take it: what the refusal says."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Search(search_request(project))
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (grpc.StatusCode.UNAVAILABLE, "consistency_timeout")
    assert failure.metadata["cause"] == "replica_lag"
    return failure.metadata


async def replayed_commit(replica_dsn: str) -> datetime:
    conn = await asyncpg.connect(replica_dsn)
    try:
        at: datetime = await conn.fetchval("SELECT pg_last_xact_replay_timestamp()")
        return at
    finally:
        await conn.close()


async def test_a_replica_paused_behind_the_primary_past_the_bound_refuses_reads_until_it_catches_up(
    cluster, tree_stub, graph_service
):
    project = unique("p")
    await create_tree(tree_stub, project)
    async with serving(cluster, max_lag_bytes=BOUND) as service, graph_stub_of(service) as stub:
        (replica,) = service.router.replicas
        await wait_for(lambda: service.router.eligible(replica), 5, "the replica eligible")
        await stub.Search(search_request(project))
        async with replay_paused(cluster.replica_dsn):
            await write_wal(cluster.primary_dsn, 4 * BOUND)
            await wait_for(lambda: replica.lag_bytes > BOUND, 5, "the lag measured")
            assert replica.healthy and not service.router.eligible(replica)
            stale = await refused_as_stale(stub, project)
            assert stale["max_lag_bytes"] == str(BOUND)
        await wait_for(lambda: service.router.eligible(replica), 5, "the replica caught up")
        await stub.Search(search_request(project))


async def test_read_at_is_the_last_commit_the_replica_replayed_not_the_time_of_the_read(
    cluster, tree_stub, graph_stub
):
    project = unique("p")
    await create_tree(tree_stub, project)
    await wait_for_replayed(cluster)
    async with replay_paused(cluster.replica_dsn):
        replayed = await replayed_commit(cluster.replica_dsn)
        await create_tree(tree_stub, project)  # committed on the primary, not yet replayed
        conn = await asyncpg.connect(cluster.primary_dsn)
        try:
            written: datetime = await conn.fetchval("SELECT now()")
        finally:
            await conn.close()
        response = await graph_stub.Search(search_request(project))
        read_at = datetime.fromisoformat(response.basis.read_at.replace("Z", "+00:00"))
        assert read_at == replayed
        assert read_at < written


async def wait_for_replayed(cluster) -> None:
    """Until the replica has replayed everything the primary wrote so far."""
    primary = await asyncpg.connect(cluster.primary_dsn)
    replica = await asyncpg.connect(cluster.replica_dsn)
    try:
        lsn = await primary.fetchval("SELECT pg_current_wal_lsn()")
        for _ in range(250):
            if await replica.fetchval("SELECT pg_last_wal_replay_lsn() >= $1", lsn):
                return
            await replica.execute("SELECT pg_sleep(0.02)")
        raise AssertionError("the replica did not replay the primary's writes in 5 s")
    finally:
        await primary.close()
        await replica.close()


async def test_with_the_primary_unreachable_a_replica_whose_last_commit_is_too_old_refuses_reads(
    cluster, tree_stub, graph_service
):
    project = unique("p")
    closed = f"postgresql://nobody@127.0.0.1:{free_port()}/nothing"
    async with (
        serving(
            cluster,
            primary_dsn=closed,
            gate_dsn="",  # the switches from the replica: the primary is out of reach
            primary_grace_ms=0,
            max_replay_age_ms=2000,
        ) as service,
        graph_stub_of(service) as stub,
    ):
        router = service.router
        (replica,) = router.replicas
        assert router.primary_unreachable_s is not None
        await create_tree(tree_stub, project)
        await wait_for_replayed(cluster)
        await wait_for(lambda: router.eligible(replica), 5, "a fresh commit replayed and seen")
        await stub.Search(search_request(project))
        async with replay_paused(cluster.replica_dsn):
            await wait_for(lambda: not router.eligible(replica), 10, "the last commit too old")
            # Nothing shows it behind but age: within the lag bound (the primary's background
            # WAL may still reach it while replay is paused, so its lag need not be zero).
            assert replica.healthy and replica.lag_bytes <= router.max_lag_bytes
            stale = await refused_as_stale(stub, project)
            assert stale["max_replay_age_s"] == "2"
        await create_tree(tree_stub, project)
        await wait_for(lambda: router.eligible(replica), 10, "a new commit replayed")
        await stub.Search(search_request(project))
