"""The checks a worker's call on a delegated task passes (T19), without a database: the task must
still run and the worker must hold its current, unexpired lease; what a task has left to spend;
and that the stop rule never lets a stopped task go on as it spends more or time passes.
(test_rules.py beside this file checks the stop rule at each budget edge.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tree_service.errors import PreconditionFailed
from tree_service.tasks.rules import (
    BranchClosed,
    Budget,
    Lease,
    LeaseLost,
    Spend,
    StopReason,
    Task,
    TaskState,
    TaskStopped,
    expect_lease,
    expect_running,
    stop_reason,
)

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
BUDGET = Budget(tokens=100, cost_micros=1_000, currency="EUR")
LEASE = Lease("token-1", "worker-1", NOW + timedelta(seconds=30), 30)


def task(state: TaskState = TaskState.RUNNING, **fields) -> Task:
    values = {
        "id": "task-1",
        "tree_id": "t",
        "branch_node_id": "b",
        "goal": "g",
        "budget": BUDGET,
        "deadline": NOW + timedelta(hours=1),
        "capability_scope": (),
        "data_scope": (),
        "stop_conditions": (),
        "max_consecutive_failures": 3,
        "state": state,
        "stop_reason": None,
        "spent": Spend(),
        "consecutive_failures": 0,
        "attempts": 1,
        "lease": LEASE,
        "observation_id": None,
        "accepted_answer_id": None,
        "started_by": "u",
        "revision": 1,
        "created_at": NOW,
        "updated_at": NOW,
        "position": 1,
        **fields,
    }
    return Task(**values)


def test_a_running_task_accepts_its_workers_calls():
    expect_running(task())


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        (TaskState.QUEUED, None),
        (TaskState.NEEDS_INSTRUCTIONS, StopReason.TOKEN_BUDGET),
        (TaskState.NEEDS_INSTRUCTIONS, StopReason.CONSECUTIVE_FAILURES),
        (TaskState.COMPLETED, None),
        (TaskState.CANCELLED, None),
    ],
)
def test_a_task_that_no_longer_runs_refuses_the_worker_with_its_state_and_stop_reason(
    state, reason
):
    with pytest.raises(TaskStopped) as caught:
        expect_running(task(state, stop_reason=reason))
    assert caught.value.reason == "task_stopped"
    assert caught.value.metadata == {"state": state.value, "stop_reason": reason or ""}
    why = f" ({reason.value})" if reason else ""
    assert caught.value.message == f"task 'task-1' is {state.value}{why}; stop working on it"


def test_the_current_lease_before_it_expires_may_act():
    expect_lease(task(), "token-1", NOW)
    expect_lease(task(), "token-1", LEASE.expires_at - timedelta(microseconds=1))


@pytest.mark.parametrize(
    ("lease", "token"),
    [(None, "token-1"), (LEASE, "token-2"), (LEASE, "")],
    ids=["no lease", "another token", "no token"],
)
def test_a_worker_without_the_current_lease_is_told_it_was_reclaimed(lease, token):
    with pytest.raises(LeaseLost, match="no longer leased under this token") as caught:
        expect_lease(task(lease=lease), token, NOW)
    assert caught.value.metadata == {"task_id": "task-1"}
    assert caught.value.reason == "lease_lost"


@pytest.mark.parametrize("after", [timedelta(0), timedelta(microseconds=1), timedelta(days=1)])
def test_a_lease_is_lost_from_the_moment_it_expires(after):
    with pytest.raises(LeaseLost, match="expired at 2026-12-04T12:00:30") as caught:
        expect_lease(task(), "token-1", LEASE.expires_at + after)
    assert caught.value.metadata == {"task_id": "task-1"}


def test_another_token_is_reported_as_reclaimed_even_once_the_lease_expired():
    with pytest.raises(LeaseLost, match="reclaimed"):
        expect_lease(task(), "token-2", LEASE.expires_at + timedelta(hours=1))


def test_a_task_has_left_what_its_budget_holds_beyond_its_spending_never_less_than_nothing():
    assert task(spent=Spend(30, 250)).remaining == Spend(70, 750)
    assert task(spent=Spend(100, 1_000)).remaining == Spend(0, 0)
    assert task(spent=Spend(150, 10)).remaining == Spend(0, 990)


def test_every_refusal_of_a_task_is_a_failed_precondition_with_its_own_reason():
    refusals = {BranchClosed: "branch_closed", LeaseLost: "lease_lost", TaskStopped: "task_stopped"}
    for cls, reason in refusals.items():
        assert issubclass(cls, PreconditionFailed) and cls.reason == reason


AMOUNTS = st.integers(min_value=0, max_value=2_000)


@given(
    tokens=AMOUNTS,
    cost=AMOUNTS,
    more_tokens=AMOUNTS,
    more_cost=AMOUNTS,
    elapsed=st.integers(min_value=0, max_value=7_200),
    later=st.integers(min_value=0, max_value=7_200),
    failures=st.integers(min_value=0, max_value=5),
)
def test_a_task_once_stopped_stays_stopped_as_it_spends_more_and_time_passes(
    *, tokens, cost, more_tokens, more_cost, elapsed, later, failures
):
    deadline = NOW + timedelta(hours=1)

    def reason(spent: Spend, seconds: int) -> StopReason | None:
        now = NOW + timedelta(seconds=seconds)
        return stop_reason(BUDGET, spent, deadline, now, failures=failures, max_failures=3)

    first = reason(Spend(tokens, cost), elapsed)
    then = reason(Spend(tokens + more_tokens, cost + more_cost), elapsed + later)
    if first is not None:
        assert then is not None
    # A task inside every limit goes on.
    if tokens < 100 and cost < 1_000 and elapsed < 3_600 and failures < 3:
        assert first is None


@given(
    tokens=AMOUNTS,
    cost=AMOUNTS,
    seconds=st.integers(min_value=0, max_value=7_200),
    failures=st.integers(min_value=0, max_value=5),
)
def test_a_used_up_token_budget_is_the_reason_given_whatever_else_was_reached(
    tokens, cost, seconds, failures
):
    reason = stop_reason(
        BUDGET,
        Spend(100 + tokens, cost),
        NOW + timedelta(hours=1),
        NOW + timedelta(seconds=seconds),
        failures=failures,
        max_failures=3,
    )
    assert reason is StopReason.TOKEN_BUDGET
