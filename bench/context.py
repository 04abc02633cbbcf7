"""Context assembly benchmark: AssembleContext against GetPath of the same node, in one run.

    python -m bench.context [--seconds S] [--nodes N] [--citations C]

Starts its own PostgreSQL primary + replica and tree_service, then builds one tree of about
N nodes: a line of 200 questions and answers (the path of the node measured, 400 nodes deep)
with every other node a sibling answer beside it, C citations held by the path's questions
(each cites a sibling answer; the last question's are its explicit anchors), tool results on
every fourth answer, an attachment with a retrieved fragment on every tenth question, three
preferences of the tree's project, and a caller-written summary of every older ancestor, tool
result and side-branch citation. The budget is chosen from a first, unbounded assembly so that
every layer is used: the mandatory part verbatim, summaries in all three summarized layers,
the fragments, and omissions.

Then, for S seconds each and one call at a time: GetPath of the last question (the whole path
in one page) — the raw baseline of reading that node's ancestors — and AssembleContext of the
same node (a write: it records the context version). Printed as p50/p99 and as ratios to
GetPath's.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import grpc

from bench.measure import pct, sequential, warm_up
from bench.services import free_port
from devtools import pgcluster
from mirrortree.v1 import common_pb2, tree_pb2, tree_pb2_grpc
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

LEVELS = 200  # questions on the measured path (and as many answers)
PROJECT = "bench-context"
TEXT = "The offsite plan keeps changing as we learn more about venues, trains and budgets. "


def key() -> str:
    return uuid.uuid4().hex


class Builder:
    """Builds the benchmark's tree through TreeService, as a runtime would."""

    def __init__(self, stub: tree_pb2_grpc.TreeServiceStub, nodes: int, citations: int) -> None:
        self.stub = stub
        self.siblings = max(0, (nodes - 2 * LEVELS) // LEVELS)
        self.citations = citations
        self.summaries = 0

    async def ask(self, tree_id: str, parent: str, level: int, cited: list[str]) -> Any:
        attachments = []
        if level % 10 == 0:
            attachments = [
                tree_pb2.Attachment(
                    id=f"doc-{level}",
                    name="venues.txt",
                    media_type="text/plain",
                    text_length=100_000,
                )
            ]
        response = await self.stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=key(),
                tree_id=tree_id,
                parent_id=parent,
                text=f"Question {level}: {TEXT * 3}",
                attachments=attachments,
                citations=[tree_pb2.Citation(node_id=n, start=0, end=120) for n in cited],
            )
        )
        return response.node

    async def answer(self, question: str, level: int, tools: bool) -> Any:
        trace = [
            tree_pb2.ToolTraceEntry(
                tool="search", input_summary=f"venues {level}", output_summary=TEXT * 4
            )
        ]
        response = await self.stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=key(),
                question_id=question,
                text=f"Answer {level}: {TEXT * 4}",
                content=tree_pb2.GeneratedContent(tool_trace=trace if tools else []),
            )
        )
        return response.node

    async def summarize(self, subject: str, text: str) -> None:
        await self.stub.RecordContextSummary(
            tree_pb2.RecordContextSummaryRequest(
                idempotency_key=key(), subject=subject, text=text, written_by="bench"
            )
        )
        self.summaries += 1

    async def build(self) -> tuple[str, list[tree_pb2.AttachmentFragment]]:
        tree = await self.stub.CreateTree(
            tree_pb2.CreateTreeRequest(
                idempotency_key=key(), title="offsite", owner="bench", project_id=PROJECT
            )
        )
        tree_id = tree.tree.id
        for i in range(3):
            await self.stub.SetPreference(
                tree_pb2.SetPreferenceRequest(
                    idempotency_key=key(),
                    preference_id=f"bench-pref-{i}",
                    scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[PROJECT])),
                    subject=f"preference {i}",
                    text="prefers trains over planes and quiet venues",
                    confirmed_by="bench",
                )
            )
        per_question = -(-self.citations // LEVELS)  # spread over the path's questions
        remaining = self.citations
        parent = ""
        sides: list[str] = []
        fragments: list[tree_pb2.AttachmentFragment] = []
        path: list[Any] = []
        for level in range(LEVELS):
            cite = min(per_question, remaining, len(sides))
            remaining -= cite
            question = await self.ask(tree_id, parent, level, sides[:cite])
            answer = await self.answer(question.id, level, level % 4 == 0)
            sides = [
                n.id
                for n in await asyncio.gather(
                    *(self.answer(question.id, level, False) for _ in range(self.siblings))
                )
            ]
            if question.attachments:
                fragments.append(
                    tree_pb2.AttachmentFragment(
                        node_id=question.id,
                        attachment_id=question.attachments[0].id,
                        start=1000,
                        end=1000 + len(TEXT),
                        text=TEXT,
                    )
                )
            path += [question, answer]
            parent = answer.id
        current = await self.ask(tree_id, parent, LEVELS, sides[: max(remaining, 1)])
        older = path[:-2]  # the direct parent chain (2 nodes) stays verbatim
        work = []
        for node in older:
            work.append(self.summarize(f"node:{node.id}", f"Summary of {node.id[:8]}: venues."))
            for i in range(len(node.tool_trace)):
                work.append(self.summarize(f"tool:{node.id}:{i}", "twelve venues found"))
            for i in range(len(node.citations)):
                work.append(self.summarize(f"citation:{node.id}:{i}", "a side remark"))
        for start in range(0, len(work), 16):
            await asyncio.gather(*work[start : start + 16])
        return current.id, fragments


async def main_async(seconds: float, nodes: int, citations: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port(), fast=True
    )
    try:
        info = pgcluster.start(cfg)
        service = await tree_app.start(
            TreeSettings(dsn=info.primary_dsn, listen="127.0.0.1:0", pool_max=20)
        )
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
                stub = tree_pb2_grpc.TreeServiceStub(channel)
                await measure(stub, seconds, nodes, citations)
        finally:
            await service.stop()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)


async def measure(
    stub: tree_pb2_grpc.TreeServiceStub, seconds: float, nodes: int, citations: int
) -> None:
    print(f"building a tree of about {nodes} nodes with {citations} citations ...", flush=True)
    builder = Builder(stub, nodes, citations)
    node_id, fragments = await builder.build()

    def request(budget: int) -> tree_pb2.AssembleContextRequest:
        return tree_pb2.AssembleContextRequest(
            idempotency_key=key(),
            node_id=node_id,
            budget=budget,
            boundaries=["Never book anything without asking first."],
            fragments=fragments,
        )

    whole = await stub.AssembleContext(request(2_000_000))
    mandatory = sum(i.code_points for i in whole.items if i.mandatory)
    kept = sum(
        i.code_points
        for i in whole.items
        if i.layer in (tree_pb2.LONG_TERM_MEMORY, tree_pb2.ATTACHMENT)
    )
    # Half of what the summarized layers would take once summarized: every summary is used
    # and the older part of the conversation gives way.
    summarized = sum(
        min(i.code_points, 40)
        for i in whole.items
        if i.layer in (tree_pb2.OLDER_ANCESTOR, tree_pb2.TOOL_RESULT, tree_pb2.SIDE_BRANCH_CITATION)
    )
    budget = mandatory + kept + summarized // 2
    shaped = await stub.AssembleContext(request(budget))
    inclusions = Counter(tree_pb2.ContextInclusion.Name(i.inclusion) for i in shaped.items)
    layers_summarized = {
        tree_pb2.ContextLayer.Name(i.layer)
        for i in shaped.items
        if i.inclusion == tree_pb2.INCLUDED_AS_SUMMARY
    }
    path_request = tree_pb2.GetPathRequest(node_id=node_id, page_size=1000)
    path = await stub.GetPath(path_request)
    cited = sum(len(n.citations) for n in path.nodes)
    print(
        f"path of {path.path_length} nodes holding {cited} citations; {len(whole.items)} "
        f"items, {whole.used:,} code points unbounded, budget {budget:,}: "
        f"{dict(sorted(inclusions.items()))}; summarized layers: {sorted(layers_summarized)}",
        flush=True,
    )

    async def get_path() -> object:
        return await stub.GetPath(path_request)

    async def assemble() -> object:
        return await stub.AssembleContext(request(budget))

    results = {}
    for name, call in (("GetPath", get_path), ("AssembleContext", assemble)):
        await warm_up(call)
        results[name] = await sequential(call, seconds)
    base = results["GetPath"]
    base_p50, base_p99 = statistics.median(base) * 1000, pct(base, 0.99)
    print()
    print("| case | p50 ms | p99 ms | p50 ÷ GetPath | p99 ÷ GetPath |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, samples in results.items():
        p50, p99 = statistics.median(samples) * 1000, pct(samples, 0.99)
        print(f"| {name} | {p50:.1f} | {p99:.1f} | {p50 / base_p50:.2f} | {p99 / base_p99:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--citations", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main_async(args.seconds, args.nodes, args.citations))


if __name__ == "__main__":
    main()
