"""Shared leaves (G9): ingesting one corpus under a project and under Global, with and without
reuse — rows written and time.

    python -m bench.leaves [--messages 10000] [--per-review 100] [--concurrency 4]

Starts its own PostgreSQL primary + replica and tree_service, writes the corpus (messages in
one project), then reviews it twice per mode, first under the project, then under Global, each
message yielding two leaf facts (one source reference each):

- without reuse: reviews as before G9 (no declared extraction) — the baseline;
- with reuse: reviews declare their extraction; the Global pass links the project's leaves;
- planned: the Global reviewer asks PlanExtraction first and, finding nothing missing, sends
  no leaves at all (only the plan's time is the pass's).

Rows written are counted exactly (the story-graph and leaf tables before and after each pass).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import grpc

from bench.services import free_port
from devtools import pgcluster
from mirrortree.v1 import common_pb2, leaves_pb2, tree_pb2, tree_pb2_grpc
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

TABLES = (
    "review_results",
    "graph_objects",
    "graph_links",
    "context_members",
    "context_hubs",
    "context_citations",
    "context_counts",
    "context_summaries",
    "leaves",
    "leaf_uses",
    "leaf_extractions",
    "idempotency_keys",
)
CONTRACT = "bench-extraction/1"


def scope(project: str | None) -> common_pb2.Scope:
    value = common_pb2.Scope()
    if project is None:
        setattr(value, "global", True)  # `global` is a Python keyword
    else:
        value.projects.project_ids.append(project)
    return value


async def rows(conn: asyncpg.Connection) -> int:
    total = 0
    for table in TABLES:
        total += await conn.fetchval(f"SELECT count(*) FROM {table}")
    return int(total)


async def corpus(
    stub: tree_pb2_grpc.TreeServiceStub, project: str, messages: int, concurrency: int
) -> list[tuple[str, str]]:
    """`messages` questions in trees of `project`: (node id, text) each."""
    trees = []
    for _ in range(max(1, messages // 100)):
        created = await stub.CreateTree(
            tree_pb2.CreateTreeRequest(
                idempotency_key=uuid.uuid4().hex, title="bench", owner="b", project_id=project
            )
        )
        trees.append(created.tree.id)
    out: list[tuple[str, str]] = []
    sem = asyncio.Semaphore(concurrency)

    async def ask(i: int) -> None:
        text = f"Message {i}: we decided on option {i % 7} because of cost {i * 13 % 101}."
        async with sem:
            asked = await stub.AskQuestion(
                tree_pb2.AskQuestionRequest(
                    idempotency_key=uuid.uuid4().hex, tree_id=trees[i % len(trees)], text=text
                )
            )
        out.append((asked.node.id, text))

    await asyncio.gather(*(ask(i) for i in range(messages)))
    return out


def review(
    project: str | None, batch: list[tuple[str, str]], declare: bool
) -> tree_pb2.RecordReviewRequest:
    prefix = uuid.uuid4().hex[:8]
    refs, leaves, parts = [], [], []
    for m, (node, text) in enumerate(batch):
        cut = text.index(":")
        for j, (start, end) in enumerate(((0, cut), (cut + 2, len(text)))):
            ref_id = f"{prefix}-s{m}-{j}"
            refs.append(
                tree_pb2.SourceReferenceInput(
                    id=ref_id,
                    source_type="message",
                    source_id=node,
                    source_version="1",
                    fragment=text[start:end],
                    fragment_start=start,
                    fragment_end=end,
                )
            )
            leaves.append(
                tree_pb2.LeafFactInput(
                    id=f"{prefix}-l{m}-{j}",
                    text=f"fact {j} of {text[start:end]}",
                    source_reference_ids=[ref_id],
                )
            )
        parts.append(
            leaves_pb2.SourcePart(source_type="message", source_id=node, source_version="1")
        )
    request = tree_pb2.RecordReviewRequest(
        idempotency_key=uuid.uuid4().hex,
        result_id=f"bench-{uuid.uuid4().hex}",
        scope=scope(project),
        phase="daily",
        review_generated_at="2026-10-02T00:00:00Z",
        source_references=refs,
        leaf_facts=leaves,
    )
    if declare:
        request.leaf_extraction.CopyFrom(
            leaves_pb2.LeafExtraction(contract_version=CONTRACT, parts=parts)
        )
    return request


async def ingest(
    stub: tree_pb2_grpc.TreeServiceStub,
    conn: asyncpg.Connection,
    project: str | None,
    *,
    batches: list[list[tuple[str, str]]],
    declare: bool,
    concurrency: int,
) -> tuple[int, float]:
    """(rows written, seconds) of reviewing every batch under one scope."""
    before = await rows(conn)
    sem = asyncio.Semaphore(concurrency)

    async def one(batch: list[tuple[str, str]]) -> None:
        async with sem:
            await stub.RecordReview(review(project, batch, declare))

    started = time.perf_counter()
    await asyncio.gather(*(one(b) for b in batches))
    elapsed = time.perf_counter() - started
    return await rows(conn) - before, elapsed


async def plan_all(
    stub: tree_pb2_grpc.TreeServiceStub, batches: list[list[tuple[str, str]]]
) -> tuple[float, int]:
    """(seconds, code points still missing) of planning every batch under Global."""
    missing = 0
    started = time.perf_counter()
    for batch in batches:
        answer = await stub.PlanExtraction(
            leaves_pb2.PlanExtractionRequest(
                scope=scope(None),
                contract_version=CONTRACT,
                parts=[
                    leaves_pb2.SourcePart(source_type="message", source_id=n, source_version="1")
                    for n, _ in batch
                ],
            )
        )
        missing += sum(r.end - r.start for p in answer.parts for r in p.missing)
    return time.perf_counter() - started, missing


async def main_async(messages: int, per_review: int, concurrency: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port()
    )
    figures: dict[str, tuple[int, float]] = {}
    try:
        info = pgcluster.start(cfg)
        service = await tree_app.start(
            TreeSettings(dsn=info.primary_dsn, listen="127.0.0.1:0", pool_max=20)
        )
        conn = await asyncpg.connect(info.primary_dsn)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
                stub = tree_pb2_grpc.TreeServiceStub(channel)
                for mode, declare in (("without reuse", False), ("with reuse", True)):
                    project = f"bench-{uuid.uuid4().hex[:6]}"
                    print(f"{mode}: writing {messages:,} messages ...", flush=True)
                    written = await corpus(stub, project, messages, concurrency * 4)
                    batches = [
                        written[i : i + per_review] for i in range(0, len(written), per_review)
                    ]
                    figures[f"{mode}, project"] = await ingest(
                        stub,
                        conn,
                        project,
                        batches=batches,
                        declare=declare,
                        concurrency=concurrency,
                    )
                    figures[f"{mode}, Global"] = await ingest(
                        stub,
                        conn,
                        None,
                        batches=batches,
                        declare=declare,
                        concurrency=concurrency,
                    )
                    if declare:
                        seconds, missing = await plan_all(stub, batches)
                        assert missing == 0, f"{missing} code points left to extract"
                        figures["planned, Global"] = (0, seconds)
        finally:
            await conn.close()
            await service.stop()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)
    base_rows, base_s = figures["without reuse, Global"]
    both_rows = base_rows + figures["without reuse, project"][0]
    both_s = base_s + figures["without reuse, project"][1]
    print()
    print(
        f"{messages:,} messages, 2 leaf facts each, {per_review} messages per review, "
        f"{concurrency} concurrent reviews"
    )
    print()
    print("| pass | rows written | ÷ without reuse | seconds | ÷ without reuse |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (n, s) in figures.items():
        base_n, base_t = figures[
            "without reuse, project" if name.endswith("project") else "without reuse, Global"
        ]
        print(f"| {name} | {n:,} | {n / base_n:.2f} | {s:.1f} | {s / base_t:.2f} |")
    reuse_rows = figures["with reuse, project"][0] + figures["with reuse, Global"][0]
    reuse_s = figures["with reuse, project"][1] + figures["with reuse, Global"][1]
    print(
        f"| both scopes, with reuse ÷ without | {reuse_rows:,} ÷ {both_rows:,} | "
        f"{reuse_rows / both_rows:.2f} | {reuse_s:.1f} ÷ {both_s:.1f} | {reuse_s / both_s:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--per-review", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    asyncio.run(main_async(args.messages, args.per_review, args.concurrency))


if __name__ == "__main__":
    main()
