"""Task requests checked field by field, and tasks, reports and events as proto messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tasks_pb2
from tree_service.convert import Checker
from tree_service.costs.money import is_currency
from tree_service.tasks.rules import (
    Budget,
    Claim,
    Instruction,
    Instructions,
    NewTask,
    ReportKind,
    Spend,
    StopReason,
    Task,
    TaskReport,
    TaskState,
    WorkReport,
)

MAX_GOAL = 20_000
MAX_RESULT = 100_000
MAX_MESSAGE = 20_000
MAX_NAME = 200
MAX_NOTE = 2_000
MAX_CAPABILITIES = 50
MAX_DATA_SCOPE = 200
MAX_STOP_CONDITIONS = 20
MAX_EVIDENCE = 100
MAX_FAILURES = 100
MAX_TOKENS = 10**12
MAX_COST_MICROS = 10**15
MIN_LEASE_S, MAX_LEASE_S = 5, 600
MAX_AHEAD = timedelta(days=30)

STATE_TO_PROTO = {
    TaskState.QUEUED: tasks_pb2.TASK_QUEUED,
    TaskState.RUNNING: tasks_pb2.TASK_RUNNING,
    TaskState.NEEDS_INSTRUCTIONS: tasks_pb2.TASK_NEEDS_INSTRUCTIONS,
    TaskState.COMPLETED: tasks_pb2.TASK_COMPLETED,
    TaskState.CANCELLED: tasks_pb2.TASK_CANCELLED,
}
STATE_FROM_PROTO: dict[int, TaskState] = {v: k for k, v in STATE_TO_PROTO.items()}
STOP_TO_PROTO = {
    StopReason.TOKEN_BUDGET: tasks_pb2.TASK_TOKEN_BUDGET,
    StopReason.COST_BUDGET: tasks_pb2.TASK_COST_BUDGET,
    StopReason.DEADLINE: tasks_pb2.TASK_DEADLINE,
    StopReason.CONSECUTIVE_FAILURES: tasks_pb2.TASK_CONSECUTIVE_FAILURES,
    StopReason.SAFETY_STOP: tasks_pb2.TASK_SAFETY_STOP,
}
REPORT_TO_PROTO = {
    ReportKind.PROGRESS: tasks_pb2.REPORT_PROGRESS,
    ReportKind.STEP_FAILED: tasks_pb2.REPORT_STEP_FAILED,
    ReportKind.ATTEMPT_FAILED: tasks_pb2.REPORT_ATTEMPT_FAILED,
    ReportKind.LEASE_EXPIRED: tasks_pb2.REPORT_LEASE_EXPIRED,
    ReportKind.STOPPED: tasks_pb2.REPORT_STOPPED,
    ReportKind.RESULT: tasks_pb2.REPORT_RESULT,
    ReportKind.INSTRUCTIONS: tasks_pb2.REPORT_INSTRUCTIONS,
    ReportKind.CANCELLED: tasks_pb2.REPORT_CANCELLATION,
}
INSTRUCTION_FROM_PROTO = {
    tasks_pb2.TASK_RESUME: Instruction.RESUME,
    tasks_pb2.TASK_CANCEL: Instruction.CANCEL,
}


def _entries(
    check: Checker, field: str, values: list[str], most: int, length: int, *, least: int = 0
) -> tuple[str, ...]:
    if len(values) < least:
        check.fail(field, f"needs at least {least} entry")
    if len(values) > most:
        check.fail(field, f"has {len(values)} entries; the limit is {most}")
        return ()
    for i, value in enumerate(values):
        check.text(f"{field}[{i}]", value, length)
    if len(set(values)) != len(values):
        check.fail(field, "repeats an entry")
    return tuple(values)


def _budget(check: Checker, field: str, value: tasks_pb2.TaskBudget) -> Budget:
    if not 0 < value.tokens <= MAX_TOKENS:
        check.fail(f"{field}.tokens", f"must be between 1 and {MAX_TOKENS}")
    if not 0 < value.cost_micros <= MAX_COST_MICROS:
        check.fail(f"{field}.cost_micros", f"must be between 1 and {MAX_COST_MICROS}")
    if not is_currency(value.currency):
        check.fail(f"{field}.currency", "must be a 3-letter upper-case currency code (EUR, CNY)")
    return Budget(value.tokens, value.cost_micros, value.currency)


def _spend(check: Checker, value: tasks_pb2.TaskSpend) -> Spend:
    if not 0 <= value.tokens <= MAX_TOKENS:
        check.fail("spend.tokens", f"must be between 0 and {MAX_TOKENS}")
    if not 0 <= value.cost_micros <= MAX_COST_MICROS:
        check.fail("spend.cost_micros", f"must be between 0 and {MAX_COST_MICROS}")
    return Spend(value.tokens, value.cost_micros)


def _deadline(check: Checker, value: str, *, required: bool) -> datetime | None:
    deadline = check.time("deadline", value, required=required)
    if deadline is None:
        return None
    now = datetime.now(UTC)
    if deadline <= now:
        check.fail("deadline", "must be in the future")
    elif deadline > now + MAX_AHEAD:
        check.fail("deadline", "must be at most 30 days ahead")
    return deadline


def _lease_call(check: Checker, request: tasks_pb2.HeartbeatTaskRequest) -> None:
    check.idempotency_key(request.idempotency_key)
    check.identifier("task_id", request.task_id)
    check.identifier("lease_token", request.lease_token)


def new_task(request: tasks_pb2.StartTaskRequest) -> NewTask:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("branch_node_id", request.branch_node_id)
    check.text("goal", request.goal, MAX_GOAL)
    if not request.HasField("budget"):
        check.fail("budget", "is required: tokens, cost_micros and currency")
    budget = _budget(check, "budget", request.budget)
    deadline = _deadline(check, request.deadline, required=True)
    capabilities = _entries(
        check,
        "capability_scope",
        list(request.capability_scope),
        MAX_CAPABILITIES,
        MAX_NAME,
        least=1,
    )
    data = _entries(check, "data_scope", list(request.data_scope), MAX_DATA_SCOPE, 500)
    stops = _entries(
        check, "stop_conditions", list(request.stop_conditions), MAX_STOP_CONDITIONS, MAX_NOTE
    )
    if not 1 <= request.max_consecutive_failures <= MAX_FAILURES:
        check.fail("max_consecutive_failures", f"must be between 1 and {MAX_FAILURES}")
    check.text("started_by", request.started_by, MAX_NAME)
    check.identifier("estimate_id", request.estimate_id, required=False)
    check.done()
    assert deadline is not None
    return NewTask(
        branch_node_id=request.branch_node_id,
        goal=request.goal,
        budget=budget,
        deadline=deadline,
        capability_scope=capabilities,
        data_scope=data,
        stop_conditions=stops,
        max_consecutive_failures=request.max_consecutive_failures,
        started_by=request.started_by,
        estimate_id=request.estimate_id or None,
    )


def claim(request: tasks_pb2.ClaimTaskRequest) -> Claim:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.text("worker_id", request.worker_id, MAX_NAME)
    capabilities = _entries(
        check, "capabilities", list(request.capabilities), MAX_CAPABILITIES, MAX_NAME
    )
    check.identifier("tree_id", request.tree_id, required=False)
    check.identifier("branch_node_id", request.branch_node_id, required=False)
    if not MIN_LEASE_S <= request.lease_seconds <= MAX_LEASE_S:
        check.fail("lease_seconds", f"must be between {MIN_LEASE_S} and {MAX_LEASE_S}")
    check.done()
    return Claim(
        worker_id=request.worker_id,
        capabilities=capabilities,
        tree_id=request.tree_id or None,
        branch_node_id=request.branch_node_id or None,
        lease_seconds=request.lease_seconds,
    )


def heartbeat(request: tasks_pb2.HeartbeatTaskRequest) -> None:
    check = Checker()
    _lease_call(check, request)
    check.done()


def progress(request: tasks_pb2.ReportTaskProgressRequest) -> WorkReport:
    check = Checker()
    _lease_call(check, request)  # type: ignore[arg-type]
    check.text("message", request.message, MAX_MESSAGE)
    evidence = _entries(check, "evidence", list(request.evidence), MAX_EVIDENCE, MAX_MESSAGE)
    spend = _spend(check, request.spend)
    check.done()
    kind = ReportKind.STEP_FAILED if request.step_failed else ReportKind.PROGRESS
    return WorkReport(request.task_id, request.lease_token, kind, request.message, evidence, spend)


def result(request: tasks_pb2.CompleteTaskRequest) -> WorkReport:
    check = Checker()
    _lease_call(check, request)  # type: ignore[arg-type]
    check.text("result", request.result, MAX_RESULT)
    check.text("summary", request.summary, MAX_MESSAGE, required=False)
    evidence = _entries(check, "evidence", list(request.evidence), MAX_EVIDENCE, MAX_MESSAGE)
    spend = _spend(check, request.spend)
    check.done()
    return WorkReport(
        request.task_id,
        request.lease_token,
        ReportKind.RESULT,
        request.result,
        evidence,
        spend,
        request.summary,
    )


def failure(request: tasks_pb2.FailTaskRequest) -> WorkReport:
    check = Checker()
    _lease_call(check, request)  # type: ignore[arg-type]
    check.text("message", request.message, MAX_MESSAGE)
    evidence = _entries(check, "evidence", list(request.evidence), MAX_EVIDENCE, MAX_MESSAGE)
    spend = _spend(check, request.spend)
    check.done()
    return WorkReport(
        request.task_id,
        request.lease_token,
        ReportKind.ATTEMPT_FAILED,
        request.message,
        evidence,
        spend,
    )


def instructions(request: tasks_pb2.InstructTaskRequest) -> Instructions:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("task_id", request.task_id)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the task's current revision")
    instruction = INSTRUCTION_FROM_PROTO.get(request.instruction)
    if instruction is None:
        check.fail("instruction", "must be TASK_RESUME or TASK_CANCEL")
    budget = _budget(check, "budget", request.budget) if request.HasField("budget") else None
    deadline = _deadline(check, request.deadline, required=False)
    if instruction is Instruction.CANCEL and (budget is not None or deadline is not None):
        check.fail("instruction", "TASK_CANCEL takes no budget or deadline")
    check.text("instructed_by", request.instructed_by, MAX_NAME)
    check.text("note", request.note, MAX_NOTE, required=False)
    check.done()
    assert instruction is not None
    return Instructions(
        task_id=request.task_id,
        expected_revision=request.expected_revision,
        instruction=instruction,
        budget=budget,
        deadline=deadline,
        instructed_by=request.instructed_by,
        note=request.note,
    )


def state_filter(check: Checker, values: list[int]) -> tuple[TaskState, ...]:
    found = []
    for i, value in enumerate(values):
        if value not in STATE_FROM_PROTO:
            check.fail(
                f"states[{i}]",
                "must be TASK_QUEUED, TASK_RUNNING, TASK_NEEDS_INSTRUCTIONS, TASK_COMPLETED or "
                "TASK_CANCELLED",
            )
        else:
            found.append(STATE_FROM_PROTO[value])
    return tuple(found)


def _spend_to_proto(spend: Spend) -> tasks_pb2.TaskSpend:
    return tasks_pb2.TaskSpend(tokens=spend.tokens, cost_micros=spend.cost_micros)


def task_to_proto(task: Task) -> tasks_pb2.Task:
    message = tasks_pb2.Task(
        id=task.id,
        tree_id=task.tree_id,
        branch_node_id=task.branch_node_id,
        goal=task.goal,
        budget=tasks_pb2.TaskBudget(
            tokens=task.budget.tokens,
            cost_micros=task.budget.cost_micros,
            currency=task.budget.currency,
        ),
        deadline=format_utc(task.deadline),
        capability_scope=list(task.capability_scope),
        data_scope=list(task.data_scope),
        stop_conditions=list(task.stop_conditions),
        max_consecutive_failures=task.max_consecutive_failures,
        state=STATE_TO_PROTO[task.state],
        stop_reason=(
            STOP_TO_PROTO[task.stop_reason]
            if task.stop_reason
            else tasks_pb2.TASK_STOP_REASON_UNSPECIFIED
        ),
        spent=_spend_to_proto(task.spent),
        consecutive_failures=task.consecutive_failures,
        attempts=task.attempts,
        observation_id=task.observation_id or "",
        accepted_answer_id=task.accepted_answer_id or "",
        started_by=task.started_by,
        revision=task.revision,
        created_at=format_utc(task.created_at),
        updated_at=format_utc(task.updated_at),
        position=task.position,
        estimate_id=task.estimate_id or "",
    )
    if task.lease is not None:
        # The token is the claim's credential: only ClaimTask's response carries it.
        message.lease.CopyFrom(
            tasks_pb2.TaskLease(
                worker_id=task.lease.worker_id,
                expires_at=format_utc(task.lease.expires_at),
                lease_seconds=task.lease.lease_seconds,
            )
        )
    return message


def remaining_to_proto(task: Task) -> tasks_pb2.TaskSpend:
    return _spend_to_proto(task.remaining)


def report_to_proto(report: TaskReport) -> tasks_pb2.TaskReport:
    return tasks_pb2.TaskReport(
        seq=report.seq,
        attempt=report.attempt,
        kind=REPORT_TO_PROTO[report.kind],
        message=report.message,
        evidence=list(report.evidence),
        spend=_spend_to_proto(report.spend),
        reported_by=report.reported_by,
        created_at=format_utc(report.created_at),
    )
