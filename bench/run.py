"""Benchmarks: the story-graph reads against raw baselines measured in the same run.

    python -m bench.run [--objects N] [--seconds S] [--concurrency C] [--per-result N]
                        [--load-concurrency L] [--explain FILE] [--data-dir DIR]
                        [--shared-buffers SIZE] [--hold-cpus-awake] [--cold]

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

Figures are printed as a Markdown table with ratios against the baselines, because absolute
numbers on shared machines are noise; story-graph reads over the p99 target are called out.
With --explain FILE, each read over the target is run again through a second graph_service
whose replica sessions log their slow statements' plans (auto_explain, ANALYZE + BUFFERS),
and those plans are written to FILE.
With --data-dir DIR, the clusters live in DIR and are kept: a later run with the same DIR,
--objects and --per-result measures the graph already loaded there instead of loading it again.

With --hold-cpus-awake (root only), the run holds /dev/cpu_dma_latency at 0 µs: idle CPUs poll
instead of halting, as on hosts tuned for latency (tuned's latency-performance profile does the
same). On a virtual machine a halted vCPU can take 1–2 ms to wake, at random, on any round trip
between the services and PostgreSQL; sequential calls leave CPUs idle between round trips and
pay it, loaded servers do not. Measured here: a point query's round trip p90 1.5 ms with CPUs
halting, 0.11 ms held awake (p50 0.09 ms both). Which way the run went is printed with the
figures.

Before measuring, the replica's tables and indexes are read into its shared buffers
(pg_prewarm; where that extension is not installed, its files are read into the operating
system's cache instead), as on a replica that has been serving: "first read" cases measure
reads the services have not cached, not the disk. The default shared_buffers (4GB) holds the
million-object graph. Just after a restart, pages come from the operating system's cache or
from disk; this host reclaims its cache within minutes, and from disk a hub's first read
measured p50 37–87 ms and p99 270–690 ms. --cold measures that: nothing is read beforehand.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.story import DAY, MONTH, PROJECT, TERMS, WEEK, StoryPlan
from devtools import pgcluster
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc

TARGET_P99_MS = 25.0
WARM_UP_CALLS = 20
WARM_UP_S = 2.0
CURSOR_SECRET = "bench-secret-bench-secret-bench-secret!"
SERVICE_START_S = 60.0
# Statements slower than this are logged with their plans in the --explain pass.
EXPLAIN_MIN_MS = 2
EXPLAIN_CALLS = 3

Call = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Case:
    name: str
    call: Call
    graph_read: bool = False  # a story-graph read, held to the p99 target


@dataclass(frozen=True)
class Measured:
    case: Case
    samples: list[float]
    rate: float

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.samples) * 1000

    @property
    def p99_ms(self) -> float:
        return pct(self.samples, 0.99)

    @property
    def over_target(self) -> bool:
        return self.case.graph_read and self.p99_ms > TARGET_P99_MS


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def load(stub: tree_pb2_grpc.TreeServiceStub, plan: StoryPlan, in_flight: int) -> float:
    """Record every result of the plan, `in_flight` at a time; returns the seconds taken."""
    requests = plan.requests()
    loaded = 0
    next_report = 0.1
    started = time.perf_counter()

    async def record(count: int, request: tree_pb2.RecordReviewRequest) -> None:
        nonlocal loaded, next_report
        await stub.RecordReview(request, timeout=600)
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


async def warm_up(call: Call) -> None:
    """Connections, prepared statements, caches: a few calls, bounded in time for slow ones."""
    deadline = time.perf_counter() + WARM_UP_S
    for _ in range(WARM_UP_CALLS):
        await call()
        if time.perf_counter() > deadline:
            return


async def sequential(call: Call, seconds: float) -> list[float]:
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def throughput(call: Call, seconds: float, workers: int) -> float:
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


@dataclass
class ServiceProcess:
    """A service run as it is deployed: `python -m <module>`, configured by its environment."""

    process: asyncio.subprocess.Process
    port: int

    @classmethod
    async def start(cls, module: str, env: dict[str, str], log: Path) -> ServiceProcess:
        """Start `module` listening on a free port (its *_LISTEN variable is added to `env`)
        and wait until it serves."""
        port = free_port()
        listen = "MIRRORTREE_TREE_LISTEN" if module == "tree_service" else "MIRRORTREE_GRAPH_LISTEN"
        with log.open("ab") as output:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                module,
                env={
                    **os.environ,
                    "MIRRORTREE_LOG_LEVEL": "warning",
                    **env,
                    listen: f"127.0.0.1:{port}",
                },
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        service = cls(process, port)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        try:
            deadline = time.monotonic() + SERVICE_START_S
            while process.returncode is None and time.monotonic() < deadline:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(channel.channel_ready(), 0.5)
                    return service
        finally:
            await channel.close()
        failure = (
            f"exited with status {process.returncode}"
            if process.returncode is not None
            else f"did not serve within {SERVICE_START_S:g} s"
        )
        await service.stop()
        raise SystemExit(f"{module} {failure}; see {log}")

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.terminate()
            await self.process.wait()


def start_graph(replica_dsn: str, log: Path) -> Awaitable[ServiceProcess]:
    return ServiceProcess.start(
        "graph_service",
        {
            "MIRRORTREE_GRAPH_REPLICA_DSNS": replica_dsn,
            "MIRRORTREE_CURSOR_SECRET": CURSOR_SECRET,
        },
        log,
    )


@contextlib.contextmanager
def cpu_idle_policy(hold_awake: bool) -> Iterator[str]:
    """Hold idle CPUs awake for the run (see the module docstring); yields how they idle."""
    if not hold_awake:
        yield "CPUs idle as the host sets them"
        return
    try:
        request = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    except OSError as exc:
        raise SystemExit(
            f"--hold-cpus-awake needs write access to /dev/cpu_dma_latency: {exc}"
        ) from None
    try:
        # The request holds while the file stays open (the kernel's PM QoS interface).
        os.write(request, struct.pack("i", 0))
        yield "idle CPUs held awake (/dev/cpu_dma_latency = 0 µs)"
    finally:
        os.close(request)


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
        try:
            await run(
                info=info,
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


class Reads:
    """The story-graph calls of the benchmark, against one graph_service."""

    def __init__(self, stub: graph_pb2_grpc.StoryGraphStub, plan: StoryPlan) -> None:
        self.stub = stub
        self.plan = plan
        self.scope = project_scope([PROJECT])

    def search(
        self,
        term: str,
        *,
        within: tuple[str, str] | None = None,
        types: tuple[common_pb2.ObjectType, ...] = (),
    ) -> graph_pb2.SearchRequest:
        request = graph_pb2.SearchRequest(
            query=term, scope=self.scope, object_types=list(types), time_basis=common_pb2.EVENT_TIME
        )
        if within:
            setattr(request.time_range, "from", within[0])
            request.time_range.to = within[1]
        return request

    def context(
        self,
        kind: common_pb2.ObjectType,
        object_id: str,
        mode: graph_pb2.ContextMode,
        cursor: str = "",
    ) -> graph_pb2.GetContextRequest:
        return graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=kind, id=object_id),
            scope=self.scope,
            mode=mode,
            page_size=10,
            cursor=cursor,
        )

    async def hub_events_cursor(self) -> str:
        """The cursor of the hub's second page of events (current mode)."""
        first = await self.stub.GetContext(
            self.context(common_pb2.ENTITY, self.plan.hub_entity, graph_pb2.CURRENT), timeout=120
        )
        for collection in first.collections:
            if collection.name == "events":
                if not collection.page.next_cursor:
                    raise RuntimeError("the hub entity has a single page of events")
                return str(collection.page.next_cursor)
        raise RuntimeError("GetContext returned no events collection")

    async def cases(self) -> list[Case]:
        stub, plan = self.stub, self.plan

        def searching(request: graph_pb2.SearchRequest) -> Call:
            return lambda: stub.Search(request)

        def reading(request: graph_pb2.GetContextRequest) -> Call:
            return lambda: stub.GetContext(request)

        def reading_each(kind: common_pb2.ObjectType, ids: list[str]) -> Call:
            """Each call reads the next object: its neighbourhood is not cached yet. (Requests
            are made per call: tens of thousands held at once would burden the garbage
            collector of this process, which also runs the services.)"""
            turn = itertools.count()
            return lambda: stub.GetContext(
                self.context(kind, ids[next(turn) % len(ids)], graph_pb2.CURRENT)
            )

        source = graph_pb2.ReadSourceRequest(
            source_reference_id=plan.source_reference,
            scope=self.scope,
            read_kind=graph_pb2.SNAPSHOT,
        )
        month = f"{MONTH[0][:10]}..{MONTH[1][:10]}"
        return [
            *(
                Case(f"Search, {cls} term '{term}'", searching(self.search(term)), True)
                for cls, term in TERMS.items()
            ),
            *(
                Case(
                    f"Search, {cls} term, event time in one {length} ({dates})",
                    searching(self.search(TERMS[cls], within=within)),
                    True,
                )
                for length, within, dates in (
                    ("month", MONTH, month),
                    ("week", WEEK, f"{WEEK[0][:10]}..{WEEK[1][:10]}"),
                    ("day", DAY, DAY[0][:10]),
                )
                for cls in TERMS
            ),
            *(
                Case(
                    f"Search, {cls} term, object_types=[EVENT]",
                    searching(self.search(TERMS[cls], types=(common_pb2.EVENT,))),
                    True,
                )
                for cls in ("medium", "common")
            ),
            Case(
                "GetContext current, event with relations, first read (page_size 10)",
                reading_each(common_pb2.EVENT, plan.related_events),
                True,
            ),
            Case(
                "GetContext current, event with relations, read again (page_size 10)",
                reading(self.context(common_pb2.EVENT, plan.related_event, graph_pb2.CURRENT)),
                True,
            ),
            Case(
                "GetContext current, hub entity (~1,000 events), first read (page_size 10)",
                reading_each(common_pb2.ENTITY, plan.hub_entities),
                True,
            ),
            Case(
                "GetContext current, hub entity, read again (page_size 10)",
                reading(self.context(common_pb2.ENTITY, plan.hub_entity, graph_pb2.CURRENT)),
                True,
            ),
            Case(
                "GetContext timeline, hub entity (page_size 10)",
                reading(self.context(common_pb2.ENTITY, plan.hub_entity, graph_pb2.TIMELINE)),
                True,
            ),
            Case(
                "GetContext cursor: hub entity's events, page 2",
                reading(
                    self.context(
                        common_pb2.ENTITY,
                        plan.hub_entity,
                        graph_pb2.CURRENT,
                        await self.hub_events_cursor(),
                    )
                ),
                True,
            ),
            Case(
                "ReadSource snapshot of a source reference", lambda: stub.ReadSource(source), True
            ),
        ]


async def switch_app_on(stub: tree_pb2_grpc.TreeServiceStub) -> None:
    """The supervisor app gates the story-graph reads, and new installations start it off."""
    current = await stub.GetSettings(tree_pb2.GetSettingsRequest())
    if not current.heartbeat_enabled:
        await stub.SetAppEnabled(
            tree_pb2.SetAppEnabledRequest(
                idempotency_key=uuid.uuid4().hex,
                enabled=True,
                expected_revision=current.app_revision,
            )
        )


async def graph_stats(conn: asyncpg.Connection, plan: StoryPlan) -> str:
    by_type = await conn.fetch(
        "SELECT object_type, count(*) AS n FROM graph_objects GROUP BY 1 ORDER BY 2 DESC"
    )
    links = await conn.fetchval("SELECT count(*) FROM graph_links")
    hub = await conn.fetch(
        "SELECT from_type, count(*) AS n FROM graph_links WHERE to_type = 'entity' AND to_id = $1 "
        "GROUP BY 1 ORDER BY 2 DESC",
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


async def run(
    *,
    info: pgcluster.ClusterInfo,
    replica_log: Path,
    tree_port: int,
    graph_port: int,
    args: argparse.Namespace,
    loaded_marker: Path,
    replica_files: Path,
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
    # What autovacuum would soon do after a bulk insert; done now so that it does not run in
    # the middle of a measurement. Planner statistics and the visibility map (index-only
    # scans of the hubs' tables) replicate.
    await primary.execute(
        "VACUUM (ANALYZE) graph_objects, graph_links, review_results, context_hubs, "
        "context_members, context_citations, context_counts"
    )
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
    await pool.close()
    await tree_channel.close()
    await graph_channel.close()


async def explain(
    replica_dsn: str,
    replica_log: Path,
    plan: StoryPlan,
    names: list[str],
    args: argparse.Namespace,
) -> None:
    """Run the named cases through a graph_service whose sessions log slow plans, and write
    each case's plans to args.explain."""
    settings = {
        "session_preload_libraries": "auto_explain",
        "auto_explain.log_min_duration": str(EXPLAIN_MIN_MS),
        "auto_explain.log_analyze": "on",
        "auto_explain.log_buffers": "on",
        "auto_explain.log_timing": "on",
        "auto_explain.log_nested_statements": "on",
    }
    graph = await start_graph(
        f"{replica_dsn}?{urlencode(settings)}", replica_log.parent / "graph_service_explain.log"
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{graph.port}")
    sections: list[str] = []
    try:
        stub = graph_pb2_grpc.StoryGraphStub(channel)
        cases = {c.name: c for c in await Reads(stub, plan).cases()}
        for name in names:
            before = replica_log.stat().st_size  # noqa: ASYNC240 - a stat, not worth a thread
            for _ in range(EXPLAIN_CALLS):
                await cases[name].call()
            await asyncio.sleep(0.5)  # let the server flush its log
            logged = await asyncio.to_thread(read_from, replica_log, before)
            durations = [float(d) for d in re.findall(r"duration: ([0-9.]+) ms\s+plan:", logged)]
            cancelled = logged.count("canceling statement due to statement timeout")
            slowest = ", ".join(f"{d:.1f}" for d in sorted(durations, reverse=True)[:4])
            summary = (
                f"{name}: per call {len(durations) / EXPLAIN_CALLS:.1f} statements over "
                f"{EXPLAIN_MIN_MS} ms taking {sum(durations) / EXPLAIN_CALLS:.1f} ms, "
                f"{cancelled / EXPLAIN_CALLS:.1f} cancelled by a statement timeout; slowest "
                f"{slowest or '-'} ms"
            )
            print(f"  {summary}")
            sections.append(f"===== {summary}\n{logged}")
        await asyncio.to_thread(Path(args.explain).write_text, "\n".join(sections))
        print(f"plans of the slow reads' statements written to {args.explain}")
    finally:
        await channel.close()
        await graph.stop()


def read_marker(path: Path) -> dict[str, Any] | None:
    """What an earlier run with --data-dir loaded there, if anything."""
    return json.loads(path.read_text()) if path.exists() else None


def read_from(path: Path, offset: int) -> str:
    with path.open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


# Every table and index of the graph into shared buffers, smallest first (what does not fit
# is then the largest, least read: the text indexes); the blocks read.
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
        "--explain", default="", help="write the plans of reads over the p99 target to this file"
    )
    parser.add_argument(
        "--data-dir", default="", help="keep the clusters here and reuse the graph they hold"
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
    with cpu_idle_policy(args.hold_cpus_awake) as args.cpu_idle:
        asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
