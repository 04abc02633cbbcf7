"""Benchmarks: the services against raw baselines measured in the same run.

    python -m bench.run [--objects N] [--seconds S] [--concurrency C]

Starts its own PostgreSQL primary + replica (temporary folder, free ports), tree_service and
graph_service in-process, loads N searchable objects through TreeService.RecordReview, then
measures, each for S seconds:

- baselines: an empty gRPC call (grpc.health.v1 Check) and a raw asyncpg point query on the
  replica (primary-key lookup in graph_objects);
- StoryGraph.Search for a rare, a medium and a common term (sequential: p50/p99 latency;
  C in flight: calls/s);
- TreeService.AskQuestion appends (sequential latency, calls/s with C in flight).

Figures are printed as a Markdown table with ratios against the baselines, because absolute
numbers on shared machines are noise.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from graph_service import app as graph_app
from graph_service.config import Settings as GraphSettings
from mirrortree import pgcluster
from mirrortree.protoscope import project_scope
from mirrortree.v1 import graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

PROJECT = "bench"
PER_RESULT = 5_000
# Term classes: every 1,000th object says "zephyr", every 20th "harbor", every one "status".
TERMS = {"rare": "zephyr", "medium": "harbor", "common": "status"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def title_for(i: int) -> str:
    words = [f"status report {i}"]
    if i % 20 == 0:
        words.append("harbor")
    if i % 1000 == 0:
        words.append("zephyr")
    return " ".join(words)


async def load(stub: tree_pb2_grpc.TreeServiceStub, objects: int) -> tree_pb2.RecordReviewResponse:
    last = None
    for start in range(0, objects, PER_RESULT):
        events = [
            tree_pb2.EventInput(
                id=f"ev-{i}",
                kind=tree_pb2.DISCUSSION,
                title=title_for(i),
                description=f"Body text of event {i} with some filler words about the plan.",
            )
            for i in range(start, min(start + PER_RESULT, objects))
        ]
        last = await stub.RecordReview(
            tree_pb2.RecordReviewRequest(
                idempotency_key=uuid.uuid4().hex,
                result_id=f"bench-{start}",
                scope=project_scope([PROJECT]),
                phase="bench",
                review_generated_at="2026-10-01T00:00:00Z",
                events=events,
            )
        )
    assert last is not None
    return last


async def sequential(call: Callable[[], Awaitable[object]], seconds: float) -> list[float]:
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def throughput(call: Callable[[], Awaitable[object]], seconds: float, workers: int) -> float:
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return done / (time.perf_counter() - started)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main_async(objects: int, seconds: float, concurrency: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port(), fast=True
    )
    try:
        info = pgcluster.start(cfg)
        tree = await tree_app.start(TreeSettings(dsn=info.primary_dsn, listen="127.0.0.1:0"))
        graph = await graph_app.start(
            GraphSettings(
                replica_dsns=(info.replica_dsn,),
                cursor_secret=b"bench-secret-bench-secret-bench-secret!",
                listen="127.0.0.1:0",
            )
        )
        try:
            await run(
                info=info,
                tree_port=tree.port,
                graph_port=graph.port,
                objects=objects,
                seconds=seconds,
                concurrency=concurrency,
            )
        finally:
            await graph.stop()
            await tree.stop()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)


async def run(
    *,
    info: pgcluster.ClusterInfo,
    tree_port: int,
    graph_port: int,
    objects: int,
    seconds: float,
    concurrency: int,
) -> None:
    tree_channel = grpc.aio.insecure_channel(f"127.0.0.1:{tree_port}")
    graph_channel = grpc.aio.insecure_channel(f"127.0.0.1:{graph_port}")
    tree_stub = tree_pb2_grpc.TreeServiceStub(tree_channel)
    graph_stub = graph_pb2_grpc.StoryGraphStub(graph_channel)
    health = health_pb2_grpc.HealthStub(graph_channel)
    pool = await asyncpg.create_pool(info.replica_dsn, min_size=concurrency, max_size=concurrency)
    print(f"loading {objects:,} objects ...", flush=True)
    started = time.perf_counter()
    written = await load(tree_stub, objects)
    load_s = time.perf_counter() - started
    primary = await asyncpg.connect(info.primary_dsn)
    await primary.execute("ANALYZE")  # planner statistics replicate to the standby
    await primary.close()
    await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="status",
            scope=project_scope([PROJECT]),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        ),
        timeout=60,
    )
    rows: list[tuple[str, list[float], float]] = []

    async def empty_grpc() -> object:
        return await health.Check(health_pb2.HealthCheckRequest())

    async def point_query() -> object:
        return await pool.fetchval(
            "SELECT title FROM graph_objects WHERE result_id = $1 AND object_type = 'event' "
            "AND object_id = $2",
            "bench-0",
            "ev-1",
        )

    def search(term: str) -> Callable[[], Awaitable[object]]:
        request = graph_pb2.SearchRequest(query=term, scope=project_scope([PROJECT]))
        return lambda: graph_stub.Search(request)

    tree = (
        await tree_stub.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=uuid.uuid4().hex, title="b", owner="b")
        )
    ).tree

    async def append() -> object:
        return await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=uuid.uuid4().hex, tree_id=tree.id, text="benchmark question"
            )
        )

    cases: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("empty gRPC call (health Check)", empty_grpc),
        ("raw asyncpg point query (replica)", point_query),
        *((f"Search, {cls} term '{term}'", search(term)) for cls, term in TERMS.items()),
        ("AskQuestion (append + idempotency key)", append),
    ]
    for name, call in cases:
        for _ in range(20):
            await call()  # warm-up: connections, prepared statements, caches
        samples = await sequential(call, seconds)
        rate = await throughput(call, seconds, concurrency)
        rows.append((name, samples, rate))
        print(f"  measured {name}", flush=True)

    base_p50 = statistics.median(rows[0][1]) + statistics.median(rows[1][1])
    base_rate = 1 / (1 / rows[0][2] + 1 / rows[1][2])
    print()
    print(
        f"{objects:,} searchable objects, loaded in {load_s:.1f} s "
        f"({objects / load_s:,.0f} objects/s through RecordReview)"
    )
    print(f"baseline = empty gRPC call + raw asyncpg point query; {concurrency} in flight")
    print()
    print("| case | p50 ms | p99 ms | calls/s | p50 ÷ baseline | calls/s ÷ baseline |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, samples, rate in rows:
        p50 = statistics.median(samples)
        print(
            f"| {name} | {p50 * 1000:.2f} | {pct(samples, 0.99):.2f} | {rate:,.0f} | "
            f"{p50 / base_p50:.2f} | {rate / base_rate:.2f} |"
        )
    await pool.close()
    await tree_channel.close()
    await graph_channel.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    asyncio.run(main_async(args.objects, args.seconds, args.concurrency))


if __name__ == "__main__":
    main()
