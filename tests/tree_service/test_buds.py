"""Buds (T6): ordered, idempotent, durable chunk appends; sealing; freezing on interruption
with every acknowledged chunk; late writes refused; continuing a frozen answer."""

from __future__ import annotations

import asyncio
import random
import uuid

import asyncpg
import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, canonicalize, new_tree
from tree_service import canon_projection

Req = tree_pb2.StreamAnswerRequest


def open_message(question_id: str, key: str = "", extends: str = "") -> Req:
    return Req(
        open=Req.Open(
            idempotency_key=key or unique("k"), question_id=question_id, extends_answer_id=extends
        )
    )


def chunk(seq: int, text: str) -> Req:
    return Req(chunk=Req.Chunk(seq=seq, text=text))


class Stream:
    """Drives one StreamAnswer call message by message."""

    def __init__(self, stub) -> None:
        self.queue: asyncio.Queue[Req | None] = asyncio.Queue()
        self.call = stub.StreamAnswer(self._requests())

    async def _requests(self):
        while (message := await self.queue.get()) is not None:
            yield message

    async def send(self, message: Req) -> tree_pb2.StreamAnswerResponse:
        await self.queue.put(message)
        response: tree_pb2.StreamAnswerResponse = await self.call.read()
        return response

    async def close(self) -> None:
        await self.queue.put(None)

    async def finish(self) -> None:
        """Half-close and wait until the server has ended the call."""
        await self.close()
        while await self.call.read() is not grpc.aio.EOF:
            pass


async def node(stub, node_id: str) -> tree_pb2.Node:
    found: tree_pb2.Node = (await stub.GetNode(tree_pb2.GetNodeRequest(node_id=node_id))).node
    return found


async def interrupted(stub, opening: Req, text: str) -> tree_pb2.Node:
    """A bud opened with `opening` whose client went away after its first chunk, `text`:
    frozen with that chunk."""
    stream = Stream(stub)
    opened: tree_pb2.Node = (await stream.send(opening)).opened
    await stream.send(chunk(1, text))
    await stream.finish()
    return opened


async def question_in_new_tree(stub) -> tree_pb2.Node:
    tree = await new_tree(stub)
    question: tree_pb2.Node = await ask(stub, tree.id)
    return question


async def test_a_bud_streams_acknowledged_chunks_and_seals(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    assert opened.answer_state == tree_pb2.STREAMING
    for seq, text in enumerate(["Hello", ", ", "world"], start=1):
        ack = await stream.send(chunk(seq, text))
        assert ack.ack.seq == seq and ack.consistency.lsn
    partial = await node(tree_stub, opened.id)
    assert (partial.text, partial.acknowledged_chunks) == ("Hello, world", 3)
    sealed = await stream.send(
        Req(complete=Req.Complete(content=tree_pb2.GeneratedContent(reasoning_summary="short")))
    )
    await stream.close()
    assert sealed.sealed.answer_state == tree_pb2.SEALED
    assert (sealed.sealed.text, sealed.sealed.reasoning_summary) == ("Hello, world", "short")


async def test_a_resent_chunk_is_acknowledged_again_but_stored_once(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    await stream.send(chunk(1, "a"))
    again = await stream.send(chunk(1, "a"))
    assert again.ack.seq == 1
    await stream.send(chunk(2, "b"))
    await stream.finish()
    frozen = await node(tree_stub, opened.id)
    assert (frozen.text, frozen.answer_state, frozen.stop_reason) == (
        "ab",
        tree_pb2.FROZEN,
        "client_closed",
    )


async def test_a_resent_chunk_with_other_text_is_refused_and_the_bud_frozen(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    await stream.send(chunk(1, "a"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(1, "different"))
    assert describe(caught.value).violations[0].field == "chunk.text"
    frozen = await node(tree_stub, opened.id)
    assert (frozen.text, frozen.answer_state) == ("a", tree_pb2.FROZEN)


async def test_a_gap_in_the_sequence_is_refused(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    await stream.send(open_message(question.id))
    await stream.send(chunk(1, "a"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(3, "c"))
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.violations[0].field == "chunk.seq"


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
async def test_an_interrupted_bud_keeps_exactly_its_acknowledged_chunks(tree_stub, seed):
    rng = random.Random(seed)
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    chunks = [f"[{i}:{rng.random():.3f}]" for i in range(1, 41)]
    stop_after = rng.randint(0, len(chunks))
    acked: list[str] = []
    for seq, text in enumerate(chunks[:stop_after], start=1):
        response = await stream.send(chunk(seq, text))
        assert response.ack.seq == seq
        acked.append(text)
    stream.call.cancel()  # the client goes away mid-answer
    for _ in range(200):
        kept = await node(tree_stub, opened.id)
        if kept.answer_state == tree_pb2.FROZEN:
            break
        await asyncio.sleep(0.01)
    assert kept.answer_state == tree_pb2.FROZEN
    assert kept.stop_reason == "cancelled"
    assert kept.text == "".join(acked)
    assert kept.acknowledged_chunks == len(acked)


async def test_a_deadline_freezes_the_bud_with_its_reason(tree_stub):
    question = await question_in_new_tree(tree_stub)
    queue: asyncio.Queue[Req | None] = asyncio.Queue()

    async def requests():
        while (message := await queue.get()) is not None:
            yield message

    call = tree_stub.StreamAnswer(requests(), timeout=1.0)
    await queue.put(open_message(question.id))
    opened = (await call.read()).opened
    await queue.put(chunk(1, "partial"))
    await call.read()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call.read()  # nothing more is sent; the deadline passes
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    for _ in range(200):
        kept = await node(tree_stub, opened.id)
        if kept.answer_state == tree_pb2.FROZEN:
            break
        await asyncio.sleep(0.01)
    assert (kept.text, kept.stop_reason) == ("partial", "deadline_exceeded")


async def test_writes_after_sealing_are_refused(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    await stream.send(open_message(question.id))
    await stream.send(chunk(1, "done"))
    await stream.send(Req(complete=Req.Complete()))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(2, "late"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_bud_is_never_reattached_by_a_second_stream(tree_stub):
    question = await question_in_new_tree(tree_stub)
    key = unique("k")
    first = Stream(tree_stub)
    opened = (await first.send(open_message(question.id, key))).opened
    await first.send(chunk(1, "x"))
    await first.finish()
    second = Stream(tree_stub)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await second.send(open_message(question.id, key))
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert failure.metadata["answer_id"] == opened.id


async def test_continue_generating_extends_a_frozen_answer_as_a_new_node(tree_stub):
    question = await question_in_new_tree(tree_stub)
    frozen_id = (await interrupted(tree_stub, open_message(question.id), "The first half")).id
    more = Stream(tree_stub)
    extension = (await more.send(open_message(question.id, extends=frozen_id))).opened
    await more.send(chunk(1, " and the rest."))
    sealed = (await more.send(Req(complete=Req.Complete()))).sealed
    await more.close()
    assert extension.extends_answer_id == frozen_id and extension.parent_id == question.id
    assert sealed.text == " and the rest."
    assert (await node(tree_stub, frozen_id)).text == "The first half"  # never appended to


async def test_only_a_frozen_answer_can_be_continued(tree_stub):
    question = await question_in_new_tree(tree_stub)
    complete = await answer(tree_stub, question.id, "complete")
    stream = Stream(tree_stub)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(open_message(question.id, extends=complete.id))
    assert describe(caught.value).metadata["field"] == "extends_answer_id"


async def test_many_concurrent_buds_keep_every_chunk_in_order(tree_stub):
    question = await question_in_new_tree(tree_stub)

    async def one_bud(n: int) -> tuple[str, str]:
        stream = Stream(tree_stub)
        await stream.send(open_message(question.id))
        parts = [f"<{n}.{i}>" for i in range(1, 21)]
        for seq, text in enumerate(parts, start=1):
            assert (await stream.send(chunk(seq, text))).ack.seq == seq
        sealed = (await stream.send(Req(complete=Req.Complete()))).sealed
        await stream.close()
        return sealed.text, "".join(parts)

    results = await asyncio.gather(*(one_bud(n) for n in range(25)))
    assert all(stored == sent for stored, sent in results)


async def test_a_bud_whose_stream_was_lost_is_frozen_by_the_sweep(cluster, tree_service, tree_stub):
    """A dead serving process stops renewing its buds' leases; any instance then freezes them."""
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    await stream.send(chunk(1, "kept"))
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        lease = await conn.fetchval(
            "SELECT stream_lease_until > clock_timestamp() FROM nodes WHERE id = $1",
            uuid.UUID(opened.id),
        )
        assert lease  # a live bud holds a lease
        await conn.execute(  # as if the serving process had died long ago
            "UPDATE nodes SET stream_lease_until = clock_timestamp() - interval '1 minute' "
            "WHERE id = $1",
            uuid.UUID(opened.id),
        )
    finally:
        await conn.close()
    assert opened.id in await tree_service.stores.buds.freeze_expired_buds()
    lost = await node(tree_stub, opened.id)
    assert (lost.answer_state, lost.stop_reason, lost.text) == (
        tree_pb2.FROZEN,
        "server_lost",
        "kept",
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(2, "too late"))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_a_whitespace_only_chunk_is_content_and_keeps_the_bud_streaming(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    await stream.send(chunk(1, "First paragraph."))
    assert (await stream.send(chunk(2, "\n\n"))).ack.seq == 2
    await stream.send(chunk(3, "Second."))
    sealed = (await stream.send(Req(complete=Req.Complete()))).sealed
    assert (sealed.text, sealed.acknowledged_chunks) == ("First paragraph.\n\nSecond.", 3)
    assert (await node(tree_stub, opened.id)).answer_state == tree_pb2.SEALED


async def test_an_empty_chunk_is_still_refused(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    await stream.send(open_message(question.id))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(1, ""))
    assert describe(caught.value).violations[0].field == "chunk.text"


async def test_a_bud_without_acknowledged_text_cannot_be_sealed(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(Req(complete=Req.Complete()))
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["complete"]
    ended = await node(tree_stub, opened.id)
    assert ended.answer_state != tree_pb2.SEALED and ended.text == ""


async def test_an_answer_frozen_before_its_first_chunk_cannot_be_adopted(tree_stub):
    question = await question_in_new_tree(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    await stream.finish()  # the client goes away before its first chunk
    assert (await node(tree_stub, opened.id)).answer_state == tree_pb2.FROZEN
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await adopt(tree_stub, question.id, opened.id, question.revision)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert failure.metadata["field"] == "answer_id" and "holds no text" in failure.message
    assert (await node(tree_stub, question.id)).adopted_answer_id == ""
    # It can still be continued: the continuation is the answer to adopt.
    stream = Stream(tree_stub)
    extension = (await stream.send(open_message(question.id, extends=opened.id))).opened
    await stream.send(chunk(1, "at last"))
    await stream.send(Req(complete=Req.Complete()))
    adopted = await adopt(tree_stub, question.id, extension.id, question.revision)
    assert adopted.adopted_answer_id == extension.id


async def test_canonicalizing_an_extension_keeps_the_frozen_answer_it_completes(cluster, tree_stub):
    question = await question_in_new_tree(tree_stub)
    first = await interrupted(tree_stub, open_message(question.id), "Use Postgres, ")
    # An extension can freeze and be continued too.
    second = await interrupted(tree_stub, open_message(question.id, extends=first.id), "because ")
    stream = Stream(tree_stub)
    last = (await stream.send(open_message(question.id, extends=second.id))).opened
    await stream.send(chunk(1, "it is already there."))
    await stream.send(Req(complete=Req.Complete()))
    whole = [question.id, first.id, second.id, last.id]

    version = await canonicalize(tree_stub, question.tree_id, leaf=last.id)
    assert list(version.node_ids) == whole
    assert [n.text for n in version.snapshot[1:]] == [
        "Use Postgres, ",
        "because ",
        "it is already there.",
    ]
    assert [n.extends_answer_id for n in version.snapshot[2:]] == [first.id, second.id]
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        decision = await conn.fetchval(
            "SELECT body FROM graph_objects WHERE object_id = $1",
            canon_projection.event_id(version.id),
        )
    finally:
        await conn.close()
    assert decision.endswith("Last node: Use Postgres, because it is already there.")

    # Selected nodes: the extension alone, or with its parts, gives the same main line.
    for selection in ([last.id, question.id], [second.id, last.id, first.id, question.id]):
        again = await canonicalize(
            tree_stub, question.tree_id, nodes=selection, expected=version.version
        )
        assert list(again.node_ids) == whole
        version = again
    # A frozen part alone is still half an answer.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(
            tree_stub, question.tree_id, nodes=[question.id, first.id], expected=version.version
        )
    assert describe(caught.value).code == grpc.StatusCode.FAILED_PRECONDITION


async def test_an_extension_inherits_the_realm_and_world_of_the_answer_it_extends(tree_stub):
    question = await question_in_new_tree(tree_stub)  # the question is REAL
    first = open_message(question.id)
    first.open.realm, first.open.world = tree_pb2.WORLD, "narnia"
    frozen_id = (await interrupted(tree_stub, first, "In Narnia, ")).id
    more = Stream(tree_stub)
    extension = (await more.send(open_message(question.id, extends=frozen_id))).opened
    assert (extension.realm, extension.world) == (tree_pb2.WORLD, "narnia")


async def test_an_extension_in_another_realm_is_refused(tree_stub):
    question = await question_in_new_tree(tree_stub)
    first = open_message(question.id)
    first.open.realm, first.open.world = tree_pb2.WORLD, "narnia"
    frozen_id = (await interrupted(tree_stub, first, "In Narnia, ")).id
    before = (await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=question.tree_id))).nodes
    more = Stream(tree_stub)
    elsewhere = open_message(question.id, extends=frozen_id)
    elsewhere.open.realm = tree_pb2.REAL
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await more.send(elsewhere)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert failure.metadata["field"] == "open.realm"
    after = (await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=question.tree_id))).nodes
    assert len(after) == len(before)
