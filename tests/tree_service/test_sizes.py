"""Sizes: a page of nodes stops early by bytes so that it always fits in one response, and a
streamed answer is bounded like a complete one."""

from __future__ import annotations

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.tree_service.helpers import ask, new_tree
from tests.tree_service.test_buds import Req, Stream, chunk, node, open_message


async def test_a_bud_cannot_outgrow_the_answer_limit(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    piece = "y" * 16_000
    for seq in range(1, 63):  # 992,000 code points
        await stream.send(chunk(seq, piece))
    await stream.send(chunk(63, "y" * 8_000))  # exactly 1,000,000
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(64, "y"))
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["chunk.text"]
    frozen = await node(tree_stub, opened.id)
    assert (len(frozen.text), frozen.acknowledged_chunks) == (1_000_000, 63)
    assert frozen.answer_state == tree_pb2.FROZEN


async def test_a_resent_chunk_does_not_count_twice_toward_the_limit(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    stream = Stream(tree_stub)
    await stream.send(open_message(question.id))
    piece = "y" * 16_000
    for seq in range(1, 63):
        await stream.send(chunk(seq, piece))
        await stream.send(chunk(seq, piece))  # re-sent: acknowledged again, stored once
    await stream.send(chunk(63, "y" * 8_000))
    sealed = (await stream.send(Req(complete=Req.Complete()))).sealed
    assert len(sealed.text) == 1_000_000
