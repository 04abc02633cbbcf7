"""A safety stop stops delegated tasks and streamed answers too (T22, seed 001 §7: "当前安全停止
立即有效"): from the commit of a stop stated in a tree, none of its tasks is started, claimed or
resumed, a running task's worker hears task_stopped on its next call, the tasks wait for the
user's instructions with their evidence kept, and an answer being streamed is frozen with reason
safety_stop; withdrawing the stop resumes nothing by itself."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tasks_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, commit, new_tree, withdraw
from tests.tree_service.tasking import claim, complete, get, heartbeat, progress, refused, start
from tests.tree_service.test_buds import Stream, chunk, open_message

FP = grpc.StatusCode.FAILED_PRECONDITION


async def tree_with_answer(stub) -> tuple[Any, Any, Any]:
    tree = await new_tree(stub)
    question = await ask(stub, tree.id, "How old is the harbour?")
    reply = await answer(stub, question.id, "Old")
    return tree, question, reply


def resuming(task_id: str, revision: int) -> tasks_pb2.InstructTaskRequest:
    return tasks_pb2.InstructTaskRequest(
        idempotency_key=unique("k"),
        task_id=task_id,
        expected_revision=revision,
        instruction=tasks_pb2.TASK_RESUME,
        instructed_by="user-1",
    )


async def stop(stub, node_id: str) -> Any:
    return await commit(stub, node_id, tree_pb2.SAFETY_STOP, "stop everything now")


async def test_a_safety_stop_stops_the_trees_tasks_and_nothing_starts_until_withdrawn(tree_stub):
    tree, question, reply = await tree_with_answer(tree_stub)
    running = await start(tree_stub, question.id)
    queued = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    assert lease.task.id == running.id
    await progress(tree_stub, running.id, lease.lease_token, message="read one charter")
    other_tree, other_question, _ = await tree_with_answer(tree_stub)
    elsewhere = await start(tree_stub, other_question.id)

    held = await stop(tree_stub, reply.id)

    for task_id in (running.id, queued.id):
        found = await get(tree_stub, task_id)
        assert found.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
        assert found.task.stop_reason == tasks_pb2.TASK_SAFETY_STOP
    reports = (await get(tree_stub, running.id)).reports
    assert "read one charter" in [r.message for r in reports]  # its evidence is kept
    # The worker's next call, whatever it is, hears that the task stopped.
    for call in (
        heartbeat(tree_stub, running.id, lease.lease_token),
        progress(tree_stub, running.id, lease.lease_token),
        complete(tree_stub, running.id, lease.lease_token, "too late"),
    ):
        await refused(call, FP, "task_stopped")
    assert not (await claim(tree_stub, tree.id)).HasField("task")
    await refused(start(tree_stub, question.id), FP, "safety_stop_in_effect")
    stopped = (await get(tree_stub, queued.id)).task
    resume = tree_stub.InstructTask(resuming(queued.id, stopped.revision))
    await refused(resume, FP, "safety_stop_in_effect")
    # Another tree's tasks go on.
    assert (await get(tree_stub, elsewhere.id)).task.state == tasks_pb2.TASK_QUEUED
    assert (await claim(tree_stub, other_tree.id)).task.id == elsewhere.id

    await withdraw(tree_stub, held.id)
    assert (await get(tree_stub, queued.id)).task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    resumed = await tree_stub.InstructTask(resuming(queued.id, stopped.revision))
    assert resumed.task.state == tasks_pb2.TASK_QUEUED
    assert (await start(tree_stub, question.id)).state == tasks_pb2.TASK_QUEUED


async def test_nothing_a_worker_does_lands_after_the_stop_commits(tree_stub):
    """Stop against claims and completions: each worker call either commits before the stop
    (and the stop then stops what it left running) or hears task_stopped."""
    for _ in range(5):
        tree, question, reply = await tree_with_answer(tree_stub)
        done = await start(tree_stub, question.id)
        lease = await claim(tree_stub, tree.id)
        waiting = [await start(tree_stub, question.id) for _ in range(3)]
        outcomes = await asyncio.gather(
            stop(tree_stub, reply.id),
            complete(tree_stub, done.id, lease.lease_token, "the result"),
            *(claim(tree_stub, tree.id) for _ in waiting),
            return_exceptions=True,
        )
        assert not isinstance(outcomes[0], BaseException), outcomes[0]
        for outcome in outcomes[1:]:
            if isinstance(outcome, BaseException):
                assert isinstance(outcome, grpc.aio.AioRpcError), outcome
                assert describe(outcome).reason == "task_stopped"
        states = {(await get(tree_stub, t.id)).task.state for t in [done, *waiting]}
        # No task is left queued or running: the stop held every one it found, and none was
        # claimed after it.
        assert states <= {tasks_pb2.TASK_COMPLETED, tasks_pb2.TASK_NEEDS_INSTRUCTIONS}, states
        completed = (await get(tree_stub, done.id)).task
        if completed.state == tasks_pb2.TASK_COMPLETED:
            assert completed.observation_id  # it committed before the stop
        else:
            assert completed.observation_id == ""


async def test_a_safety_stop_freezes_an_answer_being_streamed_in_the_tree(tree_stub):
    _, question, reply = await tree_with_answer(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(question.id))).opened
    await stream.send(chunk(1, "Founded in"))

    await stop(tree_stub, reply.id)

    frozen = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=opened.id))).node
    assert (frozen.answer_state, frozen.stop_reason) == (tree_pb2.FROZEN, "safety_stop")
    assert frozen.text == "Founded in"  # the acknowledged chunks, nothing after the stop
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.send(chunk(2, " 1241"))
    assert caught.value.code() == FP
    assert "no longer streaming" in (caught.value.details() or "")
    again = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=opened.id))).node
    assert again.text == "Founded in"
