"""Test harness: one real PostgreSQL primary + streaming replica per test session, real gRPC
servers on loopback (port 0), and clients for them. Tests isolate themselves by using fresh
project ids and trees, never by mocking."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
import pytest_asyncio
import uvicorn

from devtools import pgcluster
from devtools.pgcluster import roles
from graph_service import app as graph_app
from graph_service.config import Settings as GraphSettings
from mirrortree.v1 import graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

CURSOR_SECRET = b"test-cursor-secret-that-is-long-enough-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def rows_read(node: dict[str, Any], table: str) -> int:
    """The rows every scan of `table` in an EXPLAIN (ANALYZE, FORMAT JSON) plan returned, over
    all its loops."""
    own = node["Actual Rows"] * node["Actual Loops"] if node.get("Relation Name") == table else 0
    return own + sum(rows_read(child, table) for child in node.get("Plans", []))


@pytest.fixture(scope="session")
def cluster_config() -> Iterator[pgcluster.ClusterConfig]:
    # mkdtemp under the system temp dir: its parents are traversable by the non-root
    # PostgreSQL OS user (pytest's own tmp dirs are private to root).
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-test-pg-"))
    config = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port(), fast=True
    )
    yield config
    pgcluster.stop(config)
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster(cluster_config: pgcluster.ClusterConfig) -> pgcluster.ClusterInfo:
    return pgcluster.start(cluster_config)


def with_database(dsn: str, name: str) -> str:
    """`dsn` with its database replaced by `name`."""
    return dsn.rsplit("/", 1)[0] + "/" + name


@contextlib.asynccontextmanager
async def fresh_database(cluster: pgcluster.ClusterInfo) -> AsyncIterator[str]:
    """A new, empty database on the session cluster (no migration applied); its name. Dropped
    after, with whatever is still connected to it."""
    name = f"fresh_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(cluster.primary_dsn)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        try:
            yield name
        finally:
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()


@pytest_asyncio.fixture
async def empty_database(cluster: pgcluster.ClusterInfo) -> AsyncIterator[str]:
    """A fresh_database's DSN on the primary."""
    async with fresh_database(cluster) as name:
        yield with_database(cluster.primary_dsn, name)


@pytest_asyncio.fixture(scope="session")
async def tree_service(cluster: pgcluster.ClusterInfo) -> AsyncIterator[tree_app.TreeService]:
    # A low hub threshold, so the story-graph tests read most objects with several links from
    # their stored members (tests/tree_service/test_context_hubs.py checks those against the
    # live walk, which objects with fewer links still take).
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),  # least privilege, as deployed
            migration_dsn=cluster.primary_dsn,
            listen="127.0.0.1:0",
            hub_links=3,
        )
    )
    yield service
    await service.stop()


def graph_settings(cluster: pgcluster.ClusterInfo, **overrides: object) -> GraphSettings:
    values: dict[str, object] = {
        "replica_dsns": tuple(
            roles.reader_dsn(dsn) for dsn in cluster.replica_dsns or (cluster.replica_dsn,)
        ),
        "cursor_secret": CURSOR_SECRET,
        "listen": "127.0.0.1:0",
        "health_interval_ms": 200,
        "gate_dsn": roles.reader_dsn(cluster.primary_dsn),
        "anonymous_reads": True,  # the tests' documented default (SECURITY.md)
    }
    values.update(overrides)
    return GraphSettings(**values)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def own_graph_service(
    cluster: pgcluster.ClusterInfo, **overrides: object
) -> AsyncIterator[graph_app.GraphService]:
    """A graph_service of the test's own over every replica of `cluster` (`overrides` its
    settings), stopped however the test ends. The tools' switches are the suite's: take the
    `graph_service` fixture (which switches them on) or switch them yourself."""
    service = await graph_app.start(graph_settings(cluster, **overrides))
    try:
        yield service
    finally:
        await service.stop()


@contextlib.asynccontextmanager
async def graph_stub_of(
    service: graph_app.GraphService,
) -> AsyncIterator[graph_pb2_grpc.StoryGraphStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
        yield graph_pb2_grpc.StoryGraphStub(channel)


@pytest_asyncio.fixture(scope="session")
async def graph_service(
    cluster: pgcluster.ClusterInfo, tree_service: tree_app.TreeService
) -> AsyncIterator[graph_app.GraphService]:
    # Depends on tree_service so that migrations have run (and replicated) first.
    await switch_app(tree_service.port, True)  # new installations start with the app off
    service = await graph_app.start(graph_settings(cluster))
    yield service
    await service.stop()


@pytest_asyncio.fixture(scope="session")
async def tree_stub(
    tree_service: tree_app.TreeService,
) -> AsyncIterator[tree_pb2_grpc.TreeServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tree_service.port}") as channel:
        yield tree_pb2_grpc.TreeServiceStub(channel)


@pytest_asyncio.fixture(scope="session")
async def graph_stub(
    graph_service: graph_app.GraphService,
) -> AsyncIterator[graph_pb2_grpc.StoryGraphStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{graph_service.port}") as channel:
        yield graph_pb2_grpc.StoryGraphStub(channel)


@pytest_asyncio.fixture
async def global_preferences_taken_back(cluster: pgcluster.ClusterInfo) -> AsyncIterator[None]:
    """A Global preference applies to every context assembled and every search of the shared
    test world: a test that makes one takes it back afterwards (with any memory naming it)."""
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        before = await conn.fetchval(
            "SELECT coalesce(array_agg(id), '{}') FROM preferences WHERE scope_key = 'global'"
        )
        yield
        made = "scope_key = 'global' AND id <> all($1::text[])"
        await conn.execute(
            f"UPDATE canon_candidates SET memory_id = NULL WHERE memory_id IN "
            f"(SELECT id FROM preferences WHERE {made})",
            before,
        )
        await conn.execute(f"DELETE FROM preferences WHERE {made}", before)
    finally:
        await conn.close()


@contextlib.asynccontextmanager
async def uvicorn_serving(app: Any, port: int, **config: Any) -> AsyncIterator[uvicorn.Server]:
    """Serve an ASGI app on the loopback port, as `python -m gateway` or `webview` does; yields
    the server once it serves, and stops it (gracefully) on the way out."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, **config)
    )
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        await task


async def switch_app(tree_port: int, enabled: bool) -> tree_pb2.Settings:
    """Switch the supervisor app (which gates the story-graph tools) on or off."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tree_port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        current: tree_pb2.Settings = await stub.GetSettings(tree_pb2.GetSettingsRequest())
        if current.heartbeat_enabled == enabled:
            return current
        settings: tree_pb2.Settings = await stub.SetAppEnabled(
            tree_pb2.SetAppEnabledRequest(
                idempotency_key=unique("app"),
                enabled=enabled,
                expected_revision=current.app_revision,
            )
        )
        return settings


async def create_tree(
    stub: tree_pb2_grpc.TreeServiceStub, project_id: str = "", title: str = "A tree"
) -> tree_pb2.CreateTreeResponse:
    response: tree_pb2.CreateTreeResponse = await stub.CreateTree(
        tree_pb2.CreateTreeRequest(
            idempotency_key=unique("key"), title=title, owner="tester", project_id=project_id
        )
    )
    return response


@contextlib.asynccontextmanager
async def replay_paused(replica_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """Pause WAL replay on the replica until the block ends (or `resume` is called early)."""
    conn = await asyncpg.connect(replica_dsn)
    try:
        await conn.execute("SELECT pg_wal_replay_pause()")
        yield conn
    finally:
        await conn.execute("SELECT pg_wal_replay_resume()")
        await conn.close()


async def write_wal(primary_dsn: str, size: int) -> None:
    """Write about `size` bytes of WAL on the primary: a logical message, which changes no table
    (and commits nothing a replica's replay timestamp would show)."""
    conn = await asyncpg.connect(primary_dsn)
    try:
        await conn.execute(
            "SELECT pg_logical_emit_message(false, 'mirrortree-test', repeat('x', $1))", size
        )
    finally:
        await conn.close()
