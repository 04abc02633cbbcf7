"""Preparing the graph to measure: loading it through RecordReview (into the clusters bench.run
started, or into a project of its own on a given deployment), settling and describing it, and
reading the replica's data into memory before measuring."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from bench.story import StoryPlan
from devtools import pgcluster
from load.targets import (
    Metadata,
    Session,
    Targets,
    caller_metadata,
    open_session,
    switch_app_on,
)
from mirrortree.scopes import ScopeValue
from mirrortree.v1 import tree_pb2, tree_pb2_grpc

# What autovacuum would soon do after a bulk insert, done at once so that it does not run in the
# middle of a measurement: planner statistics and the visibility map (index-only scans of the
# hubs' tables), which replicate.
SETTLE_GRAPH = (
    "VACUUM (ANALYZE) graph_objects, graph_links, review_results, context_hubs, "
    "context_members, context_citations, context_counts"
)


async def load(
    stub: tree_pb2_grpc.TreeServiceStub,
    plan: StoryPlan,
    in_flight: int,
    metadata: list[tuple[str, str]] | None = None,
) -> float:
    """Record every result of the plan, `in_flight` at a time; returns the seconds taken."""
    requests = plan.requests()
    loaded = 0
    next_report = 0.1
    started = time.perf_counter()

    async def record(count: int, request: tree_pb2.RecordReviewRequest) -> None:
        nonlocal loaded, next_report
        await stub.RecordReview(request, metadata=metadata, timeout=600)
        loaded += count
        if loaded >= next_report * plan.objects:
            spent = time.perf_counter() - started
            print(
                f"  {loaded:>9,} objects  {spent:7.1f} s  {loaded / spent:8,.0f} objects/s",
                flush=True,
            )
            next_report += 0.1

    # The entities come first: later results name them in their entity changes.
    await record(*next(requests))

    async def worker() -> None:
        for count, request in requests:  # one shared generator: each result is taken once
            await record(count, request)

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return time.perf_counter() - started


async def graph_stats(conn: asyncpg.Connection, plan: StoryPlan) -> str:
    """The plan's graph as stored (its project's scope: a deployment holds other data too)."""
    scope = ScopeValue.of_projects([plan.project]).key
    by_type = await conn.fetch(
        "SELECT object_type, count(*) AS n FROM graph_objects WHERE scope_key = $1 "
        "GROUP BY 1 ORDER BY 2 DESC",
        scope,
    )
    links = await conn.fetchval("SELECT count(*) FROM graph_links WHERE scope_key = $1", scope)
    hub = await conn.fetch(
        "SELECT from_type, count(*) AS n FROM graph_links "
        "WHERE scope_key = $1 AND to_type = 'entity' AND to_id = $2 GROUP BY 1 ORDER BY 2 DESC",
        scope,
        plan.hub_entity,
    )
    size = await conn.fetchval(
        "SELECT pg_size_pretty(pg_total_relation_size('graph_objects') "
        "+ pg_total_relation_size('graph_links'))"
    )
    return (
        f"objects by type: {', '.join(f'{r[0]} {r[1]:,}' for r in by_type)}; "
        f"{links:,} links; graph tables {size}\n"
        f"hub entity {plan.hub_entity} is linked from: "
        f"{', '.join(f'{r[1]:,} {r[0]}' for r in hub)}"
    )


async def loaded(conn: asyncpg.Connection, plan: StoryPlan) -> tuple[int, int]:
    """How many of the plan's results are recorded, and how many objects they hold."""
    row = await conn.fetchrow(
        "SELECT count(*) AS results, coalesce(sum(object_count), 0) AS objects "
        "FROM review_results WHERE result_id = any($1::text[])",
        plan.result_ids,
    )
    return int(row["results"]), int(row["objects"])


def read_marker(path: Path) -> dict[str, Any] | None:
    """What an earlier run with --data-dir loaded there, if anything."""
    return json.loads(path.read_text()) if path.exists() else None


PREWARM_REPLICA = """
SELECT coalesce(sum(pg_prewarm(c.oid, 'buffer')), 0)
FROM (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')
      ORDER BY pg_relation_size(c.oid)) c
"""


def read_whole_folder(folder: Path) -> int:
    """Reads every file under `folder` once, discarding it (the operating system keeps it in its
    cache); returns the bytes read."""
    read = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with path.open("rb") as data:
                while chunk := data.read(1 << 20):
                    read += len(chunk)
    return read


@dataclass(frozen=True)
class Clusters:
    """The clusters bench.run started itself, for what only a run on its own clusters does."""

    info: pgcluster.ClusterInfo
    replica_log: Path
    loaded_marker: Path
    replica_files: Path


@dataclass(frozen=True)
class Prepared:
    """The graph, loaded and settled, and what the reads need to read it."""

    load_s: float | None  # None: loaded by an earlier run into a given deployment
    vacuum_s: float | None  # None: a given deployment without --primary-dsn, left to autovacuum
    lsn: str  # the reads wait for it
    prewarm: bool = False
    session: Session | None = None  # a given deployment's: its binding carries the reads
    tree_metadata: Metadata | None = None


async def load_graph(
    stub: tree_pb2_grpc.TreeServiceStub,
    plan: StoryPlan,
    args: argparse.Namespace,
    into: str = "",
    metadata: Metadata | None = None,
) -> float:
    print(
        f"loading {plan.objects:,} objects in {plan.results} results{into} "
        f"({args.load_concurrency} in flight) ...",
        flush=True,
    )
    return await load(stub, plan, args.load_concurrency, metadata)


async def settle(primary: asyncpg.Connection) -> float:
    started = time.perf_counter()
    await primary.execute(SETTLE_GRAPH)
    return time.perf_counter() - started


async def prepare_clusters(
    clusters: Clusters,
    tree_stub: tree_pb2_grpc.TreeServiceStub,
    plan: StoryPlan,
    args: argparse.Namespace,
) -> Prepared:
    """Load the graph (unless --data-dir holds it already), settle it, and get the replica's
    data ready to be read into memory."""
    await switch_app_on(tree_stub)
    shape = {"objects": plan.objects, "per_result": args.per_result}
    previous = await asyncio.to_thread(read_marker, clusters.loaded_marker)
    if previous is not None and previous["shape"] == shape:
        load_s = previous["load_s"]
        print(f"measuring the {plan.objects:,} objects loaded by an earlier run", flush=True)
    else:
        if previous is not None:
            raise SystemExit(
                f"{clusters.loaded_marker.parent} holds another graph: {previous['shape']}"
            )
        load_s = await load_graph(tree_stub, plan, args)
    primary = await asyncpg.connect(clusters.info.primary_dsn)
    vacuum_s = await settle(primary)
    prewarm = not args.cold and await primary.fetchval(
        "SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'pg_prewarm'"
    )
    if prewarm:  # created on the primary, used on the replica
        await primary.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    if args.data_dir:
        await asyncio.to_thread(
            clusters.loaded_marker.write_text, json.dumps({"shape": shape, "load_s": load_s})
        )
    lsn = await primary.fetchval("SELECT pg_current_wal_lsn()::text")  # the reads wait for it
    await primary.close()
    return Prepared(load_s, vacuum_s, lsn, prewarm)


async def prepare_deployment(
    targets: Targets,
    tree_stub: tree_pb2_grpc.TreeServiceStub,
    replica: asyncpg.Pool,
    plan: StoryPlan,
    *,
    primary_dsn: str,
    args: argparse.Namespace,
) -> Prepared:
    """Load the graph into its own project of a given deployment (or, with --reuse, find the one
    an earlier run loaded there), settle it where the primary is known, and open the session
    whose binding the reads carry."""
    tree_md = caller_metadata(targets.caller_token)
    async with replica.acquire() as conn:
        results, objects = await loaded(conn, plan)
    load_s = None
    if args.reuse:
        if (results, objects) != (plan.results, plan.objects):
            raise SystemExit(
                f"project {plan.project} holds {results} of the {plan.results} results "
                f"({objects:,} of the {plan.objects:,} objects) that --objects and --per-result "
                f"make: there is no such graph to reuse"
            )
        print(
            f"measuring the {plan.objects:,} objects an earlier run loaded into project "
            f"{plan.project}",
            flush=True,
        )
    elif results:
        raise SystemExit(
            f"project {plan.project} already holds a story graph: --reuse measures it, or leave "
            f"--project out for a new one"
        )
    else:
        load_s = await load_graph(tree_stub, plan, args, f" into project {plan.project}", tree_md)
    vacuum_s = None
    if primary_dsn:
        primary = await asyncpg.connect(primary_dsn)
        try:
            vacuum_s = await settle(primary)
        finally:
            await primary.close()
    # Opened once the graph is in: the reads wait for its write, which follows every result's.
    session = await open_session(tree_stub, targets, title="Benchmark session", owner="bench")
    return Prepared(load_s, vacuum_s, session.lsn, session=session, tree_metadata=tree_md)


async def read_beforehand(
    clusters: Clusters, pool: asyncpg.Pool, prewarm: bool, args: argparse.Namespace
) -> None:
    """The replica's data into memory, as on a replica that has been serving (unless --cold)."""
    started = time.perf_counter()
    if args.cold:
        print("the replica's data was not read before measuring (--cold)", flush=True)
    elif prewarm:
        async with pool.acquire() as conn:
            blocks = await conn.fetchval(PREWARM_REPLICA)
        print(
            f"the replica's tables and indexes were read into its shared buffers before "
            f"measuring, as on a replica that has been serving: {blocks * 8192 / 2**30:.2f} GiB "
            f"in {time.perf_counter() - started:.1f} s (shared_buffers {args.shared_buffers})",
            flush=True,
        )
    else:
        read = await asyncio.to_thread(read_whole_folder, clusters.replica_files / "base")
        print(
            f"the replica's files were read once before measuring (pg_prewarm is not installed: "
            f"into the operating system's cache only): {read / 2**30:.2f} GiB in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
