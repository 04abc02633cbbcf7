"""Story-graph ingestion: RecordReview with N concurrent writers, next to a raw COPY of the same
rows in the same run.

    python -m bench.ingest [--objects 60000] [--per-result 1500] [--writers 4] [--scopes 1]
                           [--preload 0] [--shared-buffers 4GB]

Starts its own PostgreSQL primary + replica and tree_service (as deployed, its own process),
then records the story graph of bench.story (events, source references, leaf facts, entity
changes, relations; each entity a hub of about 1,000 events) through RecordReview, `--writers`
results in flight, spread over `--scopes` project scopes (one scope ingests one result at a
time, so with one scope the writers queue on it, as bench.run's loading does).

With --preload N, a graph of N objects is first recorded the same way under a project of its
own and settled (vacuumed and analyzed, as autovacuum would), so the measured scopes start
new in a large database: the case of a deployment that has served for a while.

The baseline: the same rows read back and COPYed again, under new result ids, straight into
graph_objects and graph_links (the same tables, so the same size and indexes; one transaction
per result, the same writers in flight). It is the floor any ingestion pays — storing the
objects and upkeeping their indexes — so the ratio says what validation, look-ups, hubs and
leaves add on top, and moves with the host as little as possible.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import grpc

from bench.measure import pct
from bench.prepare import SETTLE_GRAPH, load
from bench.services import ServiceProcess, free_port
from bench.story import StoryPlan
from devtools import pgcluster
from mirrortree.protoscope import project_scope
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tree_service.ingestion import queries


def results(
    plan: StoryPlan, scopes: int
) -> Iterator[tuple[int, int, tree_pb2.RecordReviewRequest]]:
    """(scope number, object count, request) of every result: each scope gets the whole story
    under its own project, the scopes' results interleaved, the entities' result first."""
    streams = [plan.requests() for _ in range(scopes)]
    live = list(enumerate(streams))
    while live:
        for item in list(live):
            s, stream = item
            got = next(stream, None)
            if got is None:
                live.remove(item)
            else:
                yield s, got[0], scoped(got[1], s)


def scoped(request: tree_pb2.RecordReviewRequest, s: int) -> tree_pb2.RecordReviewRequest:
    request.scope.CopyFrom(project_scope([f"bench-{s}"]))
    request.result_id = f"s{s}-{request.result_id}"
    request.idempotency_key = f"s{s}-{request.idempotency_key}"
    return request


async def ingest(
    stub: tree_pb2_grpc.TreeServiceStub, plan: StoryPlan, scopes: int, writers: int
) -> tuple[int, float, list[float], list[str]]:
    """(objects, seconds, per-call seconds of the results after each scope's first, result
    ids) of recording every result."""
    items = list(results(plan, scopes))
    firsts = items[:scopes]
    rest = iter(items[scopes:])
    samples: list[float] = []
    started = time.perf_counter()
    # The entities come first: later results name them.
    await asyncio.gather(*(stub.RecordReview(r, timeout=600) for _, _, r in firsts))

    async def writer() -> None:
        for _, _, request in rest:  # one shared iterator: each result is taken once
            t0 = time.perf_counter()
            await stub.RecordReview(request, timeout=600)
            samples.append(time.perf_counter() - t0)

    await asyncio.gather(*(writer() for _ in range(writers)))
    elapsed = time.perf_counter() - started
    return sum(c for _, c, _ in items), elapsed, samples, [r.result_id for _, _, r in items]


# A review result row for each raw copy, so the copied rows' foreign keys hold.
RAW_RESULTS = """
INSERT INTO review_results
SELECT (jsonb_populate_record(r, jsonb_build_object(
    'result_id', 'raw-' || r.result_id, 'graph_revision', nextval('graph_revision_seq')))).*
FROM review_results r WHERE r.result_id = ANY($1)
"""
RAW_COLUMNS = {
    "graph_objects": queries.GRAPH_OBJECT_COLUMNS,
    "graph_links": queries.GRAPH_LINK_COLUMNS,
}


async def raw_copy(dsn: str, result_ids: list[str], writers: int) -> tuple[int, float]:
    """(objects, seconds) of COPYing each result's stored objects and links again, under a
    new result id, into the same tables (same size, same indexes), one transaction per
    result, `writers` at a time."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(RAW_RESULTS, result_ids)
        batches = []
        for result_id in result_ids:
            batch = {}
            for table, cols in RAW_COLUMNS.items():
                rows = await conn.fetch(
                    f"SELECT {', '.join(cols)} FROM {table} WHERE result_id = $1", result_id
                )
                position = cols.index("result_id")
                batch[table] = [
                    (*r[:position], f"raw-{result_id}", *r[position + 1 :]) for r in rows
                ]
            batches.append(batch)
    finally:
        await conn.close()
    objects = sum(len(b["graph_objects"]) for b in batches)
    pool = await asyncpg.create_pool(dsn, min_size=writers, max_size=writers)
    try:
        work = iter(batches)

        async def writer() -> None:
            for batch in work:
                async with pool.acquire() as c, c.transaction():
                    for table, rows in batch.items():
                        if rows:
                            await c.copy_records_to_table(
                                table, records=rows, columns=RAW_COLUMNS[table]
                            )

        started = time.perf_counter()
        await asyncio.gather(*(writer() for _ in range(writers)))
        return objects, time.perf_counter() - started
    finally:
        await pool.close()


async def preload(stub: tree_pb2_grpc.TreeServiceStub, dsn: str, args: argparse.Namespace) -> None:
    """Record a graph of `args.preload` objects under a project of its own and settle it."""
    plan = StoryPlan(args.preload, args.per_result)
    print(f"preloading {plan.objects:,} objects ({args.writers} in flight) ...", flush=True)
    seconds = await load(stub, plan, args.writers)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(SETTLE_GRAPH)
    finally:
        await conn.close()
    print(f"preloaded in {seconds:.0f} s ({plan.objects / seconds:,.0f} objects/s)", flush=True)


async def main_async(args: argparse.Namespace) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir,
        primary_port=free_port(),
        replica_port=free_port(),
        fast=True,
        shared_buffers=args.shared_buffers,
    )
    plan = StoryPlan(args.objects // args.scopes, args.per_result)
    try:
        info = pgcluster.start(cfg)
        tree = await ServiceProcess.start(
            "tree_service",
            {"MIRRORTREE_TREE_DSN": info.primary_dsn},
            data_dir / "logs" / "tree_service.log",
        )
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{tree.port}") as channel:
                stub = tree_pb2_grpc.TreeServiceStub(channel)
                if args.preload:
                    await preload(stub, info.primary_dsn, args)
                print(
                    f"recording {plan.objects * args.scopes:,} objects in "
                    f"{plan.results * args.scopes} results over {args.scopes} scope(s), "
                    f"{args.writers} in flight ...",
                    flush=True,
                )
                objects, seconds, samples, result_ids = await ingest(
                    stub, plan, args.scopes, args.writers
                )
                print(
                    f"recorded in {seconds:.1f} s ({objects / seconds:,.0f} objects/s)", flush=True
                )
        finally:
            await tree.stop()
        print("copying the same rows raw ...", flush=True)
        raw_objects, raw_seconds = await raw_copy(info.primary_dsn, result_ids, args.writers)
        if raw_objects != objects:
            raise SystemExit(f"stored {raw_objects:,} objects, recorded {objects:,}")
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)
    rate, raw_rate = objects / seconds, raw_objects / raw_seconds
    per_call = plan.units_per_result * 30
    print()
    print(
        f"{objects:,} objects in {len(result_ids)} results ({per_call:,} objects each), "
        f"{args.scopes} scope(s), {args.writers} writers, "
        f"after {args.preload:,} objects preloaded"
    )
    print()
    print("| | objects/s | ÷ raw COPY | RecordReview p50 ms | p99 ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
        f"| RecordReview | {rate:,.0f} | {rate / raw_rate:.2f} | "
        f"{statistics.median(samples) * 1000:,.0f} | {pct(samples, 0.99):,.0f} |"
    )
    print(f"| raw COPY of the same rows | {raw_rate:,.0f} | 1.00 | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=60_000, help="objects over all scopes")
    parser.add_argument("--per-result", type=int, default=1_500, help="objects per result")
    parser.add_argument("--writers", type=int, default=4, help="RecordReview calls in flight")
    parser.add_argument("--scopes", type=int, default=1, help="project scopes written to")
    parser.add_argument(
        "--preload", type=int, default=0, help="objects recorded (another project) beforehand"
    )
    parser.add_argument(
        "--shared-buffers", default="4GB", help="both clusters' shared_buffers (as bench.run)"
    )
    args = parser.parse_args()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
