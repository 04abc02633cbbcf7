"""Delegated tasks and WatchTree against pgbench on the same primary.

    python -m bench.tasks [--seconds S] [--workers W] [--rate R]

Starts its own PostgreSQL primary + replica and tree_service, then measures in one run:

- pgbench's built-in TPC-B-like script (scale 1, W clients) on the same primary — the raw
  baseline of "small write transactions per second" on this machine right now;
- W workers each looping ClaimTask → CompleteTask over a queue filled beforehand (tasks spread
  over W trees): task cycles per second, each cycle two writes, the second appending the
  observation node;
- one WatchTree stream on a tree while a writer appends R questions per second to it: the delay
  from each append's acknowledgement (and from its request) to its event reaching the watcher.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta

import grpc

from bench.measure import pct
from bench.tree import new_tree, pgbench_tps, scratch_primary_and_tree_service
from mirrortree.v1 import tasks_pb2, tree_pb2, tree_pb2_grpc

# Queued per expected cycle and second: enough that no worker finds the queue empty.
QUEUE_PER_SECOND = 400
# Writers sharing the paced appends, so a slow append does not hold up the schedule.
WATCH_WRITERS = 16


async def fill_queue(stub: tree_pb2_grpc.TreeServiceStub, trees: int, count: int) -> None:
    questions = []
    for _ in range(trees):
        tree_id = await new_tree(stub)
        question = await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="delegate me"
            )
        )
        questions.append(question.node.id)
    deadline = (datetime.now(UTC) + timedelta(hours=1)).isoformat()

    async def starter(offset: int) -> None:
        for i in range(offset, count, trees):
            await stub.StartTask(
                tasks_pb2.StartTaskRequest(
                    idempotency_key=uuid.uuid4().hex,
                    branch_node_id=questions[i % trees],
                    goal="benchmark task",
                    budget=tasks_pb2.TaskBudget(tokens=10_000, cost_micros=10_000, currency="EUR"),
                    deadline=deadline,
                    capability_scope=["bench"],
                    max_consecutive_failures=3,
                    started_by="bench",
                )
            )

    await asyncio.gather(*(starter(i) for i in range(trees)))


async def cycles(stub: tree_pb2_grpc.TreeServiceStub, seconds: float, workers: int) -> float:
    done = 0
    empty = 0
    stop_at = time.perf_counter() + seconds

    async def worker(name: str) -> None:
        nonlocal done, empty
        while time.perf_counter() < stop_at:
            claimed = await stub.ClaimTask(
                tasks_pb2.ClaimTaskRequest(
                    idempotency_key=uuid.uuid4().hex,
                    worker_id=name,
                    capabilities=["bench"],
                    lease_seconds=60,
                )
            )
            if not claimed.HasField("task"):
                empty += 1
                continue
            await stub.CompleteTask(
                tasks_pb2.CompleteTaskRequest(
                    idempotency_key=uuid.uuid4().hex,
                    task_id=claimed.task.id,
                    lease_token=claimed.lease_token,
                    result="benchmark result",
                    spend=tasks_pb2.TaskSpend(tokens=10, cost_micros=10),
                )
            )
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(f"w{i}") for i in range(workers)))
    if empty:
        print(f"warning: the queue ran dry {empty} times (raise QUEUE_PER_SECOND)", flush=True)
    return done / (time.perf_counter() - started)


async def watch_latency(
    stub: tree_pb2_grpc.TreeServiceStub, seconds: float, rate: float
) -> tuple[list[float], list[float], float]:
    """Per append: seconds from its acknowledgement, and from its request, to its event."""
    tree_id = await new_tree(stub)
    sent: dict[str, float] = {}
    acknowledged: dict[str, float] = {}
    delivered: dict[str, float] = {}
    call = stub.WatchTree(tasks_pb2.WatchTreeRequest(tree_id=tree_id))
    first = await call.read()
    assert first.heartbeat.caught_up

    async def watcher(expected: int) -> None:
        while len(delivered) < expected:
            item = await call.read()
            if item.HasField("event"):
                delivered[item.event.subject_id] = time.perf_counter()

    async def append() -> None:
        started = time.perf_counter()
        response = await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=uuid.uuid4().hex, tree_id=tree_id, text="watched"
            )
        )
        sent[response.node.id] = started
        acknowledged[response.node.id] = time.perf_counter()

    count = int(seconds * rate)
    watching = asyncio.ensure_future(watcher(count))
    begin = time.perf_counter()
    slots = iter(range(count))

    async def writer() -> None:
        # Paced: each append starts at its slot's time unless the writers are behind.
        for i in slots:
            await asyncio.sleep(max(0.0, begin + i / rate - time.perf_counter()))
            await append()

    await asyncio.gather(*(writer() for _ in range(WATCH_WRITERS)))
    achieved = count / (time.perf_counter() - begin)
    await asyncio.wait_for(watching, 60)
    call.cancel()
    from_ack = [max(0.0, delivered[n] - acknowledged[n]) for n in acknowledged]
    from_request = [delivered[n] - sent[n] for n in sent]
    return from_ack, from_request, achieved


async def main_async(seconds: float, workers: int, rate: float) -> None:
    async with scratch_primary_and_tree_service() as (cfg, port):
        print(f"pgbench TPC-B-like, {workers} clients ...", flush=True)
        tps = await asyncio.to_thread(pgbench_tps, cfg, max(1, round(seconds)), workers)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = tree_pb2_grpc.TreeServiceStub(channel)
            queued = int(QUEUE_PER_SECOND * seconds)
            print(f"queueing {queued} tasks ...", flush=True)
            await fill_queue(stub, workers, queued)
            print(f"{workers} workers claiming and completing ...", flush=True)
            rate_done = await cycles(stub, seconds, workers)
            print(f"task cycles/s: {rate_done:,.1f} (pgbench TPS {tps:,.1f})", flush=True)
            print(f"WatchTree under {rate:.0f} appends/s ...", flush=True)
            from_ack, from_request, achieved = await watch_latency(stub, seconds, rate)
    print()
    print(f"primary with fsync on; {workers} workers; {seconds:.0f} s per case")
    print()
    print("| case | per second | ÷ pgbench TPC-B TPS |")
    print("| --- | ---: | ---: |")
    print(f"| pgbench TPC-B-like transactions (baseline) | {tps:,.0f} | 1.00 |")
    print(
        f"| task cycles (ClaimTask + CompleteTask), {workers} workers | {rate_done:,.0f} | "
        f"{rate_done / tps:.2f} |"
    )
    print()
    print(
        f"WatchTree delivery under {achieved:.0f} appends/s ({len(from_ack)} events): "
        f"from the append's acknowledgement p50 {statistics.median(from_ack) * 1000:.1f} ms, "
        f"p99 {pct(from_ack, 0.99):.1f} ms; from its request p50 "
        f"{statistics.median(from_request) * 1000:.1f} ms, p99 {pct(from_request, 0.99):.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--rate", type=float, default=100.0)
    args = parser.parse_args()
    asyncio.run(main_async(args.seconds, args.workers, args.rate))


if __name__ == "__main__":
    main()
