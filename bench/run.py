"""Benchmarks: the story-graph reads against raw baselines measured in the same run.

    python -m bench.run [--objects N] [--seconds S] [--concurrency C] [--per-result N]
                        [--load-concurrency L] [--explain FILE] [--data-dir DIR]
                        [--shared-buffers SIZE] [--hold-cpus-awake] [--cold]
                        [--ingest-rate R] [--ingest-per-result N] [--split-cpus [reads]]
                        [--ingest-texts like|foreign]
    python -m bench.run --tree HOST:PORT --graph HOST:PORT --replica-dsn DSN
                        [--primary-dsn DSN] [--project P [--reuse]] [--allow-remote] [...]

Starts its own PostgreSQL primary + replica (temporary folder, free ports), then tree_service
and graph_service as deployed — each its own process (`python -m ...`, configured through its
environment, logs in the data folder's logs/) — loads a story graph of about N searchable
objects through TreeService.RecordReview (L results in flight; see bench.story for its shape),
then measures each case for S seconds sequentially (p50/p99 latency) and for S seconds with C
calls in flight (calls/s), after a warm-up:

- baselines (bench.baselines, which `make load` reports too): an empty gRPC call
  (grpc.health.v1 Check) and a raw asyncpg point query on the replica (primary-key lookup in
  graph_objects);
- StoryGraph.Search for a rare, a medium and a common term; each within one month, one week
  and one day of event time; the medium and common term restricted to events;
- StoryGraph.GetContext, current mode, of an event with relations and of a hub entity that
  about 1,000 events involve — each read first (every call a different object, so its
  neighbourhood is not cached yet) and again (the same object every call); timeline mode of
  the hub; the hub's next page of events (cursor);
- StoryGraph.ReadSource, the snapshot of a source reference;
- TreeService.AskQuestion appends.

The modules: services (the processes measured), prepare (loading and warming the graph), cases
(the calls), baselines and measure (timing them), explain (the --explain pass); this one runs
them in order.

With --tree and --graph (spelt as `python -m load` spells them, load.targets: the same
MIRRORTREE_LOAD_* variables, loopback only without --allow-remote) it measures a deployment
already running and starts nothing. The graph goes through that tree_service into a project of
its own (--project P, by default a new bench-…), so that the deployment's other data is not
touched; with --reuse it measures the graph an earlier run loaded into P, of the same --objects
and --per-result. The reads carry a binding minted for a session in that project
(MIRRORTREE_BINDING_TOKEN instead, if set), the writes MIRRORTREE_CALLER_TOKEN. The point query
runs on --replica-dsn; VACUUM ANALYZE only with --primary-dsn; nothing is read into memory
beforehand. What needs the clusters' own files or processes (--data-dir, --explain,
--ingest-rate, --cold, --shared-buffers) is refused.

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
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import asyncpg
import grpc

from bench import cpus
from bench.baselines import combined, empty_call, point_query
from bench.cases import Reads
from bench.explain import explain
from bench.measure import TARGET_P99_MS, Case, Measured, measure
from bench.mixed import IngestionStream, measure_pairs, report
from bench.prepare import (
    Clusters,
    graph_stats,
    prepare_clusters,
    prepare_deployment,
    read_beforehand,
)
from bench.services import ServiceProcess, cpu_idle_policy, free_port, start_graph
from bench.story import PROJECT, StoryPlan
from devtools import pgcluster
from devtools.pgcluster.processes import layout_of, postgres_processes
from load.targets import (
    Targets,
    add_arguments,
    binding_metadata,
    check_arguments,
)
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc


async def main_async(args: argparse.Namespace) -> None:
    if args.tree:
        await run(
            tree=args.tree,
            graph=args.graph,
            replica_dsn=args.replica_dsn,
            primary_dsn=args.primary_dsn,
            args=args,
            groups=lambda: {"this client": [os.getpid()]},
        )
        return
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
                tree=f"127.0.0.1:{tree.port}",
                graph=f"127.0.0.1:{graph.port}",
                replica_dsn=info.replica_dsn,
                primary_dsn=info.primary_dsn,
                args=args,
                groups=groups,
                split_cpus=split,
                clusters=Clusters(
                    info,
                    logs / "replica.log",
                    data_dir / "bench-loaded.json",
                    pgcluster.replica_data_folder(cfg),
                ),
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
    tree: str,
    graph: str,
    replica_dsn: str,
    primary_dsn: str,
    args: argparse.Namespace,
    groups: cpus.Groups,
    split_cpus: Callable[[], str] | None = None,
    clusters: Clusters | None = None,  # None: a deployment given by --tree and --graph
) -> None:
    seconds: float = args.seconds
    concurrency: int = args.concurrency
    plan = StoryPlan(args.objects, args.per_result, args.project)
    tree_channel = grpc.aio.insecure_channel(tree)
    graph_channel = grpc.aio.insecure_channel(graph)
    tree_stub = tree_pb2_grpc.TreeServiceStub(tree_channel)
    graph_stub = graph_pb2_grpc.StoryGraphStub(graph_channel)
    pool = await asyncpg.create_pool(replica_dsn, min_size=concurrency, max_size=concurrency)
    if clusters is not None:
        prepared = await prepare_clusters(clusters, tree_stub, plan, args)
    else:
        targets = Targets.from_env(tree, graph, "", plan.project)
        prepared = await prepare_deployment(
            targets, tree_stub, pool, plan, primary_dsn=primary_dsn, args=args
        )
    session, tree_md = prepared.session, prepared.tree_metadata
    graph_md = binding_metadata(session.binding_token) if session is not None else None
    await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="status",
            scope=project_scope([plan.project]),
            options=graph_pb2.ReadOptions(
                min_consistency=common_pb2.ConsistencyToken(lsn=prepared.lsn)
            ),
        ),
        metadata=graph_md,
        timeout=120,
    )
    async with pool.acquire() as conn:
        stats = await graph_stats(conn, plan)
    print(stats, flush=True)
    if clusters is not None:
        await read_beforehand(clusters, pool, prepared.prewarm, args)
    else:
        print(
            "the deployment's replica was not read before measuring: its caches hold what its "
            "traffic and this run's loading left there",
            flush=True,
        )

    if session is None:
        tree_id = (
            await tree_stub.CreateTree(
                tree_pb2.CreateTreeRequest(idempotency_key=uuid.uuid4().hex, title="b", owner="b")
            )
        ).tree.id
    else:
        tree_id = session.session_id

    async def append() -> object:
        return await tree_stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="benchmark question"
            ),
            metadata=tree_md,
        )

    reads = Reads(graph_stub, plan, graph_md)
    cases = [
        empty_call(graph_channel),
        point_query(pool, plan.point_key, "replica"),
        *await reads.cases(),
        Case("AskQuestion (append + idempotency key)", append),
    ]
    rows: list[Measured] = []
    for case in cases:
        rows.append(await measure(case, seconds, concurrency))
        print(
            f"  measured {case.name}: p50 {rows[-1].p50_ms:.2f} ms, p99 {rows[-1].p99_ms:.2f} ms, "
            f"{rows[-1].rate:,.0f} calls/s",
            flush=True,
        )

    base_p50, base_rate = combined(rows[0], rows[1])
    loaded_how = (
        "loaded by an earlier run"
        if prepared.load_s is None
        else f"loaded in {prepared.load_s:.1f} s ({plan.objects / prepared.load_s:,.0f} "
        f"objects/s through RecordReview, {args.load_concurrency} in flight)"
    )
    settled = (
        f"VACUUM ANALYZE {prepared.vacuum_s:.1f} s"
        if prepared.vacuum_s is not None
        else "no VACUUM ANALYZE (no --primary-dsn)"
    )
    measured_on = (
        f"shared_buffers {args.shared_buffers}"
        if clusters is not None
        else f"the deployment at {tree} and {graph}, project {plan.project}"
    )
    print()
    print(f"{plan.objects:,} searchable objects in {plan.results} results, {loaded_how}; {settled}")
    print(stats)
    print(
        f"baseline = empty gRPC call + raw asyncpg point query (p50 {base_p50:.2f} ms, "
        f"{base_rate:,.0f} calls/s combined); {concurrency} in flight; {seconds:g} s per phase; "
        f"{measured_on}; {args.cpu_idle}"
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
    if args.explain and slow and clusters is not None:
        await explain(
            replica_dsn, clusters.replica_log, plan, [row.case.name for row in slow], args
        )
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


DEFAULT_SHARED_BUFFERS = "4GB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument(
        "--project",
        default="",
        help=f"with --tree: the project the story graph goes into (default: a new {PROJECT}-…)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --tree and --project: measure the graph an earlier run loaded there",
    )
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
        default=DEFAULT_SHARED_BUFFERS,
        help="PostgreSQL shared_buffers of both clusters (a deployment's size, which holds the "
        "million-object graph; not the 128MB development default)",
    )
    args = parser.parse_args()
    if args.split_cpus and not args.ingest_rate:
        parser.error("--split-cpus applies to the reads measured with --ingest-rate; give both")
    if args.tree or args.graph:
        given_deployment(parser, args)
    elif args.project or args.reuse:
        parser.error(
            "--project and --reuse go with --tree (the own clusters keep theirs by --data-dir)"
        )
    else:
        args.project = PROJECT
    check_arguments(parser, args)
    with cpu_idle_policy(args.hold_cpus_awake) as args.cpu_idle:
        asyncio.run(main_async(args))


def given_deployment(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The checks of a run against a deployment given by --tree and --graph; its project."""
    if not (args.tree and args.graph):
        parser.error("--tree and --graph go together")
    if not args.replica_dsn:
        parser.error("--replica-dsn is needed with --tree: the raw point query runs there")
    own_clusters_only = {
        "--data-dir": args.data_dir,
        "--explain": args.explain,
        "--ingest-rate": args.ingest_rate,
        "--cold": args.cold,
        "--shared-buffers": args.shared_buffers != DEFAULT_SHARED_BUFFERS,
    }
    for option, given in own_clusters_only.items():
        if given:
            parser.error(f"{option} applies to the clusters bench.run starts, not to --tree")
    if args.reuse and not args.project:
        parser.error("--reuse needs the --project an earlier run loaded its graph into")
    args.project = args.project or f"{PROJECT}-{uuid.uuid4().hex[:8]}"


if __name__ == "__main__":
    main()
