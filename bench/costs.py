"""Cost benchmark: estimates and quota charges against pgbench on the same primary.

    python -m bench.costs [--seconds S] [--concurrency C]

Starts its own PostgreSQL primary + replica and tree_service, then measures in one run:

- pgbench's built-in TPC-B-like script (scale 1, C clients) on the same primary — the raw
  baseline of "small write transactions per second" on this machine right now;
- EstimateRequest alone, C concurrent writers;
- EstimateRequest followed by ChargeEstimate, C writers each charging its own owner's quota,
  and all C charging one owner's quota (every charge updates that quota's row).
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

import grpc

from bench.measure import throughput
from bench.tree import pgbench_tps, scratch_primary_and_tree_service
from mirrortree.v1 import costs_pb2, tree_pb2, tree_pb2_grpc


async def owned_question(stub: tree_pb2_grpc.TreeServiceStub, owner: str) -> tuple[str, str]:
    """A tree of `owner` with a question, and a quota no benchmark run exhausts."""
    tree = await stub.CreateTree(
        tree_pb2.CreateTreeRequest(idempotency_key=uuid.uuid4().hex, title="bench", owner=owner)
    )
    question = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=uuid.uuid4().hex, tree_id=tree.tree.id, text="benchmark question"
        )
    )
    await stub.SetQuota(
        costs_pb2.SetQuotaRequest(
            idempotency_key=uuid.uuid4().hex, owner=owner, currency="USD", limit="1" + "0" * 15
        )
    )
    return tree.tree.id, question.node.id


async def estimate(stub: tree_pb2_grpc.TreeServiceStub, tree_id: str, question_id: str) -> str:
    response = await stub.EstimateRequest(
        costs_pb2.EstimateRequestRequest(
            idempotency_key=uuid.uuid4().hex,
            tree_id=tree_id,
            operation=costs_pb2.REGENERATE,
            target_id=question_id,
            model_strategy="provider/model@balanced",
            resources=costs_pb2.ExpectedResources(
                input_tokens=12_345, output_tokens=678, parallelism=2
            ),
            pricing=costs_pb2.Pricing(
                currency="USD", input_price_per_million="3", output_price_per_million="15"
            ),
            requested_by="bench",
        )
    )
    return str(response.estimate.id)


async def charges(
    stub: tree_pb2_grpc.TreeServiceStub,
    seconds: float,
    workers: int,
    *,
    shared: bool,
    charge: bool = True,
) -> float:
    if shared:
        targets = [await owned_question(stub, "bench-shared")] * workers
    else:
        targets = [await owned_question(stub, f"bench-{uuid.uuid4().hex}") for _ in range(workers)]
    turn = iter(range(10**9))

    async def one() -> object:
        tree_id, question_id = targets[next(turn) % workers]
        estimate_id = await estimate(stub, tree_id, question_id)
        if not charge:
            return estimate_id
        return await stub.ChargeEstimate(
            costs_pb2.ChargeEstimateRequest(
                idempotency_key=uuid.uuid4().hex, estimate_id=estimate_id
            )
        )

    return await throughput(one, seconds, workers)


async def main_async(seconds: float, concurrency: int) -> None:
    async with scratch_primary_and_tree_service() as (cfg, port):
        print(f"pgbench TPC-B-like, {concurrency} clients ...", flush=True)
        tps = await asyncio.to_thread(pgbench_tps, cfg, max(1, round(seconds)), concurrency)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = tree_pb2_grpc.TreeServiceStub(channel)
            print("estimates and charges ...", flush=True)
            alone = await charges(stub, seconds, concurrency, shared=False, charge=False)
            separate = await charges(stub, seconds, concurrency, shared=False)
            one_quota = await charges(stub, seconds, concurrency, shared=True)
    print()
    print(f"primary with fsync on; {concurrency} concurrent writers; {seconds:.0f} s per case")
    print()
    print("| case | per second | ÷ pgbench TPC-B TPS |")
    print("| --- | ---: | ---: |")
    print(f"| pgbench TPC-B-like transactions (baseline) | {tps:,.0f} | 1.00 |")
    print(f"| EstimateRequest | {alone:,.0f} | {alone / tps:.2f} |")
    print(
        f"| EstimateRequest + ChargeEstimate, one quota per writer | {separate:,.0f} | "
        f"{separate / tps:.2f} |"
    )
    print(
        f"| EstimateRequest + ChargeEstimate, all writers on one quota | {one_quota:,.0f} | "
        f"{one_quota / tps:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    asyncio.run(main_async(args.seconds, args.concurrency))


if __name__ == "__main__":
    main()
