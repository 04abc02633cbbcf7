"""T19 + T20: a delegated task started under a START_TASK estimate reserves it on the owner's
quota and, once it ends, settles it with what the task spent."""

from __future__ import annotations

import asyncio
import uuid

import grpc

from mirrortree.v1 import costs_pb2, tasks_pb2
from tests.conftest import unique
from tests.tree_service import tasking
from tests.tree_service.costs_helpers import estimate, failure_of, set_quota
from tests.tree_service.helpers import ask, new_tree

FP = grpc.StatusCode.FAILED_PRECONDITION
EUR_BUDGET = tasks_pb2.TaskBudget(tokens=1_000, cost_micros=500_000, currency="EUR")


async def quota_of(stub, owner: str) -> costs_pb2.Quota:
    quota: costs_pb2.Quota = (await stub.GetQuota(costs_pb2.GetQuotaRequest(owner=owner))).quota
    return quota


async def setting(stub, limit: str = "10"):
    owner = unique("owner")
    tree = await new_tree(stub, owner=owner)
    question = await ask(stub, tree.id)
    await set_quota(stub, owner, limit, currency="EUR")
    # 1,000,000 input tokens at 0.75 per million: the task's 0.5 budget fits in it.
    made = await estimate(
        stub,
        tree.id,
        question.id,
        costs_pb2.START_TASK,
        input_price="0.75",
        currency="EUR",
    )
    return owner, tree, question, made


async def test_a_task_under_an_estimate_reserves_it_and_settles_its_spend(tree_stub):
    owner, tree, question, made = await setting(tree_stub)
    task = await tasking.start(tree_stub, question.id, budget=EUR_BUDGET, estimate_id=made.id)
    assert task.estimate_id == made.id
    held = await quota_of(tree_stub, owner)
    assert (held.reserved, held.spent, held.remaining) == ("0.75", "0", "9.25")

    lease = await tasking.claim(tree_stub, tree.id)
    await tasking.progress(tree_stub, task.id, lease.lease_token, 100, cost=200_000)
    await tasking.complete(tree_stub, task.id, lease.lease_token)

    after = await quota_of(tree_stub, owner)
    assert (after.reserved, after.spent, after.remaining) == ("0", "0.2", "9.8")
    settled = (
        await tree_stub.GetEstimate(costs_pb2.GetEstimateRequest(estimate_id=made.id))
    ).estimate
    assert settled.actual_cost == "0.2"


async def test_a_cancelled_task_gives_back_what_it_did_not_spend(tree_stub):
    owner, _, question, made = await setting(tree_stub)
    task = await tasking.start(tree_stub, question.id, budget=EUR_BUDGET, estimate_id=made.id)
    await tree_stub.InstructTask(
        tasks_pb2.InstructTaskRequest(
            idempotency_key=unique("k"),
            task_id=task.id,
            instructed_by="user-1",
            expected_revision=task.revision,
            instruction=tasks_pb2.TASK_CANCEL,
        )
    )
    after = await quota_of(tree_stub, owner)
    assert (after.reserved, after.spent, after.remaining) == ("0", "0", "10")


async def test_a_task_is_refused_an_estimate_that_does_not_pay_for_it(tree_stub, db):
    owner, tree, question, made = await setting(tree_stub)
    other = await estimate(tree_stub, tree.id, question.id, costs_pb2.REGENERATE, currency="EUR")
    cases = [
        ({"estimate_id": other.id, "budget": EUR_BUDGET}, "estimate_id"),
        (
            {
                "estimate_id": made.id,
                "budget": tasks_pb2.TaskBudget(tokens=1, cost_micros=800_000, currency="EUR"),
            },
            "budget.cost_micros",
        ),
        (
            {
                "estimate_id": made.id,
                "budget": tasks_pb2.TaskBudget(tokens=1, cost_micros=1, currency="USD"),
            },
            "budget.currency",
        ),
    ]
    for fields, field in cases:
        failure = await failure_of(tasking.start(tree_stub, question.id, **fields))
        assert (failure.code, failure.reason) == (FP, "estimate_not_applicable"), failure
        assert failure.metadata.get("field") == field, failure
    assert await db.fetchval("SELECT count(*) FROM tasks WHERE tree_id = $1::uuid", tree.id) == 0
    assert (await quota_of(tree_stub, owner)).reserved == "0"

    await tasking.start(tree_stub, question.id, budget=EUR_BUDGET, estimate_id=made.id)
    again = await failure_of(
        tasking.start(tree_stub, question.id, budget=EUR_BUDGET, estimate_id=made.id)
    )
    assert (again.code, again.reason) == (FP, "estimate_not_applicable")
    assert "pays for task" in again.message


async def test_without_a_quota_a_task_under_an_estimate_is_not_started(tree_stub, db):
    tree = await new_tree(tree_stub, owner=unique("owner"))
    question = await ask(tree_stub, tree.id)
    made = await estimate(tree_stub, tree.id, question.id, costs_pb2.START_TASK, currency="EUR")
    failure = await failure_of(
        tasking.start(tree_stub, question.id, budget=EUR_BUDGET, estimate_id=made.id)
    )
    assert (failure.code, failure.reason) == (FP, "quota_exceeded")
    assert await db.fetchval("SELECT count(*) FROM tasks WHERE tree_id = $1::uuid", tree.id) == 0


async def test_32_concurrent_task_starts_never_overdraw_the_quota(tree_stub, db):
    # One tree per task, so that nothing but the quota orders the 32 starts.
    owner = unique("owner")
    await set_quota(tree_stub, owner, "10", currency="EUR")
    questions = []
    for _ in range(32):
        tree = await new_tree(tree_stub, owner=owner)
        questions.append(await ask(tree_stub, tree.id))
    # Each reserves 3 (1,000,000 input tokens at 3 per million) of the 10.
    made = [
        await estimate(
            tree_stub, q.tree_id, q.id, costs_pb2.START_TASK, input_price="3", currency="EUR"
        )
        for q in questions
    ]
    outcomes = await asyncio.gather(
        *(
            tasking.start(tree_stub, q.id, budget=EUR_BUDGET, estimate_id=m.id)
            for q, m in zip(questions, made, strict=True)
        ),
        return_exceptions=True,
    )
    started = [o for o in outcomes if isinstance(o, tasks_pb2.Task)]
    refused = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert (len(started), len(refused)) == (3, 29)
    assert {e.code() for e in refused} == {FP}
    tasks = await db.fetchval(
        "SELECT count(*) FROM tasks WHERE branch_node_id = any($1::uuid[])",
        [uuid.UUID(q.id) for q in questions],
    )
    assert tasks == 3  # the refused starts wrote nothing
    quota = await quota_of(tree_stub, owner)
    assert (quota.reserved, quota.remaining) == ("9", "1")
