"""Preparing the graph to measure: loading it through RecordReview, describing it, and reading
the replica's data into memory before measuring."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import asyncpg

from bench.story import StoryPlan
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
