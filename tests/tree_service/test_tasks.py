"""Delegated tasks (T19): claimed by one worker at a time under a lease, stopped by the service
at their budget, deadline or consecutive failures with their evidence kept, and echoed back to
their branch as an observation that only the user's acceptance makes an answer."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from mirrortree.v1 import tasks_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, new_tree
from tests.tree_service.racing import held
from tests.tree_service.tasking import (
    claim,
    complete,
    get,
    heartbeat,
    in_future,
    progress,
    refused,
    start,
)

FP = grpc.StatusCode.FAILED_PRECONDITION
LOCK_EVENT_HEAD = "SELECT 1 FROM tree_event_heads WHERE tree_id = $1 FOR UPDATE"
EXPIRE_LEASE = (
    "UPDATE tasks SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE id = $1"
)
PASS_DEADLINE = "UPDATE tasks SET deadline = clock_timestamp() - interval '1 second' WHERE id = $1"


async def branch(stub):
    tree = await new_tree(stub)
    question = await ask(stub, tree.id, "How old is the harbour?")
    return tree, question


def kinds(response: tasks_pb2.GetTaskResponse) -> list[int]:
    return [r.kind for r in response.reports]


async def test_a_started_task_is_queued_on_its_branch_with_everything_it_was_given(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id, max_consecutive_failures=2)
    assert task.state == tasks_pb2.TASK_QUEUED
    assert (task.tree_id, task.branch_node_id) == (tree.id, question.id)
    assert (task.budget.tokens, task.budget.cost_micros, task.budget.currency) == (
        1_000,
        500_000,
        "EUR",
    )
    assert list(task.capability_scope) == ["web_search"]
    assert list(task.data_scope) == ["branch"]
    assert len(task.stop_conditions) == 1
    assert task.max_consecutive_failures == 2
    assert not task.HasField("lease")
    later = await start(tree_stub, question.id)
    listed = await tree_stub.ListTasks(
        tasks_pb2.ListTasksRequest(tree_id=tree.id, branch_node_id=question.id, page_size=1)
    )
    assert [t.id for t in listed.tasks] == [task.id]
    rest = await tree_stub.ListTasks(
        tasks_pb2.ListTasksRequest(tree_id=tree.id, page_size=1, page_token=listed.next_page_token)
    )
    assert [t.id for t in rest.tasks] == [later.id]
    assert rest.next_page_token == ""


async def test_two_workers_never_run_the_same_task(tree_stub, cluster):
    tree, question = await branch(tree_stub)
    started = {(await start(tree_stub, question.id)).id for _ in range(2)}
    # Both winners are held inside their claim (the event head is locked): the other claimers
    # must pass the tasks locked by the first two, not wait for them or take them again.
    async with held(cluster.primary_dsn, LOCK_EVENT_HEAD, uuid.UUID(tree.id)) as gate:
        claims = [
            asyncio.ensure_future(claim(tree_stub, tree.id, worker=f"w{i}")) for i in range(4)
        ]
        for _ in range(6000):  # a minute at most
            if await gate.waiting() >= 2:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # any third claimer wrongly waiting shows here
        assert await gate.waiting() == 2
        done = [c for c in claims if c.done()]
        assert len(done) == 2
        assert all(not c.result().HasField("task") for c in done)
    results = await asyncio.gather(*claims)
    won = [r.task.id for r in results if r.HasField("task")]
    assert sorted(won) == sorted(started)
    tokens = {r.lease_token for r in results if r.HasField("task")}
    assert len(tokens) == 2
    # And many claimers at once, without a gate: each task exactly once.
    more = {(await start(tree_stub, question.id)).id for _ in range(6)}
    many = await asyncio.gather(*(claim(tree_stub, tree.id, worker=f"m{i}") for i in range(10)))
    claimed = [r.task.id for r in many if r.HasField("task")]
    assert sorted(claimed) == sorted(more)


async def test_a_worker_claims_only_within_its_capabilities(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id, capability_scope=["web_search", "code_exec"])
    assert not (await claim(tree_stub, tree.id, capabilities=["web_search"])).HasField("task")
    wider = await claim(tree_stub, tree.id, capabilities=["web_search", "code_exec", "x"])
    assert wider.task.id == task.id
    assert wider.task.lease.token == wider.lease_token
    assert wider.remaining.tokens == 1_000


async def test_an_expired_lease_is_reclaimed_exactly_once(tree_stub, db):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    first = await claim(tree_stub, tree.id, worker="gone")
    await db.execute(EXPIRE_LEASE, uuid.UUID(task.id))
    # The lost worker cannot revive its lease, before or after the reclaim.
    await refused(heartbeat(tree_stub, task.id, first.lease_token), FP, "lease_lost")
    results = await asyncio.gather(*(claim(tree_stub, tree.id, worker=f"r{i}") for i in range(8)))
    won = [r for r in results if r.HasField("task")]
    assert len(won) == 1
    assert won[0].task.attempts == 2
    assert won[0].task.consecutive_failures == 1  # a lost lease counts as a failure
    await refused(heartbeat(tree_stub, task.id, first.lease_token), FP, "lease_lost")
    await refused(progress(tree_stub, task.id, first.lease_token, 10), FP, "lease_lost")
    ok = await heartbeat(tree_stub, task.id, won[0].lease_token)
    assert ok.keep_working
    reports = await get(tree_stub, task.id)
    assert kinds(reports).count(tasks_pb2.REPORT_LEASE_EXPIRED) == 1
    # Nothing else is claimable: the reclaim happened once, not once per claimer.
    assert not (await claim(tree_stub, tree.id)).HasField("task")


async def test_the_budget_stops_the_task_keeps_its_evidence_and_asks(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    step = await progress(
        tree_stub, task.id, lease.lease_token, 600, evidence=["source A"], cost=1_000
    )
    assert step.keep_working
    assert (step.remaining.tokens, step.remaining.cost_micros) == (400, 499_000)
    last = await progress(tree_stub, task.id, lease.lease_token, 400, evidence=["source B"])
    assert not last.keep_working
    assert last.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    assert last.task.stop_reason == tasks_pb2.TASK_TOKEN_BUDGET
    assert not last.task.HasField("lease")
    found = await get(tree_stub, task.id)
    assert kinds(found) == [
        tasks_pb2.REPORT_PROGRESS,
        tasks_pb2.REPORT_PROGRESS,
        tasks_pb2.REPORT_STOPPED,
    ]
    assert [list(r.evidence) for r in found.reports[:2]] == [["source A"], ["source B"]]
    assert found.task.spent.tokens == 1_000
    # The worker is told to stop; its result is not taken, nothing is claimable.
    await refused(progress(tree_stub, task.id, lease.lease_token, 1), FP, "task_stopped")
    await refused(complete(tree_stub, task.id, lease.lease_token), FP, "task_stopped")
    assert not (await claim(tree_stub, tree.id)).HasField("task")


async def test_the_cost_budget_stops_the_task_too(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    stopped = await progress(tree_stub, task.id, lease.lease_token, 1, cost=500_000)
    assert stopped.task.stop_reason == tasks_pb2.TASK_COST_BUDGET


async def test_the_deadline_stops_a_running_task_and_a_queued_one(tree_stub, db):
    tree, question = await branch(tree_stub)
    running = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    await db.execute(PASS_DEADLINE, uuid.UUID(running.id))
    beat = await heartbeat(tree_stub, running.id, lease.lease_token)
    assert not beat.keep_working
    assert beat.task.stop_reason == tasks_pb2.TASK_DEADLINE
    queued = await start(tree_stub, question.id)
    await db.execute(PASS_DEADLINE, uuid.UUID(queued.id))
    assert not (await claim(tree_stub, tree.id)).HasField("task")
    found = await get(tree_stub, queued.id)
    assert found.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    assert found.task.stop_reason == tasks_pb2.TASK_DEADLINE
    assert kinds(found) == [tasks_pb2.REPORT_STOPPED]


async def test_consecutive_failures_stop_the_task_and_a_success_resets_the_count(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id, max_consecutive_failures=2)
    lease = await claim(tree_stub, tree.id)
    token = lease.lease_token
    assert (await progress(tree_stub, task.id, token, 1, step_failed=True)).keep_working
    assert (await progress(tree_stub, task.id, token, 1)).task.consecutive_failures == 0
    assert (await progress(tree_stub, task.id, token, 1, step_failed=True)).keep_working
    # A failed attempt gives the task back to the queue while failures stay under the limit.
    failed = await tree_stub.FailTask(
        tasks_pb2.FailTaskRequest(
            idempotency_key=unique("k"), task_id=task.id, lease_token=token, message="timeout"
        )
    )
    assert failed.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    assert failed.task.stop_reason == tasks_pb2.TASK_CONSECUTIVE_FAILURES
    other = await start(tree_stub, question.id, max_consecutive_failures=2)
    second = await claim(tree_stub, tree.id)
    assert second.task.id == other.id
    requeued = await tree_stub.FailTask(
        tasks_pb2.FailTaskRequest(
            idempotency_key=unique("k"),
            task_id=other.id,
            lease_token=second.lease_token,
            message="the site was down",
            evidence=["HTTP 503"],
        )
    )
    assert requeued.task.state == tasks_pb2.TASK_QUEUED
    assert not requeued.keep_working
    assert (await claim(tree_stub, tree.id)).task.attempts == 2


async def test_only_the_users_instructions_resume_a_stopped_task(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    stopped = (await progress(tree_stub, task.id, lease.lease_token, 1_000)).task

    def instruct(**fields):
        return tree_stub.InstructTask(
            tasks_pb2.InstructTaskRequest(
                idempotency_key=unique("k"),
                task_id=task.id,
                instructed_by="user-1",
                **fields,
            )
        )

    # A budget the task already used up would stop it again at once: refused, nothing changes.
    await refused(
        instruct(
            expected_revision=stopped.revision,
            instruction=tasks_pb2.TASK_RESUME,
            budget=tasks_pb2.TaskBudget(tokens=1_000, cost_micros=500_000, currency="EUR"),
        ),
        FP,
        "failed_precondition",
    )
    await refused(
        instruct(expected_revision=stopped.revision - 1, instruction=tasks_pb2.TASK_RESUME),
        grpc.StatusCode.ABORTED,
        "revision_conflict",
    )
    resumed = await instruct(
        expected_revision=stopped.revision,
        instruction=tasks_pb2.TASK_RESUME,
        budget=tasks_pb2.TaskBudget(tokens=3_000, cost_micros=500_000, currency="EUR"),
        deadline=in_future(hours=2),
        note="go on, but stop at 3k tokens",
    )
    assert resumed.task.state == tasks_pb2.TASK_QUEUED
    assert resumed.task.budget.tokens == 3_000
    assert resumed.task.spent.tokens == 1_000  # what was spent stays spent
    again = await claim(tree_stub, tree.id)
    assert again.remaining.tokens == 2_000
    cancelled = await instruct(
        expected_revision=again.task.revision, instruction=tasks_pb2.TASK_CANCEL
    )
    assert cancelled.task.state == tasks_pb2.TASK_CANCELLED
    await refused(heartbeat(tree_stub, task.id, again.lease_token), FP, "task_stopped")


async def test_a_result_is_an_observation_and_only_acceptance_makes_it_an_answer(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    done = await complete(
        tree_stub,
        task.id,
        lease.lease_token,
        "Founded in 1241, per three charters",
        summary="compared three charters",
        evidence=["charter 1241", "chronicle p. 12"],
        spend=tasks_pb2.TaskSpend(tokens=200, cost_micros=10),
    )
    assert not done.keep_working
    assert done.task.state == tasks_pb2.TASK_COMPLETED
    observation = (
        await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=done.task.observation_id))
    ).node
    assert observation.kind == tree_pb2.OBSERVATION
    assert observation.parent_id == question.id
    assert observation.text == "Founded in 1241, per three charters"
    assert list(observation.evidence) == ["charter 1241", "chronicle p. 12"]
    assert observation.lifecycle == tree_pb2.ANSWER_LIFECYCLE_UNSPECIFIED
    run = observation.task_run  # the run conditions the service recorded, readable
    assert (run.task_id, run.worker_id, run.attempt) == (task.id, "w1", 1)
    assert (run.spent_tokens, run.spent_cost_micros, run.currency) == (200, 10, "EUR")
    # Unaccepted, it is no answer: it cannot be adopted or continued as one.
    question_now = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    with pytest.raises(grpc.aio.AioRpcError):
        await adopt(tree_stub, question.id, observation.id, question_now.revision)
    with pytest.raises(grpc.aio.AioRpcError):
        await tree_stub.AddContinuation(
            tree_pb2.AddContinuationRequest(
                idempotency_key=unique("k"),
                answer_id=observation.id,
                kind=tree_pb2.ELABORATION,
                text="more",
            )
        )
    # Another observation never accepted stays no answer however long it stays.
    other = await start(tree_stub, question.id)
    other_lease = await claim(tree_stub, tree.id)
    other_done = await complete(tree_stub, other.id, other_lease.lease_token, "unheeded")
    accepted = await tree_stub.AcceptObservation(
        tasks_pb2.AcceptObservationRequest(
            idempotency_key=unique("k"), task_id=task.id, accepted_by="user-1"
        )
    )
    made = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=accepted.answer_id))).node
    assert made.kind == tree_pb2.ANSWER
    assert made.parent_id == question.id
    assert made.lifecycle == tree_pb2.CANDIDATE  # only canonicalization carries it further
    assert made.text == observation.text
    assert list(made.evidence) == list(observation.evidence)
    assert made.task_run.task_id == task.id
    assert made.task_run.accepted_observation_id == observation.id
    assert accepted.task.accepted_answer_id == made.id
    await refused(
        tree_stub.AcceptObservation(
            tasks_pb2.AcceptObservationRequest(
                idempotency_key=unique("k"), task_id=task.id, accepted_by="user-1"
            )
        ),
        FP,
        "failed_precondition",
    )
    path = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))
    answers = [n.id for n in path.nodes if n.kind == tree_pb2.ANSWER]
    assert answers == [made.id]
    assert other_done.task.observation_id not in answers
    assert (await get(tree_stub, other.id)).task.accepted_answer_id == ""


async def test_an_observation_under_an_answer_becomes_an_answer_to_its_question(tree_stub):
    tree, question = await branch(tree_stub)
    first = await answer(tree_stub, question.id, "maybe 1300")
    task = await start(tree_stub, first.id)
    lease = await claim(tree_stub, tree.id)
    done = await complete(tree_stub, task.id, lease.lease_token, "1241")
    observation = (
        await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=done.task.observation_id))
    ).node
    assert observation.parent_id == first.id
    accepted = await tree_stub.AcceptObservation(
        tasks_pb2.AcceptObservationRequest(
            idempotency_key=unique("k"), task_id=task.id, accepted_by="user-1"
        )
    )
    made = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=accepted.answer_id))).node
    assert made.parent_id == question.id


async def test_tasks_are_refused_on_a_concluded_or_archived_branch(tree_stub):
    tree, question = await branch(tree_stub)
    child = await ask(
        tree_stub, tree.id, "sub", parent_id=(await answer(tree_stub, question.id)).id
    )
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=question.id,
            state=tree_pb2.ARCHIVED,
            expected_revision=1,
            changed_by="user-1",
        )
    )
    await refused(start(tree_stub, question.id), FP, "branch_closed")
    await refused(start(tree_stub, child.id), FP, "branch_closed")


async def test_tasks_waiting_on_a_closed_branch_never_starve_a_claimable_one(tree_stub):
    tree, question = await branch(tree_stub)
    reply = await answer(tree_stub, question.id)
    closed = await ask(tree_stub, tree.id, "Closed later", parent_id=reply.id)
    waiting = {(await start(tree_stub, closed.id)).id for _ in range(50)}
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=closed.id,
            state=tree_pb2.ARCHIVED,
            expected_revision=1,
            changed_by="user-1",
        )
    )
    open_branch = await ask(tree_stub, tree.id, "Still open", parent_id=reply.id)
    claimable = await start(tree_stub, open_branch.id)
    lease = await claim(tree_stub, tree.id)
    assert lease.task.id == claimable.id
    again = await claim(tree_stub, tree.id)
    assert not again.HasField("task")  # the 50 wait for their branch to reopen
    assert {(await get(tree_stub, t, reports=False)).task.state for t in waiting} == {
        tasks_pb2.TASK_QUEUED
    }


async def test_a_task_on_a_branch_closed_meanwhile_keeps_its_result_as_evidence(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    summary = "done for now"
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=question.id,
            state=tree_pb2.CONCLUDED,
            expected_revision=1,
            changed_by="user-1",
            summary=summary,
        )
    )
    done = await complete(tree_stub, task.id, lease.lease_token, "late result")
    assert done.task.state == tasks_pb2.TASK_CANCELLED
    assert done.task.observation_id == ""
    found = await get(tree_stub, task.id)
    assert [r.message for r in found.reports if r.kind == tasks_pb2.REPORT_RESULT] == [
        "late result"
    ]


async def test_a_worker_retry_replays_instead_of_reporting_twice(tree_stub):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    request = tasks_pb2.ReportTaskProgressRequest(
        idempotency_key=unique("k"),
        task_id=task.id,
        lease_token=lease.lease_token,
        message="step",
        spend=tasks_pb2.TaskSpend(tokens=100),
    )
    first = await tree_stub.ReportTaskProgress(request)
    again = await tree_stub.ReportTaskProgress(request)
    assert first.task.spent.tokens == again.task.spent.tokens == 100
    assert (await get(tree_stub, task.id)).task.spent.tokens == 100


async def test_the_sweep_stops_a_queued_task_past_its_deadline_nobody_claims(
    tree_stub, tree_service, db
):
    _tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    await db.execute(PASS_DEADLINE, uuid.UUID(task.id))
    assert await tree_service.stores.tasks.stop_overdue() >= 1
    found = await get(tree_stub, task.id)
    assert found.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    assert found.task.stop_reason == tasks_pb2.TASK_DEADLINE
    assert kinds(found) == [tasks_pb2.REPORT_STOPPED]


async def test_a_result_on_its_budget_is_echoed_and_one_over_it_is_kept_and_asks(tree_stub):
    tree, question = await branch(tree_stub)
    exact = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    spend = tasks_pb2.TaskSpend(tokens=1_000, cost_micros=500_000)
    done = await complete(tree_stub, exact.id, lease.lease_token, "on budget", spend=spend)
    assert done.task.state == tasks_pb2.TASK_COMPLETED
    assert done.task.observation_id
    over = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id)
    spend = tasks_pb2.TaskSpend(tokens=1_001)
    kept = await complete(tree_stub, over.id, lease.lease_token, "over budget", spend=spend)
    assert kept.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    assert kept.task.stop_reason == tasks_pb2.TASK_TOKEN_BUDGET
    assert kept.task.observation_id == ""
    found = await get(tree_stub, over.id)
    assert kinds(found) == [tasks_pb2.REPORT_RESULT, tasks_pb2.REPORT_STOPPED]
    assert found.reports[0].message == "over budget"


async def test_a_heartbeat_extends_the_lease_and_nothing_else(tree_stub, db):
    tree, question = await branch(tree_stub)
    task = await start(tree_stub, question.id)
    lease = await claim(tree_stub, tree.id, lease_seconds=30)
    await db.execute(
        "UPDATE tasks SET lease_expires_at = clock_timestamp() + interval '2 seconds' "
        "WHERE id = $1",
        uuid.UUID(task.id),
    )
    beat = await heartbeat(tree_stub, task.id, lease.lease_token)
    assert beat.keep_working
    seen = (await get(tree_stub, task.id, reports=False)).task
    assert seen.lease.lease_seconds == 30
    assert seen.lease.worker_id == "w1"
    assert seen.lease.token == ""  # the claim's credential is not shown to readers
    assert (seen.budget, seen.deadline, list(seen.capability_scope)) == (
        task.budget,
        task.deadline,
        list(task.capability_scope),
    )
    remaining = await db.fetchval(
        "SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) FROM tasks WHERE id = $1",
        uuid.UUID(task.id),
    )
    assert 20 < remaining <= 30  # renewed by its own length, not left at two seconds
