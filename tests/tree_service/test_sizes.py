"""Sizes: a page of nodes stops early by bytes so that it always fits in one response, and a
streamed answer is bounded like a complete one."""

from __future__ import annotations

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.tree_service.helpers import answer, ask, new_tree
from tests.tree_service.test_buds import Req, Stream, chunk, node, open_message

LONG = "é" * 1_000_000  # the longest answer: 2 MB of UTF-8
PAGE_LIMIT = 4 * 1024 * 1024  # a default gRPC client's receive limit


async def long_path(stub, answers: int) -> tuple[str, list[str], str]:
    tree = await new_tree(stub)
    parent, ids = "", []
    for _ in range(answers):
        question = await ask(stub, tree.id, "q", parent_id=parent)
        parent = (await answer(stub, question.id, LONG)).id
        ids += [question.id, parent]
    return tree.id, ids, parent


async def test_node_pages_stop_early_by_bytes_and_still_reach_every_node(tree_stub):
    tree_id, ids, leaf = await long_path(tree_stub, 3)
    listed: list[str] = []
    token, pages = "", 0
    while True:
        page = await tree_stub.ListNodes(
            tree_pb2.ListNodesRequest(tree_id=tree_id, page_token=token)
        )
        assert page.ByteSize() <= PAGE_LIMIT and page.nodes
        listed += [n.id for n in page.nodes]
        pages += 1
        if not (token := page.next_page_token):
            break
    assert listed == ids and pages > 1
    on_path: list[str] = []
    token, pages = "", 0
    while True:
        path = await tree_stub.GetPath(tree_pb2.GetPathRequest(node_id=leaf, page_token=token))
        assert path.ByteSize() <= PAGE_LIMIT and path.nodes and path.path_length == len(ids)
        on_path += [n.id for n in path.nodes]
        pages += 1
        if not (token := path.next_page_token):
            break
    assert on_path == ids and pages > 1


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
