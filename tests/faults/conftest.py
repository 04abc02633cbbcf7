"""A cluster of its own for the fault-injection tests: a primary and two streaming replicas,
with tree_service on the primary. Its servers are killed, paused and restarted here, so the
rest of the suite keeps its single-replica cluster undisturbed; it is only started when a test
of this folder runs."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from devtools import pgcluster
from devtools.pgcluster import faults, roles
from graph_service import app as graph_app
from tests.conftest import free_port, own_graph_service, switch_app
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings


@pytest.fixture(scope="session")
def faulty_config() -> Iterator[pgcluster.ClusterConfig]:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-test-faults-"))
    config = pgcluster.ClusterConfig(
        data_dir=data_dir,
        primary_port=free_port(),
        replica_port=free_port(),
        replicas=2,
        more_replica_ports=(free_port(),),
        fast=True,
    )
    yield config
    pgcluster.stop(config)
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def faulty_cluster(faulty_config: pgcluster.ClusterConfig) -> pgcluster.ClusterInfo:
    return pgcluster.start(faulty_config)


@pytest_asyncio.fixture(scope="session")
async def faulty_tree(
    faulty_cluster: pgcluster.ClusterInfo,
) -> AsyncIterator[tree_app.TreeService]:
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(faulty_cluster.primary_dsn),
            migration_dsn=faulty_cluster.primary_dsn,
            listen="127.0.0.1:0",
        )
    )
    await switch_app(service.port, True)
    yield service
    await service.stop()


@pytest_asyncio.fixture
async def faulty_graph(
    faulty_cluster: pgcluster.ClusterInfo, faulty_tree: tree_app.TreeService
) -> AsyncIterator[graph_app.GraphService]:
    """graph_service over both replicas, checking them often and waiting briefly for tokens."""
    async with own_graph_service(
        faulty_cluster, health_interval_ms=100, consistency_wait_ms=500
    ) as service:
        yield service


@pytest_asyncio.fixture(autouse=True)
async def every_server_up(faulty_config: pgcluster.ClusterConfig) -> AsyncIterator[None]:
    """A test that failed half-way leaves no server down or paused for the next one."""
    yield
    up = pgcluster.running(faulty_config)
    for name in ("primary", "replica", "replica2"):
        if name not in up:
            await asyncio.to_thread(faults.restart, faulty_config, name)
