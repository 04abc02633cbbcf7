"""Purge benchmark: forgetting a large branch, against archiving the same branch.

    python -m bench.purge [--rounds 3] [--nodes 1000] [--citations 100]

Starts its own PostgreSQL primary and tree_service, then, each round, grows a branch of
`--nodes` nodes (a question, 100 candidate answers, a follow-up question under each and the rest
answers to those) that `--citations` questions in another tree cite, canonicalized once and
assembled into a recorded context; then times archiving the branch (SetBranchState, the
baseline: one small write on the branch's row) and purging it (PreviewPurge then Purge, every
category chosen). The figure is purge ÷ archive per round, and its median.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import grpc

from bench.tree import new_tree, scratch_primary_and_tree_service
from mirrortree.v1 import purge_pb2, tree_pb2, tree_pb2_grpc

FIRST_ANSWERS = 100
IN_FLIGHT = 16


def key() -> str:
    return uuid.uuid4().hex


async def bounded(calls: list[Callable[[], Awaitable[Any]]]) -> list[Any]:
    """Make `calls` with at most IN_FLIGHT at once (a gRPC call starts when it is made), and
    answer their results in order."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(call: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await call()

    return await asyncio.gather(*(one(c) for c in calls))


async def grown_branch(
    stub: tree_pb2_grpc.TreeServiceStub, nodes: int, citations: int
) -> tuple[str, str]:
    """A tree whose branch holds `nodes` nodes, `citations` of its answers cited from another
    tree: the tree's id and the branch root's."""
    tree_id = await new_tree(stub)
    root = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=key(), tree_id=tree_id, text="Where to?")
    )
    root_answer = await stub.AddAnswer(
        tree_pb2.AddAnswerRequest(idempotency_key=key(), question_id=root.node.id, text="Hm")
    )
    branch = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=key(),
            tree_id=tree_id,
            parent_id=root_answer.node.id,
            text="A private plan worth forgetting",
        )
    )
    firsts = await bounded(
        [
            partial(
                stub.AddAnswer,
                tree_pb2.AddAnswerRequest(
                    idempotency_key=key(), question_id=branch.node.id, text=f"Option {i}"
                ),
            )
            for i in range(FIRST_ANSWERS)
        ]
    )
    follow_ups = await bounded(
        [
            partial(
                stub.AskQuestion,
                tree_pb2.AskQuestionRequest(
                    idempotency_key=key(),
                    tree_id=tree_id,
                    parent_id=a.node.id,
                    text=f"What about option {i}?",
                ),
            )
            for i, a in enumerate(firsts)
        ]
    )
    rest = nodes - 1 - 2 * FIRST_ANSWERS
    leaves = await bounded(
        [
            partial(
                stub.AddAnswer,
                tree_pb2.AddAnswerRequest(
                    idempotency_key=key(),
                    question_id=follow_ups[i % FIRST_ANSWERS].node.id,
                    text=f"Detail {i} of the private plan",
                ),
            )
            for i in range(rest)
        ]
    )
    other = await new_tree(stub)
    await bounded(
        [
            partial(
                stub.AskQuestion,
                tree_pb2.AskQuestionRequest(
                    idempotency_key=key(),
                    tree_id=other,
                    text=f"As said in detail {i}",
                    citations=[tree_pb2.Citation(node_id=leaves[i % len(leaves)].node.id)],
                ),
            )
            for i in range(citations)
        ]
    )
    await stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=key(),
            tree_id=tree_id,
            leaf_node_id=leaves[0].node.id,
            confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="bench"),
        )
    )
    await stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=key(), node_id=leaves[0].node.id, budget=100_000
        )
    )
    return tree_id, branch.node.id


ALL = purge_pb2.PurgeChoice(
    citations=True,
    canon_entries=True,
    graph_facts=True,
    merge_references=True,
    conclusions=True,
    transplant_origins=True,
)


async def one_round(
    stub: tree_pb2_grpc.TreeServiceStub, nodes: int, citations: int
) -> tuple[float, float, float]:
    tree_id, branch_id = await grown_branch(stub, nodes, citations)
    started = time.perf_counter()
    await stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=key(),
            node_id=branch_id,
            state=tree_pb2.ARCHIVED,
            expected_revision=1,
            changed_by="bench",
        )
    )
    archived = time.perf_counter() - started
    started = time.perf_counter()
    shown = await stub.PreviewPurge(purge_pb2.PreviewPurgeRequest(node_id=branch_id))
    previewed = time.perf_counter() - started
    done = await stub.Purge(
        purge_pb2.PurgeRequest(
            idempotency_key=key(),
            tree_id=tree_id,
            node_id=branch_id,
            preview_token=shown.preview_token,
            choice=ALL,
            purged_by="bench",
            reason="benchmark",
        )
    )
    purged = time.perf_counter() - started
    if len(done.impact.nodes) != nodes or len(done.impact.citations) != citations:
        raise SystemExit(
            f"purged {len(done.impact.nodes)} nodes and {len(done.impact.citations)} "
            f"citations, not {nodes} and {citations}"
        )
    return archived, previewed, purged


async def main_async(rounds: int, nodes: int, citations: int) -> None:
    figures = []
    async with scratch_primary_and_tree_service() as (_, port):
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        for i in range(rounds):
            print(f"round {i + 1} of {rounds} ...", flush=True)
            figures.append(await one_round(stub, nodes, citations))
        await channel.close()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print()
    print(f"{nodes} nodes, {citations} citations in; load average {load}; fsync on")
    print()
    print("| round | archive ms | preview ms | preview + purge ms | purge ÷ archive |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for i, (archived, previewed, purged) in enumerate(figures, 1):
        print(
            f"| {i} | {archived * 1e3:.1f} | {previewed * 1e3:.1f} | {purged * 1e3:.1f} | "
            f"{purged / archived:.0f} |"
        )
    median = statistics.median(purged / archived for archived, _, purged in figures)
    print(f"| median | | | | {median:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--citations", type=int, default=100)
    args = parser.parse_args()
    if args.nodes < 1 + 2 * FIRST_ANSWERS + 1:
        parser.error(f"--nodes must be at least {2 + 2 * FIRST_ANSWERS}")
    asyncio.run(main_async(args.rounds, args.nodes, args.citations))


if __name__ == "__main__":
    main()
