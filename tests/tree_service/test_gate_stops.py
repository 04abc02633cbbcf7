"""The one gate (tree_service/gate.py) stops every kind of work while a safety stop holds the
tree, not only tasks and real-world actions: no answer, streamed bud, continuation or comparison
is written from the stop's commit until it is withdrawn, and none racing the stop lands after
its commit."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from mirrortree.lsn import parse_lsn
from mirrortree.rpcstatus import describe
from mirrortree.v1 import tasks_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, canonicalize, new_tree, withdraw
from tests.tree_service.tasking import claim, complete, start
from tests.tree_service.test_buds import Stream, open_message
from tests.tree_service.test_comparisons import compare
from tests.tree_service.test_realm_effects import act, ledger, refusal, ruling
from tests.tree_service.test_task_safety_stop import stop


def add_answer(stub, question_id: str) -> Any:
    return stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=unique("k"), question_id=question_id, text="one more answer"
        )
    )


def add_continuation(stub, answer_id: str) -> Any:
    return stub.AddContinuation(
        tree_pb2.AddContinuationRequest(
            idempotency_key=unique("k"),
            answer_id=answer_id,
            kind=tree_pb2.ELABORATION,
            text="and more",
        )
    )


async def open_bud(stub, question_id: str) -> Any:
    stream = Stream(stub)
    try:
        return await stream.send(open_message(question_id))
    finally:
        await stream.close()


async def nodes_of(db, tree_id: str) -> int:
    count: int = await db.fetchval("SELECT count(*) FROM nodes WHERE tree_id = $1::uuid", tree_id)
    return count


async def refused_by_the_stop(call: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "safety_stop_in_effect",
    )
    assert "withdraw the stop" in failure.message


async def test_no_work_is_written_while_a_safety_stop_holds_the_tree(tree_stub, db):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id, "Which harbour?")
    first = await answer(tree_stub, question.id, "North")
    second = await answer(tree_stub, question.id, "South")
    held = await stop(tree_stub, first.id)
    before = await nodes_of(db, tree.id)

    await refused_by_the_stop(add_answer(tree_stub, question.id))
    await refused_by_the_stop(add_continuation(tree_stub, first.id))
    await refused_by_the_stop(compare(tree_stub, question.id, [first.id, second.id]))
    await refused_by_the_stop(open_bud(tree_stub, question.id))
    assert await nodes_of(db, tree.id) == before
    # The user's own words are not work: a question may still be asked.
    await ask(tree_stub, tree.id, "Why did we stop?")

    # Another tree works on; withdrawing the stop lets this one work again.
    other = await new_tree(tree_stub)
    await answer(tree_stub, (await ask(tree_stub, other.id)).id, "fine")
    await withdraw(tree_stub, held.id)
    assert (await add_answer(tree_stub, question.id)).node.text == "one more answer"
    assert (await add_continuation(tree_stub, first.id)).node.text == "and more"
    await compare(tree_stub, question.id, [first.id, second.id])
    assert (await open_bud(tree_stub, question.id)).opened.answer_state == tree_pb2.STREAMING


async def raced_by_a_stop(stub, node_id: str, racers: list[Any]) -> tuple[list[Any], Any]:
    """What landed of `racers`, run against a safety stop stated at the node a moment after
    they set off, and the stop's response; every racer that did not land was refused by it."""

    async def stop_after_a_moment() -> Any:
        await asyncio.sleep(0.01)
        return await stub.RecordCommitment(
            tree_pb2.RecordCommitmentRequest(
                idempotency_key=unique("k"),
                node_id=node_id,
                kind=tree_pb2.SAFETY_STOP,
                statement="stop",
                stated_by="user-1",
            )
        )

    *outcomes, stopped = await asyncio.gather(
        *racers, stop_after_a_moment(), return_exceptions=True
    )
    assert not isinstance(stopped, BaseException)
    for failed in outcomes:
        if isinstance(failed, BaseException):
            assert isinstance(failed, grpc.aio.AioRpcError)
            assert describe(failed).reason == "safety_stop_in_effect"
    return [o for o in outcomes if not isinstance(o, BaseException)], stopped


async def test_no_answer_racing_a_stop_lands_after_its_commit(tree_stub, db):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id, "first")
    racers = [add_answer(tree_stub, question.id) for _ in range(24)]
    landed, stopped = await raced_by_a_stop(tree_stub, first.id, racers)
    stop_commit = parse_lsn(stopped.consistency.lsn)
    assert all(parse_lsn(o.consistency.lsn) < stop_commit for o in landed)
    assert await nodes_of(db, tree.id) == 2 + len(landed)


async def test_no_task_started_racing_a_stop_escapes_it(tree_stub, db):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id, "first")
    await raced_by_a_stop(tree_stub, first.id, [start(tree_stub, question.id) for _ in range(16)])
    # Every task the race started is held by the stop: none is left to be claimed.
    states = await db.fetch("SELECT state FROM tasks WHERE tree_id = $1::uuid", tree.id)
    assert {r["state"] for r in states} <= {"needs_instructions"}


@pytest.mark.parametrize(("realm", "world"), [(tree_pb2.WORLD, "Arden"), (tree_pb2.REHEARSAL, "")])
async def test_a_task_of_a_world_or_rehearsal_node_never_acts_in_the_real_world(
    tree_stub, db, realm, world
):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id, "Shall we write?", realm=realm, world=world)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    done = await complete(tree_stub, task.id, lease.lease_token, "Write to Ana")
    accepted = await tree_stub.AcceptObservation(
        tasks_pb2.AcceptObservationRequest(
            idempotency_key=unique("k"), task_id=done.task.id, accepted_by="user-1"
        )
    )
    made = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=accepted.answer_id))).node
    assert (made.realm, made.world) == (realm, world)  # the task's work inherits its realm
    await canonicalize(tree_stub, tree.id, leaf=made.id)
    allowed = await ruling(tree_stub, made.id)
    code, reason, _ = await refusal(tree_stub.RecordRealAction, act(made.id, allowed.id))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "realm_not_real")
    assert await ledger(db, tree.id) == 0
