"""WatchTree: a tree's changes (node appends, bud ends, branch states, tasks) delivered in
order from a position, live, with heartbeats, and resumed after a disconnect without a gap or
a duplicate, however many writers append meanwhile."""

from __future__ import annotations

import asyncio
import json

import grpc

from mirrortree.v1 import tasks_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.fuzzing import bud
from tests.tree_service.helpers import answer, ask, new_tree
from tests.tree_service.tasking import claim, complete, refused, start


def watch(stub, tree_id: str, after: int = 0, heartbeat_s: int = 0):
    return stub.WatchTree(
        tasks_pb2.WatchTreeRequest(
            tree_id=tree_id, after_position=after, heartbeat_seconds=heartbeat_s
        )
    )


async def events_until_caught_up(call) -> list[tasks_pb2.TreeEvent]:
    events: list[tasks_pb2.TreeEvent] = []
    while True:
        item = await asyncio.wait_for(call.read(), 60)
        assert item is not grpc.aio.EOF, "the stream ended before catching up"
        if item.HasField("heartbeat"):
            assert item.heartbeat.caught_up
            return events
        events.append(item.event)


async def next_events(call, count: int) -> list[tasks_pb2.TreeEvent]:
    """The next `count` events (heartbeats skipped), within a generous bound."""
    events: list[tasks_pb2.TreeEvent] = []

    async def read() -> None:
        while len(events) < count:
            item = await call.read()
            assert item is not grpc.aio.EOF
            if item.HasField("event"):
                events.append(item.event)

    await asyncio.wait_for(read(), 60)
    return events


async def test_a_watcher_sees_every_kind_of_change_in_order(tree_stub):
    tree = await new_tree(tree_stub)
    call = watch(tree_stub, tree.id)
    assert await events_until_caught_up(call) == []
    question = await ask(tree_stub, tree.id, "q")
    first = await answer(tree_stub, question.id, "a")
    frozen = await bud(tree_stub, question.id, ["part "])
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=first.id,
            state=tree_pb2.PAUSED,
            expected_revision=1,
            changed_by="user-1",
        )
    )
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    done = await complete(tree_stub, task.id, lease.lease_token, "echo")
    got = await next_events(call, 9)
    call.cancel()
    assert [e.position for e in got] == list(range(1, 10))
    assert [(e.kind, e.subject_id) for e in got] == [
        ("node_appended", question.id),
        ("node_appended", first.id),
        ("node_appended", frozen),
        ("bud_ended", frozen),
        ("branch_state_changed", first.id),
        ("task_changed", task.id),  # queued
        ("task_changed", task.id),  # running
        ("node_appended", done.task.observation_id),
        ("task_changed", task.id),  # completed
    ]
    assert json.loads(got[3].detail_json)["answer_state"] == "frozen"
    assert json.loads(got[4].detail_json)["to_state"] == "paused"
    assert json.loads(got[7].detail_json)["kind"] == "observation"
    assert [json.loads(e.detail_json)["state"] for e in (got[5], got[6], got[8])] == [
        "queued",
        "running",
        "completed",
    ]


async def test_a_watcher_resumes_after_a_disconnect_without_a_gap_or_a_duplicate(tree_stub):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id, "root")

    async def writer(n: int) -> None:
        for i in range(n):
            await answer(tree_stub, root.id, f"a{i}")

    call = watch(tree_stub, tree.id)
    seen = await events_until_caught_up(call)
    writers = asyncio.gather(*(writer(10) for _ in range(4)))
    seen += await next_events(call, 12)
    call.cancel()  # the UI goes away mid-stream, while the writers go on
    await writers
    await writer(5)
    resumed = watch(tree_stub, tree.id, after=seen[-1].position)
    seen += await events_until_caught_up(resumed)
    more = asyncio.ensure_future(writer(5))
    seen += await next_events(resumed, 5)
    await more
    resumed.cancel()
    total = 1 + 40 + 5 + 5
    assert [e.position for e in seen] == list(range(1, total + 1))
    assert len({e.subject_id for e in seen}) == total
    assert all(e.kind == "node_appended" for e in seen)


async def test_an_idle_watcher_gets_heartbeats_with_its_position(tree_stub):
    tree = await new_tree(tree_stub)
    await ask(tree_stub, tree.id, "q")
    call = watch(tree_stub, tree.id, heartbeat_s=1)
    first = await call.read()
    assert first.event.position == 1
    caught = await call.read()
    assert (caught.heartbeat.position, caught.heartbeat.caught_up) == (1, True)
    beat = await asyncio.wait_for(call.read(), 30)
    assert (beat.heartbeat.position, beat.heartbeat.caught_up) == (1, False)
    call.cancel()


async def test_a_watcher_names_its_bad_request(tree_stub):
    tree = await new_tree(tree_stub)
    bad = [
        (tasks_pb2.WatchTreeRequest(tree_id="nope"), "tree_id"),
        (tasks_pb2.WatchTreeRequest(tree_id=tree.id, after_position=-1), "after_position"),
        (tasks_pb2.WatchTreeRequest(tree_id=tree.id, heartbeat_seconds=61), "heartbeat_seconds"),
    ]
    for request, field in bad:
        failure = await refused(
            _drain(tree_stub.WatchTree(request)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "invalid_argument",
        )
        assert [v.field for v in failure.violations] == [field]
    missing = "00000000-0000-4000-8000-000000000000"
    await refused(_drain(watch(tree_stub, missing)), grpc.StatusCode.NOT_FOUND, "not_found")


async def _drain(call) -> None:
    async for _ in call:
        pass
