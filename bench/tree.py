"""Write-side benchmarks: node appends and bud streaming against pgbench on the same primary.

    python -m bench.tree [--seconds S] [--rounds R] [--concurrency C] [--buds B] [--in-process]

Starts its own PostgreSQL primary + replica and tree_service (its own process, as deployed;
`--in-process` runs it in the benchmark's own process and event loop instead), then measures in
one run, in R rounds that each give every case S / R seconds in turn, so that the host's other
load weighs on the baseline and the cases alike:

- pgbench's built-in TPC-B-like script (scale 1, C clients) on the same primary — the raw
  baseline of "small write transactions per second" on this machine right now;
- AskQuestion appends with C concurrent writers, each on its own tree and all on one tree;
- AddAnswer appends with C concurrent writers, each on its own tree: a write that passes the
  gate (safety stops, quota) where a question does not;
- B buds streaming concurrently (each sends a chunk, waits for its acknowledgement, repeats):
  acknowledged chunks/s and acknowledgement latency p50/p99.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from bench.measure import pct, throughput
from bench.services import ServiceProcess, free_port
from devtools import pgcluster
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

Req = tree_pb2.StreamAnswerRequest


def pgbench_command(cfg: pgcluster.ClusterConfig) -> tuple[str, list[str]]:
    pgbench = str(pgcluster.find_pg_bindir() / "pgbench")
    return pgbench, ["-h", cfg.host, "-p", str(cfg.primary_port), "-U", cfg.user, cfg.database]


def pgbench_init(cfg: pgcluster.ClusterConfig) -> None:
    pgbench, target = pgbench_command(cfg)
    subprocess.run([pgbench, "-i", "-q", "-s", "1", *target], check=True, capture_output=True)


def pgbench_tps(cfg: pgcluster.ClusterConfig, seconds: int, clients: int) -> float:
    """TPS of pgbench's TPC-B-like script against the primary (initialised at scale 1)."""
    pgbench, target = pgbench_command(cfg)
    result = subprocess.run(
        [pgbench, "-c", str(clients), "-j", "2", "-T", str(seconds), "-M", "prepared", *target],
        check=True,
        capture_output=True,
        text=True,
    )
    match = re.search(r"tps = ([\d.]+)", result.stdout)
    if match is None:
        raise RuntimeError(f"unexpected pgbench output:\n{result.stdout}")
    return float(match.group(1))


async def new_tree(stub: tree_pb2_grpc.TreeServiceStub) -> str:
    response = await stub.CreateTree(
        tree_pb2.CreateTreeRequest(idempotency_key=uuid.uuid4().hex, title="bench", owner="b")
    )
    return str(response.tree.id)


async def appends(
    stub: tree_pb2_grpc.TreeServiceStub, seconds: float, workers: int, shared: bool
) -> float:
    trees = (
        [await new_tree(stub)] * workers
        if shared
        else [await new_tree(stub) for _ in range(workers)]
    )
    turn = iter(range(10**9))

    async def append() -> object:
        tree_id = trees[next(turn) % workers]
        return await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="benchmark question"
            )
        )

    return await throughput(append, seconds, workers)


async def answers(stub: tree_pb2_grpc.TreeServiceStub, seconds: float, workers: int) -> float:
    questions = []
    for _ in range(workers):
        tree_id = await new_tree(stub)
        asked = await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="q")
        )
        questions.append(asked.node.id)
    turn = iter(range(10**9))

    async def answer() -> object:
        return await stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=uuid.uuid4().hex,
                question_id=questions[next(turn) % workers],
                text="benchmark answer",
            )
        )

    return await throughput(answer, seconds, workers)


async def buds(
    stub: tree_pb2_grpc.TreeServiceStub, seconds: float, count: int
) -> tuple[float, list[float]]:
    tree_id = await new_tree(stub)
    question = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="q")
    )
    latencies: list[float] = []
    # Chunks are counted from the moment every bud is open until the last one's last ack.
    all_open = asyncio.Event()
    opened = 0
    window = [0.0, 0.0]  # start, last acknowledgement

    async def one_bud() -> int:
        nonlocal opened
        queue: asyncio.Queue[Req | None] = asyncio.Queue()

        async def requests() -> AsyncIterator[Req]:
            while (message := await queue.get()) is not None:
                yield message

        call = stub.StreamAnswer(requests())
        await queue.put(
            Req(open=Req.Open(idempotency_key=uuid.uuid4().hex, question_id=question.node.id))
        )
        await call.read()
        opened += 1
        if opened == count:
            window[0] = time.perf_counter()
            all_open.set()
        await all_open.wait()
        deadline = window[0] + seconds
        seq = 0
        while seq == 0 or time.perf_counter() < deadline:
            seq += 1
            started = time.perf_counter()
            await queue.put(Req(chunk=Req.Chunk(seq=seq, text=f"token {seq} ")))
            await call.read()
            acked = time.perf_counter()
            latencies.append(acked - started)
            window[1] = max(window[1], acked)
        await queue.put(Req(complete=Req.Complete()))
        await call.read()
        await queue.put(None)
        return seq

    chunks = sum(await asyncio.gather(*(one_bud() for _ in range(count))))
    return chunks / (window[1] - window[0]), latencies


@dataclass
class Rounds:
    """Each case's rate per round, and the chunk acknowledgement latencies of every round."""

    rates: dict[str, list[float]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    def add(self, case: str, rate: float) -> None:
        self.rates.setdefault(case, []).append(rate)

    def rate(self, case: str) -> float:
        return statistics.mean(self.rates[case])  # every round gives each case the same time

    def ratios(self, case: str) -> list[float]:
        return [r / b for r, b in zip(self.rates[case], self.rates[BASELINE], strict=True)]


BASELINE = "pgbench TPC-B-like transactions (baseline)"
SEPARATE = "AskQuestion appends, one tree per writer"
SHARED = "AskQuestion appends, all writers on one tree"
ANSWERS = "AddAnswer appends, one tree per writer"


@contextlib.asynccontextmanager
async def tree_service(dsn: str, in_process: bool, log: Path) -> AsyncIterator[int]:
    """tree_service on the primary `dsn`; yields its port."""
    if in_process:
        service = await tree_app.start(TreeSettings(dsn=dsn, listen="127.0.0.1:0", pool_max=40))
        try:
            yield service.port
        finally:
            await service.stop()
        return
    process = await ServiceProcess.start(
        "tree_service", {"MIRRORTREE_TREE_DSN": dsn, "MIRRORTREE_TREE_POOL_MAX": "40"}, log
    )
    try:
        yield process.port
    finally:
        await process.stop()


async def measure(
    cfg: pgcluster.ClusterConfig, port: int, args: argparse.Namespace, buds_case: str
) -> Rounds:
    rounds = Rounds()
    piece = args.seconds / args.rounds
    await asyncio.to_thread(pgbench_init, cfg)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        for turn in range(1, args.rounds + 1):
            print(f"round {turn} of {args.rounds} ...", flush=True)
            tps = await asyncio.to_thread(pgbench_tps, cfg, max(1, round(piece)), args.concurrency)
            rounds.add(BASELINE, tps)
            rounds.add(SEPARATE, await appends(stub, piece, args.concurrency, shared=False))
            rounds.add(SHARED, await appends(stub, piece, args.concurrency, shared=True))
            rounds.add(ANSWERS, await answers(stub, piece, args.concurrency))
            chunk_rate, latencies = await buds(stub, piece, args.buds)
            rounds.add(buds_case, chunk_rate)
            rounds.latencies += latencies
    return rounds


@contextlib.asynccontextmanager
async def scratch_primary_and_tree_service(
    pool_max: int = 40,
) -> AsyncIterator[tuple[pgcluster.ClusterConfig, int]]:
    """A scratch primary, removed afterwards, with pgbench's tables and tree_service in this
    process on it: the cluster's config (for pgbench) and the service's port."""
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port()
    )
    try:
        info = pgcluster.start(cfg)
        await asyncio.to_thread(pgbench_init, cfg)
        service = await tree_app.start(
            TreeSettings(dsn=info.primary_dsn, listen="127.0.0.1:0", pool_max=pool_max)
        )
        try:
            yield cfg, service.port
        finally:
            await service.stop()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)


async def main_async(args: argparse.Namespace) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port()
    )
    buds_case = f"bud chunks acknowledged, {args.buds} concurrent buds"
    try:
        info = pgcluster.start(cfg)
        log = data_dir / "tree_service.log"
        async with tree_service(info.primary_dsn, args.in_process, log) as port:
            rounds = await measure(cfg, port, args, buds_case)
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)
    where = "in the benchmark's process" if args.in_process else "its own process"
    print()
    print(
        f"primary with fsync on; tree_service {where}; {args.concurrency} concurrent writers; "
        f"{args.rounds} rounds of {args.seconds / args.rounds:.0f} s per case"
    )
    print()
    print("| case | per second | ÷ pgbench TPC-B TPS | ÷ pgbench, per round |")
    print("| --- | ---: | ---: | --- |")
    baseline = rounds.rate(BASELINE)
    for case in (BASELINE, SEPARATE, SHARED, ANSWERS, buds_case):
        per_round = " / ".join(f"{r:.2f}" for r in rounds.ratios(case))
        rate = rounds.rate(case)
        print(f"| {case} | {rate:,.0f} | {rate / baseline:.2f} | {per_round} |")
    print()
    print(
        f"chunk acknowledgement latency with {args.buds} buds: "
        f"p50 {statistics.median(rounds.latencies) * 1000:.1f} ms, "
        f"p99 {pct(rounds.latencies, 0.99):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per case, over all rounds")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--buds", type=int, default=100)
    parser.add_argument("--in-process", action="store_true")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
