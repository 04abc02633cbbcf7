"""Benchmark of the read tier: how reads share out over replicas, read-your-writes latency, and
the error window when a replica dies.

    python -m bench.replicas [--objects N] [--seconds S] [--concurrency C] [--writers W]
                             [--rounds R]

Starts its own PostgreSQL primary and two streaming replicas (temporary folder, free ports) and
tree_service, loads a story graph of about N objects (bench.story), then, in one run:

- baselines: an empty gRPC call (grpc.health.v1 Check) and a raw asyncpg point query on a
  replica, C in flight, calls/s;
- the same Search (the common term, one page) with C calls in flight for S seconds through
  graph_service over one replica, over both, and through two graph_service processes over both
  (the client alternates between them) — each warmed up with C calls in flight, so that its
  pools hold all their connections, then the three measured in turn, R rounds of S / R
  seconds each, so that a change in the host's other load weighs on all three alike: calls/s,
  and each replica's share of the reads (from graph_service's own metrics), with the CPU
  seconds graph_service and the replicas spent, for the capacity model in docs/performance.md;
- read-your-writes: W writers each create a tree and at once Search (the rare term, one hit)
  with the write's consistency token; the time from the write's acknowledgement to that read's
  answer, p50/p99, beside the same read without the token;
- the error window: under C reads in flight, one replica is stopped (SIGKILL, immediate, fast)
  and started again; the span from the stop to the last failed read, the failed reads, and the
  time from the server accepting connections again until it serves reads again.

Figures are printed as Markdown tables, throughput as ratios against the baselines measured in
the same run (absolute numbers on shared machines are noise).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import re
import shutil
import statistics
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc

from bench.baselines import empty_call, point_query
from bench.measure import pct, throughput, warm_up
from bench.prepare import load
from bench.services import CURSOR_SECRET, ServiceProcess, free_port
from bench.story import PROJECT, TERMS, StoryPlan
from devtools import pgcluster
from devtools.pgcluster import faults
from devtools.pgcluster.processes import layout_of, postgres_processes
from load.targets import switch_app_on
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc

Call = Callable[[], Awaitable[object]]
TICKS = os.sysconf("SC_CLK_TCK")
WARM_UP_LOADED_S = 2.0


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds each process has used so far (Linux /proc)."""
    used: dict[int, float] = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / TICKS
    return used


def cpu_seconds(pids: list[int]) -> float:
    return sum(cpu_by_pid(pids).values())


def replicas_cpu(cfg: pgcluster.ClusterConfig) -> dict[int, float]:
    """CPU seconds of every process of every replica (backends come and go with the pools)."""
    return cpu_by_pid(
        [pid for n in layout_of(cfg).replicas for pid in postgres_processes(n.datadir)]
    )


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two readings; a process started in between counts from zero."""
    return sum(used - before.get(pid, 0.0) for pid, used in after.items())


@dataclass
class Graph:
    """graph_service processes over some replicas, with their metrics endpoints."""

    processes: list[ServiceProcess]
    metrics_ports: list[int]

    @classmethod
    async def start(cls, dsns: tuple[str, ...], count: int, logs: Path) -> Graph:
        processes, ports = [], []
        for i in range(count):
            port = free_port()
            processes.append(
                await ServiceProcess.start(
                    "graph_service",
                    {
                        "MIRRORTREE_GRAPH_REPLICA_DSNS": ",".join(dsns),
                        "MIRRORTREE_CURSOR_SECRET": CURSOR_SECRET,
                        "MIRRORTREE_GRAPH_METRICS": f"127.0.0.1:{port}",
                        "MIRRORTREE_GRAPH_HEALTH_INTERVAL_MS": "100",
                        "MIRRORTREE_GRAPH_ANONYMOUS_READS": "true",  # reads by explicit scope
                    },
                    logs / f"graph_service-{len(dsns)}r-{i}.log",
                )
            )
            ports.append(port)
        return cls(processes, ports)

    def served(self) -> dict[str, float]:
        """Reads each replica answered, summed over the processes."""
        total: dict[str, float] = {}
        for port in self.metrics_ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
                text = page.read().decode()
            for name, value in re.findall(
                r'^mirrortree_replica_reads_total\{replica="(\w+)"\} (\S+)$', text, re.M
            ):
                total[name] = total.get(name, 0.0) + float(value)
        return total

    def pids(self) -> list[int]:
        return [p.process.pid for p in self.processes]

    async def stop(self) -> None:
        for process in self.processes:
            await process.stop()


def search(stubs: list[graph_pb2_grpc.StoryGraphStub]) -> Call:
    turn = itertools.cycle(stubs)
    request = graph_pb2.SearchRequest(query="status", scope=project_scope([PROJECT]))

    async def call() -> object:
        return await next(turn).Search(request, timeout=30)

    return call


@dataclass
class Spread:
    """One setup's figures, summed over the rounds it was measured in."""

    setup: str
    graph: Graph
    calls: int = 0
    seconds: float = 0.0
    reads: dict[str, float] = field(default_factory=dict)
    graph_cpu_s: float = 0.0
    replica_cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    @property
    def shares(self) -> dict[str, float]:
        total = sum(self.reads.values()) or 1.0
        return {k: v / total for k, v in sorted(self.reads.items())}


async def spread(
    runs: list[Spread], cfg: pgcluster.ClusterConfig, args: argparse.Namespace
) -> None:
    """Measure every setup in turn, `args.rounds` times, each for seconds / rounds: a change in
    what else the host runs then weighs on every setup alike."""
    channels = {
        id(run): [grpc.aio.insecure_channel(f"127.0.0.1:{p.port}") for p in run.graph.processes]
        for run in runs
    }
    calls = {
        id(run): search([graph_pb2_grpc.StoryGraphStub(c) for c in channels[id(run)]])
        for run in runs
    }
    try:
        for run in runs:
            # With every call in flight, so each replica's pool opens (and prepares its
            # statements on) all the connections it will use before anything is measured.
            await throughput(calls[id(run)], WARM_UP_LOADED_S, args.concurrency)
        for _ in range(args.rounds):
            for run in runs:
                before, graph_before = run.graph.served(), cpu_seconds(run.graph.pids())
                replica_before = replicas_cpu(cfg)
                started = time.perf_counter()
                rate = await throughput(
                    calls[id(run)], args.seconds / args.rounds, args.concurrency
                )
                elapsed = time.perf_counter() - started
                after = run.graph.served()
                run.graph_cpu_s += cpu_seconds(run.graph.pids()) - graph_before
                run.replica_cpu_s += spent(replica_before, replicas_cpu(cfg))
                run.calls += round(rate * elapsed)
                run.seconds += elapsed
                for name, value in after.items():
                    run.reads[name] = run.reads.get(name, 0.0) + value - before.get(name, 0.0)
    finally:
        for group in channels.values():
            for channel in group:
                await channel.close()


async def read_your_writes(
    tree: tree_pb2_grpc.TreeServiceStub,
    graph: graph_pb2_grpc.StoryGraphStub,
    seconds: float,
    writers: int,
) -> tuple[list[float], list[float], int]:
    """Latency from a write's acknowledgement to the answer of a read that requires it, and of
    the same read without the token."""
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    failures = 0

    async def writer() -> None:
        nonlocal failures
        while time.perf_counter() < deadline:
            written = await tree.CreateTree(
                tree_pb2.CreateTreeRequest(
                    idempotency_key=uuid.uuid4().hex, title="t", owner="o", project_id=PROJECT
                )
            )
            acked = time.perf_counter()
            # A light read (a rare term, one hit), so the figure is mostly the wait for replay.
            request = graph_pb2.SearchRequest(
                query=TERMS["rare"],
                scope=project_scope([PROJECT]),
                page_size=1,
                options=graph_pb2.ReadOptions(min_consistency=written.consistency),
            )
            try:
                await graph.Search(request, timeout=30)
            except grpc.aio.AioRpcError:
                failures += 1
                continue
            samples.append(time.perf_counter() - acked)
            # The same read without the token, under the same load: what the read alone costs.
            request.options.Clear()
            started = time.perf_counter()
            await graph.Search(request, timeout=30)
            alone.append(time.perf_counter() - started)

    alone: list[float] = []
    await asyncio.gather(*(writer() for _ in range(writers)))
    return samples, alone, failures


@dataclass(frozen=True)
class Outage:
    how: str
    window_ms: float
    failed: int
    reads: int
    rejoin_ms: float


async def outage(
    how: faults.Stop, cfg: pgcluster.ClusterConfig, graph: Graph, concurrency: int
) -> Outage:
    """Stop the first replica under read load, start it again; see the module's docstring."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{graph.processes[0].port}")
    call = search([graph_pb2_grpc.StoryGraphStub(channel)])
    failures: list[float] = []
    reads = 0
    stop = asyncio.Event()

    async def reader() -> None:
        nonlocal reads
        while not stop.is_set():
            try:
                await call()
                reads += 1
            except grpc.aio.AioRpcError:
                failures.append(time.perf_counter())
                await asyncio.sleep(0.001)

    tasks = [asyncio.create_task(reader()) for _ in range(concurrency)]
    try:
        await asyncio.sleep(1.0)
        stopped = time.perf_counter()
        await asyncio.to_thread(faults.take_down, cfg, "replica", how)
        await asyncio.sleep(1.0)
        served = (await asyncio.to_thread(graph.served)).get("replica0", 0.0)
        await asyncio.to_thread(faults.restart, cfg, "replica")
        restarted = time.perf_counter()  # the server accepts connections again
        while True:  # back once it answers reads again
            now = await asyncio.to_thread(graph.served)
            if now.get("replica0", 0.0) > served:
                break
            await asyncio.sleep(0.005)
        rejoined = time.perf_counter()
        await asyncio.sleep(0.5)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        await channel.close()
    window = (max(failures) - stopped) * 1000 if failures else 0.0
    return Outage(how, window, len(failures), reads, (rejoined - restarted) * 1000)


async def baselines(
    graph_port: int, replica_dsn: str, plan: StoryPlan, seconds: float, concurrency: int
) -> tuple[float, float]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{graph_port}") as channel:
        empty = empty_call(channel).call
        await warm_up(empty)
        grpc_rate = await throughput(empty, seconds, concurrency)
    pool = await asyncpg.create_pool(replica_dsn, min_size=concurrency, max_size=concurrency)
    try:
        point = point_query(pool, plan.point_key, "replica").call
        await warm_up(point)
        sql_rate = await throughput(point, seconds, concurrency)
    finally:
        await pool.close()
    return grpc_rate, sql_rate


async def main_async(args: argparse.Namespace) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-replicas-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir,
        primary_port=free_port(),
        replica_port=free_port(),
        replicas=2,
        more_replica_ports=(free_port(),),
        fast=True,
    )
    logs = data_dir / "logs"
    try:
        info = pgcluster.start(cfg)
        tree = await ServiceProcess.start(
            "tree_service", {"MIRRORTREE_TREE_DSN": info.primary_dsn}, logs / "tree_service.log"
        )
        try:
            await measure(args, cfg, info, tree, logs)
        finally:
            await tree.stop()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)


async def measure(
    args: argparse.Namespace,
    cfg: pgcluster.ClusterConfig,
    info: pgcluster.ClusterInfo,
    tree: ServiceProcess,
    logs: Path,
) -> None:
    seconds, concurrency = args.seconds, args.concurrency
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tree.port}") as tree_channel:
        tree_stub = tree_pb2_grpc.TreeServiceStub(tree_channel)
        await switch_app_on(tree_stub)
        plan = StoryPlan(args.objects, 2_000)
        print(f"loading {plan.objects:,} objects ...", flush=True)
        await load(tree_stub, plan, 4)
        primary = await asyncpg.connect(info.primary_dsn)
        await primary.execute("VACUUM (ANALYZE) graph_objects, graph_links")
        lsn = await primary.fetchval("SELECT pg_current_wal_lsn()::text")
        await primary.close()

        one = await Graph.start(info.replica_dsns[:1], 1, logs)
        two = await Graph.start(info.replica_dsns, 1, logs)
        pair = await Graph.start(info.replica_dsns, 2, logs)
        try:
            stub = graph_pb2_grpc.StoryGraphStub(
                grpc.aio.insecure_channel(f"127.0.0.1:{one.processes[0].port}")
            )
            token = common_pb2.ConsistencyToken(lsn=lsn)
            await stub.Search(
                graph_pb2.SearchRequest(
                    query="status",
                    scope=project_scope([PROJECT]),
                    options=graph_pb2.ReadOptions(min_consistency=token),
                ),
                timeout=120,
            )
            grpc_rate, sql_rate = await baselines(
                one.processes[0].port, info.replica_dsn, plan, seconds, concurrency
            )
            runs = [
                Spread("1 graph_service, 1 replica", one),
                Spread("1 graph_service, 2 replicas", two),
                Spread("2 graph_service, 2 replicas", pair),
            ]
            await spread(runs, cfg, args)
            graph_stub = graph_pb2_grpc.StoryGraphStub(
                grpc.aio.insecure_channel(f"127.0.0.1:{two.processes[0].port}")
            )
            samples, alone, ryw_failed = await read_your_writes(
                tree_stub, graph_stub, seconds, args.writers
            )
            outages = [await outage(how, cfg, two, concurrency) for how in FAULTS]
        finally:
            for graph in (one, two, pair):
                await graph.stop()
    report(
        args=args,
        grpc_rate=grpc_rate,
        sql_rate=sql_rate,
        runs=runs,
        samples=samples,
        alone=alone,
        ryw_failed=ryw_failed,
        outages=outages,
    )


FAULTS: tuple[faults.Stop, ...] = ("sigkill", "immediate", "fast")


def report(
    *,
    args: argparse.Namespace,
    grpc_rate: float,
    sql_rate: float,
    runs: list[Spread],
    samples: list[float],
    alone: list[float],
    ryw_failed: int,
    outages: list[Outage],
) -> None:
    base = runs[0].rate
    print(
        f"\n{args.objects:,} objects, {args.concurrency} reads in flight, {args.seconds:g} s "
        f"per figure, {os.cpu_count()} CPUs\n"
    )
    print(
        "| setup | Search calls/s | vs 1 replica | vs empty gRPC | vs raw SQL | share per replica "
        "| reads per graph_service CPU-s | reads per replica CPU-s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for run in runs:
        shares = ", ".join(f"{k} {v:.0%}" for k, v in run.shares.items())
        reads = sum(run.reads.values())
        print(
            f"| {run.setup} | {run.rate:,.0f} | {run.rate / base:.2f}× | "
            f"{run.rate / grpc_rate:.2f}× | {run.rate / sql_rate:.2f}× | {shares} | "
            f"{reads / max(run.graph_cpu_s, 0.01):,.0f} | "
            f"{reads / max(run.replica_cpu_s, 0.01):,.0f} |"
        )
    print(f"\nbaselines: empty gRPC {grpc_rate:,.0f} calls/s, raw SQL {sql_rate:,.0f} queries/s")
    if samples:
        print(
            f"\nread-your-writes ({args.writers} writers, {len(samples)} writes): write ack → "
            f"token read answered p50 {statistics.median(samples) * 1000:.1f} ms, "
            f"p99 {pct(samples, 0.99):.1f} ms; failed token reads {ryw_failed}; the same read "
            f"without the token p50 {statistics.median(alone) * 1000:.1f} ms, "
            f"p99 {pct(alone, 0.99):.1f} ms"
        )
    print(
        "\n| replica stopped | error window | failed reads | reads during the test "
        "| serving again after its restart |"
    )
    print("| --- | --- | --- | --- | --- |")
    for o in outages:
        print(
            f"| {o.how} | {o.window_ms:.0f} ms | {o.failed} | {o.reads:,} | {o.rejoin_ms:.0f} ms |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
