"""Delegated tasks as domain values, their errors and the stop rule the service (never the
worker) applies: a task stops at its token or cost budget, its deadline, or N consecutive
failures, keeps its evidence and waits for the user's instructions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tree_service.errors import PreconditionFailed


class TaskState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    NEEDS_INSTRUCTIONS = "needs_instructions"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class StopReason(StrEnum):
    TOKEN_BUDGET = "token_budget"
    COST_BUDGET = "cost_budget"
    DEADLINE = "deadline"
    CONSECUTIVE_FAILURES = "consecutive_failures"
    SAFETY_STOP = "safety_stop"


class ReportKind(StrEnum):
    PROGRESS = "progress"
    STEP_FAILED = "step_failed"
    ATTEMPT_FAILED = "attempt_failed"
    LEASE_EXPIRED = "lease_expired"
    STOPPED = "stopped"
    RESULT = "result"
    INSTRUCTIONS = "instructions"
    CANCELLED = "cancelled"


class Instruction(StrEnum):
    RESUME = "resume"
    CANCEL = "cancel"


class BranchClosed(PreconditionFailed):
    """Tasks run only on active or paused branches; a concluded or archived one takes none."""

    reason = "branch_closed"


class LeaseLost(PreconditionFailed):
    """The lease the worker presents expired or was reclaimed; the worker must stop."""

    reason = "lease_lost"


class TaskStopped(PreconditionFailed):
    """The task is not running any more (stopped by the service, completed or cancelled)."""

    reason = "task_stopped"


@dataclass(frozen=True)
class Spend:
    tokens: int = 0
    cost_micros: int = 0


@dataclass(frozen=True)
class Budget:
    tokens: int
    cost_micros: int
    currency: str


@dataclass(frozen=True)
class NewTask:
    branch_node_id: str
    goal: str
    budget: Budget
    deadline: datetime
    capability_scope: tuple[str, ...]
    data_scope: tuple[str, ...]
    stop_conditions: tuple[str, ...]
    max_consecutive_failures: int
    started_by: str
    estimate_id: str | None = None


@dataclass(frozen=True)
class Claim:
    worker_id: str
    capabilities: tuple[str, ...]
    tree_id: str | None
    branch_node_id: str | None
    lease_seconds: int


@dataclass(frozen=True)
class WorkReport:
    """What a worker reports under its lease: a step, a failed attempt or the result."""

    task_id: str
    lease_token: str
    kind: ReportKind
    message: str
    evidence: tuple[str, ...] = ()
    spend: Spend = Spend()
    summary: str = ""


@dataclass(frozen=True)
class Instructions:
    task_id: str
    expected_revision: int
    instruction: Instruction
    budget: Budget | None
    deadline: datetime | None
    instructed_by: str
    note: str


@dataclass(frozen=True)
class Lease:
    token: str
    worker_id: str
    expires_at: datetime
    lease_seconds: int


@dataclass(frozen=True)
class Task:
    id: str
    tree_id: str
    branch_node_id: str
    goal: str
    budget: Budget
    deadline: datetime
    capability_scope: tuple[str, ...]
    data_scope: tuple[str, ...]
    stop_conditions: tuple[str, ...]
    max_consecutive_failures: int
    state: TaskState
    stop_reason: StopReason | None
    spent: Spend
    consecutive_failures: int
    attempts: int
    lease: Lease | None
    observation_id: str | None
    accepted_answer_id: str | None
    started_by: str
    revision: int
    created_at: datetime
    updated_at: datetime
    position: int
    estimate_id: str | None = None  # the START_TASK estimate charged for it (T20)

    @property
    def remaining(self) -> Spend:
        return Spend(
            max(0, self.budget.tokens - self.spent.tokens),
            max(0, self.budget.cost_micros - self.spent.cost_micros),
        )


@dataclass(frozen=True)
class TaskReport:
    seq: int
    attempt: int
    kind: ReportKind
    message: str
    evidence: tuple[str, ...]
    spend: Spend
    reported_by: str
    created_at: datetime


def stop_reason(
    budget: Budget,
    spent: Spend,
    deadline: datetime,
    now: datetime,
    *,
    failures: int,
    max_failures: int,
) -> StopReason | None:
    """Why the service must stop a task now, None while it may go on. A budget is reached
    when it is used up, not only when it is overdrawn: nothing is left to spend."""
    if spent.tokens >= budget.tokens:
        return StopReason.TOKEN_BUDGET
    if spent.cost_micros >= budget.cost_micros:
        return StopReason.COST_BUDGET
    if now >= deadline:
        return StopReason.DEADLINE
    if failures >= max_failures:
        return StopReason.CONSECUTIVE_FAILURES
    return None


def expect_running(task: Task) -> None:
    """A worker's call on a task that no longer runs is refused with the task's state."""
    if task.state is not TaskState.RUNNING:
        why = f" ({task.stop_reason})" if task.stop_reason else ""
        raise TaskStopped(
            f"task {task.id!r} is {task.state}{why}; stop working on it",
            {"state": str(task.state), "stop_reason": str(task.stop_reason or "")},
        )


def expect_lease(task: Task, token: str, now: datetime) -> None:
    """Only the current, unexpired claim may act on a running task."""
    lease = task.lease
    if lease is None or lease.token != token:
        raise LeaseLost(
            f"task {task.id!r} is no longer leased under this token (it was reclaimed); "
            "stop working on it",
            {"task_id": task.id},
        )
    if lease.expires_at <= now:
        raise LeaseLost(
            f"the lease on task {task.id!r} expired at {lease.expires_at.isoformat()}; another "
            "worker may claim it: stop working on it",
            {"task_id": task.id},
        )
