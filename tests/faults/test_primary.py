"""The write path under real faults: the primary restarted (crashed, or stopped at once) under
steady writes costs no INTERNAL answer and no acknowledged write — a write cut off while it
committed answers `outcome_unknown`, and its retry under the same idempotency key is applied
at most once."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from devtools.pgcluster import faults
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.faults.load import Writes, wait_for, writing


async def more_acknowledged(writes: Writes, what: str) -> None:
    start = len(writes.acknowledged)
    await wait_for(lambda: len(writes.acknowledged) >= start + 40, 60, what)


@pytest.mark.timeout(240)
async def test_the_primary_restarted_under_writes_loses_no_acknowledged_write(
    faulty_config, faulty_tree
):
    project = unique("p")
    async with writing(faulty_tree.port, project, workers=8) as writes:
        for how in ("sigkill", "immediate", "fast"):
            await more_acknowledged(writes, f"writes before a {how} stop")
            await asyncio.to_thread(faults.take_down, faulty_config, "primary", how)
            await asyncio.sleep(0.3)  # writes meet the missing primary
            await asyncio.to_thread(faults.restart, faulty_config, "primary")
        await more_acknowledged(writes, "writes after the last restart")
    assert writes.tally.bad() == {}, writes.tally.outcomes
    reasons = {k for k in writes.tally.outcomes if k != "OK"}
    assert reasons <= {
        "UNAVAILABLE/database_unavailable",
        "UNAVAILABLE/outcome_unknown",
        "UNAVAILABLE/",
    }, writes.tally.outcomes
    assert reasons, "no write met the missing primary"
    # Every acknowledged write is there, once.
    assert len(set(writes.acknowledged)) == len(writes.acknowledged)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{faulty_tree.port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        for tree_id in writes.acknowledged:
            found = await stub.GetTree(tree_pb2.GetTreeRequest(tree_id=tree_id))
            assert found.tree.id == tree_id
