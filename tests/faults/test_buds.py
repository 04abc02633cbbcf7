"""A bud whose stream ends while the primary is down: its freeze waits for the database and
lands, with its real reason, as soon as the primary is back — not half a minute later as
`server_lost` once the lease meant for a dead server has run out."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from devtools.pgcluster import faults
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tests.tree_service.helpers import ask, new_tree
from tree_service.buds.store import BUD_LEASE_S

Req = tree_pb2.StreamAnswerRequest


@pytest.mark.timeout(120)
async def test_a_freeze_that_met_a_missing_database_lands_with_its_reason_when_it_returns(
    faulty_config, faulty_tree
):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{faulty_tree.port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        tree = await new_tree(stub)
        question = await ask(stub, tree.id)
        requests: asyncio.Queue[Req] = asyncio.Queue()

        async def messages():
            while True:
                yield await requests.get()

        call = stub.StreamAnswer(messages())
        await requests.put(
            Req(open=Req.Open(idempotency_key="bud-" + tree.id, question_id=question.id))
        )
        opened = (await call.read()).opened
        await requests.put(Req(chunk=Req.Chunk(seq=1, text="kept")))
        assert (await call.read()).ack.seq == 1

        await asyncio.to_thread(faults.take_down, faulty_config, "primary", "fast")
        call.cancel()  # the freeze meets the missing primary
        await asyncio.sleep(0.5)
        restarted = asyncio.get_running_loop().time()
        await asyncio.to_thread(faults.restart, faulty_config, "primary")

        state: dict[str, tree_pb2.Node] = {}

        async def poll() -> None:
            while True:
                try:
                    found = await stub.GetNode(tree_pb2.GetNodeRequest(node_id=opened.id))
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.05)
                    continue
                state["node"] = found.node
                if found.node.answer_state == tree_pb2.FROZEN:
                    return
                await asyncio.sleep(0.05)

        await asyncio.wait_for(poll(), BUD_LEASE_S / 3)
        frozen_after = asyncio.get_running_loop().time() - restarted
        node = state["node"]
        assert node.stop_reason == "cancelled"
        assert node.text == "kept"
        assert frozen_after < BUD_LEASE_S / 3
