"""Benchmarks: the story-graph reads against raw baselines measured in the same run.

    python -m bench.run [--objects N] [--seconds S] [--concurrency C] [--per-result N]
                        [--load-concurrency L] [--explain FILE] [--data-dir DIR]
                        [--shared-buffers SIZE] [--hold-cpus-awake] [--cold]
                        [--ingest-rate R] [--ingest-per-result N] [--split-cpus [reads]]
                        [--ingest-texts like|foreign]

Starts its own PostgreSQL primary + replica (temporary folder, free ports), then tree_service
and graph_service as deployed — each its own process (`python -m ...`, configured through its
environment, logs in the data folder's logs/) — loads a story graph of about N searchable
objects through TreeService.RecordReview (L results in flight; see bench.story for its shape),
then measures each case for S seconds sequentially (p50/p99 latency) and for S seconds with C
calls in flight (calls/s), after a warm-up:

- baselines: an empty gRPC call (grpc.health.v1 Check) and a raw asyncpg point query on the
  replica (primary-key lookup in graph_objects);
- StoryGraph.Search for a rare, a medium and a common term; each within one month, one week
  and one day of event time; the medium and common term restricted to events;
- StoryGraph.GetContext, current mode, of an event with relations and of a hub entity that
  about 1,000 events involve — each read first (every call a different object, so its
  neighbourhood is not cached yet) and again (the same object every call); timeline mode of
  the hub; the hub's next page of events (cursor);
- StoryGraph.ReadSource, the snapshot of a source reference;
- TreeService.AskQuestion appends.

The modules: services (the processes measured), prepare (loading and warming the graph), cases
(the calls), measure (timing them), explain (the --explain pass); this one runs them in order.

Figures are printed as a Markdown table with ratios against the baselines, because absolute
numbers on shared machines are noise; story-graph reads over the p99 target are called out.
With --explain FILE, each read over the target is run again through a second graph_service
whose replica sessions log their slow statements' plans (auto_explain, ANALYZE + BUFFERS),
and those plans are written to FILE.
With --data-dir DIR, the clusters live in DIR and are kept: a later run with the same DIR,
--objects and --per-result measures the graph already loaded there instead of loading it again.

With --ingest-rate R, the baselines and every story-graph read are then measured again, each
sequentially with an ingestion stream of R objects/s (RecordReview, a scope of its own) paused
and then running (bench.mixed): p99 while ingesting as a ratio to p99 quiet and to the baseline.
With --split-cpus as well, those reads are measured with the primary and tree_service on half of
the CPUs and the replica, graph_service and the client on the other half (bench.cpus), as in a
deployment whose primary and replicas run on machines of their own; with --split-cpus reads,
the replica's WAL replay and receiver join the first half, as on a replica with a CPU to spare
for its replay. With --ingest-texts foreign, the stream's texts share no trigram with the
searches (bench.mixed.FOREIGN_LETTERS): what the reads still lose is then not the stream's rows
in the shared indexes.

With --hold-cpus-awake (root only), the run holds /dev/cpu_dma_latency at 0 µs: idle CPUs poll
instead of halting, as on hosts tuned for latency (tuned's latency-performance profile does the
same). On a virtual machine a halted vCPU can take milliseconds to wake, at random, on any round
trip between the services and PostgreSQL; sequential calls leave CPUs idle between round trips
and pay it, loaded servers do not (docs/ has the figures). Which way the run went is printed with
the figures.

Before measuring, the replica's tables and indexes are read into its shared buffers
(pg_prewarm; where that extension is not installed, its files are read into the operating
system's cache instead), as on a replica that has been serving: "first read" cases measure
reads the services have not cached, not the disk. The default shared_buffers (4GB) holds the
million-object graph. Just after a restart, pages come from the operating system's cache or
from disk; this host reclaims its cache within minutes. --cold measures that: nothing is read
beforehand.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench import cpus
from bench.cases import Reads, switch_app_on
from bench.explain import explain
from bench.measure import TARGET_P99_MS, Case, Measured, sequential, throughput, warm_up
from bench.mixed import IngestionStream, measure_pairs, report
from bench.prepare import (
    PREWARM_REPLICA,
    SETTLE_GRAPH,
    graph_stats,
    load,
    read_marker,
    read_whole_folder,
)
from bench.services import ServiceProcess, cpu_idle_policy, free_port, start_graph
from bench.story import PROJECT, StoryPlan
from devtools import pgcluster
from devtools.pgcluster.processes import layout_of, postgres_processes
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc


async def main_async(args: argparse.Namespace) -> None:
    keep = bool(args.data_dir)
    data_dir = Path(args.data_dir) if keep else Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir,
        primary_port=free_port(),
        replica_port=free_port(),
        fast=True,
        shared_buffers=args.shared_buffers,
    )
    try:
        info = pgcluster.start(cfg)
        logs = data_dir / "logs"
        tree = await ServiceProcess.start(
            "tree_service", {"MIRRORTREE_TREE_DSN": info.primary_dsn}, logs / "tree_service.log"
        )
        try:
            graph = await start_graph(info.replica_dsn, logs / "graph_service.log")
        except BaseException:
            await tree.stop()
            raise
        layout = layout_of(cfg)
        split = None
        if args.split_cpus:
            replica = postgres_processes(layout.replica.datadir)
            write_side, read_side = "primary and tree_service", "replica, graph_service and client"
            replay: list[int] = []
            if args.split_cpus == "reads":
                replay = cpus.titled(replica, "startup") + cpus.titled(replica, "walreceiver")
                write_side += " with the replica's WAL replay and receiver"
                read_side = "the replica's other processes, graph_service and client"
            write = [*postgres_processes(layout.primary.datadir), tree.process.pid, *replay]
            read = [*(p for p in replica if p not in replay), graph.process.pid, os.getpid()]
            split = functools.partial(cpus.split, write, read, write_side, read_side)

        def groups() -> dict[str, list[int]]:
            replica = postgres_processes(layout.replica.datadir)
            replay = cpus.titled(replica, "startup")
            return {
                "primary (PostgreSQL)": postgres_processes(layout.primary.datadir),
                "tree_service": [tree.process.pid],
                "replica: replaying WAL (startup)": replay,
                "replica: the rest (the reads' backends, ...)": sorted(set(replica) - set(replay)),
                "graph_service": [graph.process.pid],
                "this client": [os.getpid()],
            }

        try:
            await run(
                info=info,
                groups=groups,
                split_cpus=split,
                replica_log=logs / "replica.log",
                tree_port=tree.port,
                graph_port=graph.port,
                args=args,
                loaded_marker=data_dir / "bench-loaded.json",
                replica_files=pgcluster.replica_data_folder(cfg),
            )
        finally:
            await graph.stop()
            await tree.stop()
    finally:
        pgcluster.stop(cfg)
        if not keep:
            shutil.rmtree(data_dir, ignore_errors=True)


async def run(
    *,
    info: pgcluster.ClusterInfo,
    replica_log: Path,
    tree_port: int,
    graph_port: int,
    args: argparse.Namespace,
    loaded_marker: Path,
    replica_files: Path,
    groups: cpus.Groups,
    split_cpus: Callable[[], str] | None = None,
) -> None:
    seconds: float = args.seconds
    concurrency: int = args.concurrency
    plan = StoryPlan(args.objects, args.per_result)
    tree_channel = grpc.aio.insecure_channel(f"127.0.0.1:{tree_port}")
    graph_channel = grpc.aio.insecure_channel(f"127.0.0.1:{graph_port}")
    tree_stub = tree_pb2_grpc.TreeServiceStub(tree_channel)
    graph_stub = graph_pb2_grpc.StoryGraphStub(graph_channel)
    health = health_pb2_grpc.HealthStub(graph_channel)
    pool = await asyncpg.create_pool(info.replica_dsn, min_size=concurrency, max_size=concurrency)
    await switch_app_on(tree_stub)
    shape = {"objects": plan.objects, "per_result": args.per_result}
    previous = await asyncio.to_thread(read_marker, loaded_marker)
    if previous is not None and previous["shape"] == shape:
        load_s = previous["load_s"]
        print(f"measuring the {plan.objects:,} objects loaded by an earlier run", flush=True)
    else:
        if previous is not None:
            raise SystemExit(f"{loaded_marker.parent} holds another graph: {previous['shape']}")
        print(
            f"loading {plan.objects:,} objects in {plan.results} results "
            f"({args.load_concurrency} in flight) ...",
            flush=True,
        )
        load_s = await load(tree_stub, plan, args.load_concurrency)
    primary = await asyncpg.connect(info.primary_dsn)
    started = time.perf_counter()
    await primary.execute(SETTLE_GRAPH)
    vacuum_s = time.perf_counter() - started
    prewarm = not args.cold and await primary.fetchval(
        "SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'pg_prewarm'"
    )
    if prewarm:  # created on the primary, used on the replica
        await primary.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    if args.data_dir:
        await asyncio.to_thread(
            loaded_marker.write_text, json.dumps({"shape": shape, "load_s": load_s})
        )
    lsn = await primary.fetchval("SELECT pg_current_wal_lsn()::text")  # the reads wait for it
    await primary.close()
    await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="status",
            scope=project_scope([PROJECT]),
            options=graph_pb2.ReadOptions(min_consistency=common_pb2.ConsistencyToken(lsn=lsn)),
        ),
        timeout=120,
    )
    async with pool.acquire() as conn:
        stats = await graph_stats(conn, plan)
    print(stats, flush=True)
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
        read = await asyncio.to_thread(read_whole_folder, replica_files / "base")
        print(
            f"the replica's files were read once before measuring (pg_prewarm is not installed: "
            f"into the operating system's cache only): {read / 2**30:.2f} GiB in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )

    async def empty_grpc() -> object:
        return await health.Check(health_pb2.HealthCheckRequest())

    result_id, event = plan.point_key

    async def point_query() -> object:
        return await pool.fetchval(
            "SELECT title FROM graph_objects WHERE result_id = $1 AND object_type = 'event' "
            "AND object_id = $2",
            result_id,
            event,
        )

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

    reads = Reads(graph_stub, plan)
    cases = [
        Case("empty gRPC call (health Check)", empty_grpc),
        Case("raw asyncpg point query (replica)", point_query),
        *await reads.cases(),
        Case("AskQuestion (append + idempotency key)", append),
    ]
    rows: list[Measured] = []
    for case in cases:
        await warm_up(case.call)
        samples = await sequential(case.call, seconds)
        rate = await throughput(case.call, seconds, concurrency)
        rows.append(Measured(case, samples, rate))
        print(
            f"  measured {case.name}: p50 {rows[-1].p50_ms:.2f} ms, p99 {rows[-1].p99_ms:.2f} ms, "
            f"{rate:,.0f} calls/s",
            flush=True,
        )

    base_p50 = rows[0].p50_ms + rows[1].p50_ms
    base_rate = 1 / (1 / rows[0].rate + 1 / rows[1].rate)
    print()
    print(
        f"{plan.objects:,} searchable objects in {plan.results} results, loaded in {load_s:.1f} s "
        f"({plan.objects / load_s:,.0f} objects/s through RecordReview, "
        f"{args.load_concurrency} in flight); VACUUM ANALYZE {vacuum_s:.1f} s"
    )
    print(stats)
    print(
        f"baseline = empty gRPC call + raw asyncpg point query (p50 {base_p50:.2f} ms, "
        f"{base_rate:,.0f} calls/s combined); {concurrency} in flight; {seconds:g} s per phase; "
        f"shared_buffers {args.shared_buffers}; {args.cpu_idle}"
    )
    print()
    print(
        "| case | p50 ms | p99 ms | calls/s | p50 ÷ baseline | calls/s ÷ baseline | "
        f"p99 ≤ {TARGET_P99_MS:g} ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | :---: |")
    for row in rows:
        verdict = ("no" if row.over_target else "yes") if row.case.graph_read else ""
        print(
            f"| {row.case.name} | {row.p50_ms:.2f} | {row.p99_ms:.2f} | {row.rate:,.0f} | "
            f"{row.p50_ms / base_p50:.2f} | {row.rate / base_rate:.2f} | {verdict} |"
        )
    slow = [row for row in rows if row.over_target]
    print()
    if slow:
        print(f"over the p99 target of {TARGET_P99_MS:g} ms:")
        for row in slow:
            print(f"  - {row.case.name}: p99 {row.p99_ms:.2f} ms")
    else:
        print(f"every story-graph read is within the p99 target of {TARGET_P99_MS:g} ms")
    if args.explain and slow:
        await explain(info.replica_dsn, replica_log, plan, [row.case.name for row in slow], args)
    if args.ingest_rate > 0:
        mixed = [*cases[:2], *(case for case in cases if case.graph_read)]
        print()
        print(
            f"the reads again, each with an ingestion stream of {args.ingest_rate:,.0f} "
            f"objects/s paused, then running ...",
            flush=True,
        )
        if split_cpus is not None:
            print(split_cpus(), flush=True)
        stream = IngestionStream(
            tree_stub,
            args.ingest_rate,
            int(args.ingest_rate * (seconds + 1) * len(mixed) * 2),
            args.ingest_per_result,
            foreign_texts=args.ingest_texts == "foreign",
        )
        report(await measure_pairs(stream, mixed, seconds, groups), stream, args.ingest_rate)
    await pool.close()
    await tree_channel.close()
    await graph_channel.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--per-result", type=int, default=5_000, help="objects per review result (max 10,000)"
    )
    parser.add_argument(
        "--load-concurrency", type=int, default=4, help="RecordReview calls in flight while loading"
    )
    parser.add_argument(
        "--ingest-rate",
        type=float,
        default=0.0,
        help="then measure the reads again, each quiet and while RecordReview ingests this many "
        "objects/s into a scope of its own (bench.mixed)",
    )
    parser.add_argument(
        "--ingest-per-result", type=int, default=300, help="objects per result of that stream"
    )
    parser.add_argument(
        "--ingest-texts",
        choices=("like", "foreign"),
        default="like",
        help="that stream's texts: like the graph's, or sharing no trigram with the searches",
    )
    parser.add_argument(
        "--explain", default="", help="write the plans of reads over the p99 target to this file"
    )
    parser.add_argument(
        "--data-dir", default="", help="keep the clusters here and reuse the graph they hold"
    )
    parser.add_argument(
        "--split-cpus",
        nargs="?",
        const="replica",
        choices=("replica", "reads"),
        help="with --ingest-rate: measure those reads with the primary and tree_service on half "
        "of the CPUs, the replica, graph_service and the client on the other half (bench.cpus); "
        "'reads': the replica's WAL replay and receiver on the first half too",
    )
    parser.add_argument(
        "--hold-cpus-awake",
        action="store_true",
        help="hold /dev/cpu_dma_latency at 0 for the run (root only): idle CPUs poll instead of "
        "halting, as on latency-tuned hosts",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="do not read the replica's data before measuring: reads then also measure the "
        "disk, for pages not in memory (as after a restart)",
    )
    parser.add_argument(
        "--shared-buffers",
        default="4GB",
        help="PostgreSQL shared_buffers of both clusters (a deployment's size, which holds the "
        "million-object graph; not the 128MB development default)",
    )
    args = parser.parse_args()
    if args.split_cpus and not args.ingest_rate:
        parser.error("--split-cpus applies to the reads measured with --ingest-rate; give both")
    with cpu_idle_policy(args.hold_cpus_awake) as args.cpu_idle:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
