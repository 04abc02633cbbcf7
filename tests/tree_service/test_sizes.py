"""Sizes: a page of nodes or main-line versions stops early by bytes so that it always fits in
one response, a main line too large for one response is saved and read page by page, and a
streamed answer is bounded like a complete one."""

from __future__ import annotations

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, canonicalize, confirmation, new_tree
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


async def test_a_main_line_too_large_for_one_response_is_saved_and_read_by_pages(tree_stub):
    tree_id, ids, leaf = await long_path(tree_stub, 3)  # 6 MB of answers
    one = await canonicalize(tree_stub, tree_id, leaf=ids[1])  # 2 MB: fits in a response
    two = await canonicalize(tree_stub, tree_id, leaf=ids[3], expected=1)  # 4 MB: just fits
    request = tree_pb2.CanonicalizeRequest(
        idempotency_key=unique("k"),
        tree_id=tree_id,
        leaf_node_id=leaf,
        confirmation=confirmation(),
        expected_version=2,
    )
    three = (await tree_stub.Canonicalize(request)).version
    assert [len(v.snapshot) for v in (one, two)] == [2, 4]
    assert (three.version, list(three.node_ids), three.snapshot_omitted) == (3, ids, True)
    assert list(three.snapshot) == []
    replayed = (await tree_stub.Canonicalize(request)).version  # a retry gets the same answer
    assert (replayed.id, replayed.snapshot_omitted) == (three.id, True)

    nodes: list[tree_pb2.Node] = []
    token, pages = "", 0
    while True:
        page = await tree_stub.GetMainLineSnapshot(
            tree_pb2.GetMainLineSnapshotRequest(version_id=three.id, page_token=token)
        )
        assert page.ByteSize() <= PAGE_LIMIT and page.nodes and page.snapshot_length == 6
        nodes += page.nodes
        pages += 1
        if not (token := page.next_page_token):
            break
    assert [n.id for n in nodes] == ids and pages > 1
    assert [n.text for n in nodes[1::2]] == [LONG] * 3

    listed: list[tree_pb2.MainLineVersion] = []
    token, pages = "", 0
    while True:
        response = await tree_stub.ListMainLineVersions(
            tree_pb2.ListMainLineVersionsRequest(tree_id=tree_id, page_token=token)
        )
        assert response.ByteSize() <= PAGE_LIMIT and response.versions
        listed += response.versions
        pages += 1
        if not (token := response.next_page_token):
            break
    # Version 1 would fit in a page alone, not beside version 2: it starts the next page.
    assert [(v.version, v.snapshot_omitted, len(v.snapshot)) for v in listed] == [
        (3, True, 0),
        (2, False, 4),
        (1, False, 2),
    ]
    assert pages == 2


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


async def test_a_question_cannot_cite_more_than_the_longest_answer_holds(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    long = await answer(tree_stub, question.id, LONG)
    half = tree_pb2.Citation(node_id=long.id, end=500_000)
    asked = await ask(tree_stub, tree.id, "q", parent_id=long.id, citations=[half, half])
    assert [len(c.snapshot) for c in asked.citations] == [500_000, 500_000]  # exactly the bound
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await ask(tree_stub, tree.id, "q", parent_id=long.id, citations=[half, half, half])
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["citations[2].end"]
