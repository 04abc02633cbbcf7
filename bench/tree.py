"""Write-side benchmarks: node appends and bud streaming against pgbench on the same primary.

    python -m bench.tree [--seconds S] [--concurrency C] [--buds B]

Starts its own PostgreSQL primary + replica and tree_service, then measures in one run:

- pgbench's built-in TPC-B-like script (scale 1, C clients) on the same primary — the raw
  baseline of "small write transactions per second" on this machine right now;
- AskQuestion appends with C concurrent writers, each on its own tree and all on one tree;
- B buds streaming concurrently (each sends a chunk, waits for its acknowledgement, repeats):
  acknowledged chunks/s and acknowledgement latency p50/p99.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from bench.measure import pct, throughput
from bench.services import free_port
from devtools import pgcluster
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

Req = tree_pb2.StreamAnswerRequest


def pgbench_tps(cfg: pgcluster.ClusterConfig, seconds: float, clients: int) -> float:
    """TPS of pgbench's TPC-B-like script against the primary (initialised at scale 1)."""
    pgbench = str(pgcluster.find_pg_bindir() / "pgbench")
    target = ["-h", cfg.host, "-p", str(cfg.primary_port), "-U", cfg.user, cfg.database]
    subprocess.run([pgbench, "-i", "-q", "-s", "1", *target], check=True, capture_output=True)
    result = subprocess.run(
        [
            pgbench,
            "-c",
            str(clients),
            "-j",
            "2",
            "-T",
            str(int(seconds)),
            "-M",
            "prepared",
            *target,
        ],
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


async def buds(
    stub: tree_pb2_grpc.TreeServiceStub, seconds: float, count: int
) -> tuple[float, list[float]]:
    tree_id = await new_tree(stub)
    question = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="q")
    )
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def one_bud() -> int:
        queue: asyncio.Queue[Req | None] = asyncio.Queue()

        async def requests() -> AsyncIterator[Req]:
            while (message := await queue.get()) is not None:
                yield message

        call = stub.StreamAnswer(requests())
        await queue.put(
            Req(open=Req.Open(idempotency_key=uuid.uuid4().hex, question_id=question.node.id))
        )
        await call.read()
        seq = 0
        while time.perf_counter() < deadline:
            seq += 1
            started = time.perf_counter()
            await queue.put(Req(chunk=Req.Chunk(seq=seq, text=f"token {seq} ")))
            await call.read()
            latencies.append(time.perf_counter() - started)
        await queue.put(Req(complete=Req.Complete()))
        await call.read()
        await queue.put(None)
        return seq

    started = time.perf_counter()
    chunks = sum(await asyncio.gather(*(one_bud() for _ in range(count))))
    return chunks / (time.perf_counter() - started), latencies


async def main_async(seconds: float, concurrency: int, bud_count: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port()
    )
    try:
        info = pgcluster.start(cfg)
        service = await tree_app.start(
            TreeSettings(dsn=info.primary_dsn, listen="127.0.0.1:0", pool_max=40)
        )
        try:
            print(f"pgbench TPC-B-like, {concurrency} clients ...", flush=True)
            tps = await asyncio.to_thread(pgbench_tps, cfg, seconds, concurrency)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
                stub = tree_pb2_grpc.TreeServiceStub(channel)
                print("AskQuestion appends ...", flush=True)
                separate = await appends(stub, seconds, concurrency, shared=False)
                one_tree = await appends(stub, seconds, concurrency, shared=True)
                print(f"{bud_count} concurrent buds ...", flush=True)
                chunk_rate, latencies = await buds(stub, seconds, bud_count)
        finally:
            await service.stop()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)
    print()
    print(f"primary with fsync on; {concurrency} concurrent writers; {seconds:.0f} s per case")
    print()
    print("| case | per second | ÷ pgbench TPC-B TPS |")
    print("| --- | ---: | ---: |")
    print(f"| pgbench TPC-B-like transactions (baseline) | {tps:,.0f} | 1.00 |")
    print(f"| AskQuestion appends, one tree per writer | {separate:,.0f} | {separate / tps:.2f} |")
    print(
        f"| AskQuestion appends, all writers on one tree | {one_tree:,.0f} | {one_tree / tps:.2f} |"
    )
    print(
        f"| bud chunks acknowledged, {bud_count} buds | {chunk_rate:,.0f} | "
        f"{chunk_rate / tps:.2f} |"
    )
    print()
    print(
        f"chunk acknowledgement latency with {bud_count} buds: "
        f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {pct(latencies, 0.99):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--buds", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(main_async(args.seconds, args.concurrency, args.buds))


if __name__ == "__main__":
    main()
