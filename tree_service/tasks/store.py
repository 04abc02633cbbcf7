"""Delegated tasks on the primary: queued on a branch, claimed under a lease, accounted and
stopped by the service, and settled into an observation node on their branch (T19).

Every call runs inside the idempotent write frame's transaction and locks the task's row
first, so a task's state moves one step at a time whatever the number of workers.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from decimal import Decimal

import asyncpg

from tree_service import gate
from tree_service import rules as tree_rules
from tree_service.conversation.store import ConversationStore
from tree_service.costs import charges
from tree_service.costs.rules import EstimateNotApplicable, Operation
from tree_service.domain import BranchState, Generated, NewAnswer, Node, NodeKind, RealmChoice
from tree_service.errors import NotFound, PreconditionFailed, RevisionConflict
from tree_service.nodes.store import NodeStore
from tree_service.tasks import queries
from tree_service.tasks.rows import report_from_row, task_from_row
from tree_service.tasks.rules import (
    BranchClosed,
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
    expect_lease,
    expect_running,
    stop_reason,
)

CLOSED = (BranchState.CONCLUDED.value, BranchState.ARCHIVED.value)
MAX_REPORTS = 500
SERVICE = "service"
NO_SPEND = Spend()
BUDGETS = (StopReason.TOKEN_BUDGET, StopReason.COST_BUDGET)


async def _report(
    conn: asyncpg.Connection,
    task: Task,
    kind: ReportKind,
    message: str,
    by: str,
    *,
    evidence: tuple[str, ...] = (),
    spend: Spend = NO_SPEND,
) -> None:
    await conn.execute(
        queries.INSERT_REPORT,
        uuid.UUID(task.id),
        task.attempts,
        kind.value,
        message,
        json.dumps(list(evidence), ensure_ascii=False),
        spend.tokens,
        spend.cost_micros,
        by,
    )


async def _stop(conn: asyncpg.Connection, task: Task, reason: StopReason) -> Task:
    """The service stops a task: its evidence stays, and it waits for the user's word."""
    stopped = task_from_row(
        await conn.fetchrow(
            queries.SETTLE,
            uuid.UUID(task.id),
            TaskState.NEEDS_INSTRUCTIONS.value,
            reason.value,
            None,
        )
    )
    await _report(
        conn,
        stopped,
        ReportKind.STOPPED,
        f"stopped at its {reason.value.replace('_', ' ')}; waiting for the user's instructions",
        SERVICE,
    )
    return stopped


def _due(task: Task, now: datetime) -> StopReason | None:
    return stop_reason(
        task.budget,
        task.spent,
        task.deadline,
        now,
        failures=task.consecutive_failures,
        max_failures=task.max_consecutive_failures,
    )


def _overdrawn(task: Task) -> bool:
    return (
        task.spent.tokens > task.budget.tokens or task.spent.cost_micros > task.budget.cost_micros
    )


# Task budgets count cost in millionths of a currency unit; estimates in decimal units.
MICROS = Decimal(1_000_000)


class TaskStore:
    """Delegated tasks: start, claim, work reports, the user's instructions and acceptance."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def _locked(conn: asyncpg.Connection, task_id: str) -> tuple[Task, datetime]:
        """The task's row, locked, and the database's clock."""
        row = await conn.fetchrow(queries.LOCK_TASK, tree_rules.parse_id(task_id, "task_id"))
        if row is None:
            raise NotFound("task", task_id)
        return task_from_row(row), row["now"]

    async def start(self, conn: asyncpg.Connection, new: NewTask) -> Task:
        node = await NodeStore.load(conn, new.branch_node_id, "branch_node_id")
        if node.kind is NodeKind.OBSERVATION:
            raise PreconditionFailed(
                f"node {node.id!r} is an observation; start the task on the node it echoes "
                "(its parent) or on an answer made from it",
                {"field": "branch_node_id"},
            )
        state = (await NodeStore.branch_state(conn, node.id)).value
        if state in CLOSED:
            raise BranchClosed(
                f"the branch of node {node.id!r} is {state}; reopen it before delegating to it",
                {"branch_state": state},
            )
        wanted = f"{Operation.START_TASK.value} of {node.id}"
        cost = gate.Cost(new.estimate_id, "estimate_id", wanted)
        await gate.admit_work(conn, node.tree_id, gate.Hold.SHARE, cost, "its tasks")
        estimate = await _charge_estimate(conn, new, node) if new.estimate_id else None
        row = await conn.fetchrow(
            queries.INSERT_TASK,
            uuid.uuid4(),
            uuid.UUID(node.tree_id),
            uuid.UUID(node.id),
            new.goal,
            new.budget.tokens,
            new.budget.cost_micros,
            new.budget.currency,
            new.deadline,
            list(new.capability_scope),
            list(new.data_scope),
            list(new.stop_conditions),
            new.max_consecutive_failures,
            new.started_by,
            estimate,
        )
        return task_from_row(row)

    async def claim(self, conn: asyncpg.Connection, claim: Claim) -> tuple[Task | None, str]:
        """The oldest claimable task under a new lease (None: nothing to do) and its token;
        a candidate due to stop is stopped on the way, so no claim hands out an overdue task."""
        tree = tree_rules.parse_id(claim.tree_id, "tree_id") if claim.tree_id else None
        branch = (
            tree_rules.parse_id(claim.branch_node_id, "branch_node_id")
            if claim.branch_node_id
            else None
        )
        passed: list[uuid.UUID] = []
        closed: list[uuid.UUID] = []  # nodes found in a closed branch: their tasks wait
        while candidate := await conn.fetchrow(
            queries.NEXT_CLAIMABLE, list(claim.capabilities), tree, branch, passed, closed
        ):
            # However many tasks wait on closed branches, each node's is looked at once.
            if (await NodeStore.branch_state(conn, candidate["branch_node_id"])).value in CLOSED:
                closed.append(uuid.UUID(candidate["branch_node_id"]))
                continue
            task = await self._reclaim_or_stop(conn, str(candidate["id"]))
            if task is None:
                passed.append(candidate["id"])
                continue
            if await gate.safety_stops(conn, task.tree_id, gate.Hold.TASK):
                # A stop holds its tasks as it commits; one found here waits as they do.
                await _stop(conn, task, StopReason.SAFETY_STOP)
                passed.append(candidate["id"])
                continue
            token = uuid.uuid4()
            leased = task_from_row(
                await conn.fetchrow(
                    queries.LEASE_TASK,
                    uuid.UUID(task.id),
                    token,
                    claim.worker_id,
                    claim.lease_seconds,
                )
            )
            return leased, str(token)
        gate.nothing_to_admit()
        return None, ""

    @staticmethod
    async def hold_for_safety_stop(conn: asyncpg.Connection, tree_id: str) -> int:
        """Stop every queued or running task of the tree for a safety stop stated in this
        transaction (which holds the tree's row): each waits, evidence kept, for the user's
        instructions, and a worker's next call on it answers task_stopped; how many."""
        held = await conn.fetch(queries.HELD_BY_STOP, uuid.UUID(tree_id))
        for row in held:
            await _stop(conn, task_from_row(row), StopReason.SAFETY_STOP)
        return len(held)

    async def stop_overdue(self, limit: int = 100) -> int:
        """Stop tasks past their deadline that no live lease holds (queued ones nobody claims
        would otherwise show as queued for ever); how many were stopped."""
        async with self._pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(queries.OVERDUE, limit)
            for row in rows:
                await self._reclaim_or_stop(conn, str(row["id"]))
        return len(rows)

    async def _reclaim_or_stop(self, conn: asyncpg.Connection, task_id: str) -> Task | None:
        """A locked claimable task made ready to lease: a lost lease is recorded (once: the
        row is locked and leaves the expired state here) and counts as a failure; a task due
        to stop is stopped. None when it cannot be leased."""
        row = await conn.fetchrow(queries.SELECT_TASK_NOW, uuid.UUID(task_id))
        task, now = task_from_row(row), row["now"]
        if task.state is TaskState.RUNNING:
            assert task.lease is not None
            await _report(
                conn,
                task,
                ReportKind.LEASE_EXPIRED,
                f"worker {task.lease.worker_id!r} stopped heartbeating; its lease expired at "
                f"{task.lease.expires_at.isoformat()}",
                SERVICE,
            )
            task = task_from_row(
                await conn.fetchrow(
                    queries.SETTLE, uuid.UUID(task.id), TaskState.QUEUED.value, None, None
                )
            )
            task = task_from_row(
                await conn.fetchrow(queries.ACCOUNT, uuid.UUID(task.id), 0, 0, True)
            )
        reason = _due(task, now)
        if reason is not None:
            await _stop(conn, task, reason)
            return None
        return task

    async def heartbeat(self, conn: asyncpg.Connection, task_id: str, token: str) -> Task:
        """Extends the lease (only the lease); a task due to stop is stopped instead."""
        task, now = await self._locked(conn, task_id)
        expect_running(task)
        expect_lease(task, token, now)
        await gate.expect_no_safety_stop(conn, task.tree_id, gate.Hold.TASK, "its tasks")
        reason = _due(task, now)
        if reason is not None:
            return await _stop(conn, task, reason)
        return task_from_row(await conn.fetchrow(queries.RENEW_LEASE, uuid.UUID(task.id)))

    async def work(self, conn: asyncpg.Connection, report: WorkReport) -> Task:
        """A step, a failed attempt or the result; the service decides what follows."""
        if report.kind is ReportKind.RESULT:
            # The observation's append locks the tree's row: taken before the task's, in the
            # order a safety stop takes them, so the two never wait on each other.
            task_uuid = tree_rules.parse_id(report.task_id, "task_id")
            await conn.execute(queries.LOCK_TASK_TREE, task_uuid)
        task, now = await self._locked(conn, report.task_id)
        expect_running(task)
        expect_lease(task, report.lease_token, now)
        await gate.expect_no_safety_stop(conn, task.tree_id, gate.Hold.TASK, "its tasks")
        failed = report.kind in (ReportKind.STEP_FAILED, ReportKind.ATTEMPT_FAILED)
        task = task_from_row(
            await conn.fetchrow(
                queries.ACCOUNT,
                uuid.UUID(task.id),
                report.spend.tokens,
                report.spend.cost_micros,
                failed,
            )
        )
        assert task.lease is not None
        await _report(
            conn,
            task,
            report.kind,
            report.message,
            task.lease.worker_id,
            evidence=report.evidence,
            spend=report.spend,
        )
        reason = _due(task, now)
        if report.kind is ReportKind.RESULT and reason in BUDGETS and not _overdrawn(task):
            reason = None  # the work ended exactly on its budget: nothing more is spent
        if reason is not None:
            return await _stop(conn, task, reason)
        if report.kind is ReportKind.ATTEMPT_FAILED:
            return await self._settle(conn, task, TaskState.QUEUED)
        if report.kind is ReportKind.RESULT:
            return await self._echo(conn, task, report)
        return task

    @staticmethod
    async def _settle(
        conn: asyncpg.Connection, task: Task, state: TaskState, observation: str | None = None
    ) -> Task:
        row = await conn.fetchrow(
            queries.SETTLE,
            uuid.UUID(task.id),
            state.value,
            None,
            uuid.UUID(observation) if observation else None,
        )
        settled = task_from_row(row)
        if state in (TaskState.COMPLETED, TaskState.CANCELLED):
            await _settle_estimate(conn, settled)
        return settled

    async def _echo(self, conn: asyncpg.Connection, task: Task, report: WorkReport) -> Task:
        """The result returns to its branch as an observation node, never as an answer."""
        branch = await NodeStore.load(conn, task.branch_node_id, "branch_node_id")
        state = (await NodeStore.branch_state(conn, branch.id)).value
        if state in CLOSED:
            await _report(
                conn,
                task,
                ReportKind.CANCELLED,
                f"the branch was {state} meanwhile; the result stays here as evidence only",
                SERVICE,
            )
            return await self._settle(conn, task, TaskState.CANCELLED)
        assert task.lease is not None
        node, _ = await NodeStore.append(
            conn,
            tree_id=task.tree_id,
            parent=branch,
            kind=NodeKind.OBSERVATION,
            text=report.message,
            realm=RealmChoice(None, None),
            generated=Generated(
                conditions={
                    "task_id": task.id,
                    "worker_id": task.lease.worker_id,
                    "attempt": task.attempts,
                    "spent_tokens": task.spent.tokens,
                    "spent_cost_micros": task.spent.cost_micros,
                    "currency": task.budget.currency,
                },
                reasoning_summary=report.summary,
                evidence=report.evidence,
            ),
        )
        return await self._settle(conn, task, TaskState.COMPLETED, node.id)

    async def instruct(self, conn: asyncpg.Connection, given: Instructions) -> Task:
        """The user's word on a task: resume it with a new budget or deadline, or cancel it."""
        task, now = await self._locked(conn, given.task_id)
        stops = await gate.safety_stops(conn, task.tree_id, gate.Hold.TASK)
        if task.revision != given.expected_revision:
            raise RevisionConflict("task", task.id, given.expected_revision, task.revision)
        if given.instruction is Instruction.CANCEL:
            if task.state in (TaskState.COMPLETED, TaskState.CANCELLED):
                raise PreconditionFailed(
                    f"task {task.id!r} is already {task.state}", {"state": str(task.state)}
                )
            await _report(
                conn, task, ReportKind.CANCELLED, given.note or "cancelled", given.instructed_by
            )
            return await self._settle(conn, task, TaskState.CANCELLED)
        if task.state is not TaskState.NEEDS_INSTRUCTIONS:
            raise PreconditionFailed(
                f"task {task.id!r} is {task.state}; only a task stopped for instructions resumes",
                {"state": str(task.state)},
            )
        if stops:
            raise gate.SafetyStopInEffect.of(stops, task.tree_id, "its tasks")
        budget = given.budget or task.budget
        if budget.currency != task.budget.currency:
            raise PreconditionFailed(
                f"the task's budget is in {task.budget.currency}, not {budget.currency}",
                {"field": "budget.currency"},
            )
        deadline = given.deadline or task.deadline
        still = stop_reason(
            budget,
            task.spent,
            deadline,
            now,
            failures=0,
            max_failures=task.max_consecutive_failures,
        )
        if still is not None:
            raise PreconditionFailed(
                f"these instructions would stop task {task.id!r} again at once ({still.value}): "
                f"it has spent {task.spent.tokens} tokens and {task.spent.cost_micros} cost "
                "micros; give a larger budget or a later deadline",
                {"stop_reason": still.value},
            )
        await _report(
            conn,
            task,
            ReportKind.INSTRUCTIONS,
            given.note
            or f"resumed with budget {budget.tokens} tokens / {budget.cost_micros} cost micros "
            f"and deadline {deadline.isoformat()}",
            given.instructed_by,
        )
        row = await conn.fetchrow(
            queries.RESUME, uuid.UUID(task.id), budget.tokens, budget.cost_micros, deadline
        )
        return task_from_row(row)

    async def accept(
        self, conn: asyncpg.Connection, task_id: str, accepted_by: str
    ) -> tuple[Task, Node, int]:
        """The user makes a completed task's observation a candidate answer under the
        question its branch hangs from; nothing but canonicalization carries it further."""
        task, _ = await self._locked(conn, task_id)
        if task.state is not TaskState.COMPLETED or task.observation_id is None:
            raise PreconditionFailed(
                f"task {task.id!r} is {task.state}; only a completed task's observation can be "
                "accepted",
                {"state": str(task.state)},
            )
        if task.accepted_answer_id is not None:
            raise PreconditionFailed(
                f"the observation of task {task.id!r} is already answer "
                f"{task.accepted_answer_id!r}",
                {"answer_id": task.accepted_answer_id},
            )
        observation = await NodeStore.load(conn, task.observation_id, "task_id")
        state = (await NodeStore.branch_state(conn, observation.id)).value
        if state in CLOSED:
            raise BranchClosed(
                f"the observation's branch is {state}; reopen it to accept the observation",
                {"branch_state": state},
            )
        question = await self._question_above(conn, observation)
        answer, revision = await ConversationStore.add_answer(
            conn,
            NewAnswer(
                question_id=question.id,
                text=observation.text,
                generated=Generated(
                    conditions={
                        **observation.conditions,
                        "accepted_observation_id": observation.id,
                        "accepted_by": accepted_by,
                    },
                    reasoning_summary=observation.reasoning_summary,
                    evidence=observation.evidence,
                ),
                realm=RealmChoice(None, None),
            ),
        )
        row = await conn.fetchrow(
            queries.ACCEPT, uuid.UUID(task.id), uuid.UUID(answer.id), accepted_by
        )
        return task_from_row(row), answer, revision

    @staticmethod
    async def _question_above(conn: asyncpg.Connection, node: Node) -> Node:
        current = node
        while current.kind is not NodeKind.QUESTION:
            assert current.parent_id is not None  # a root is always a question
            current = await NodeStore.load(conn, current.parent_id, "parent_id")
        return current

    async def get(self, task_id: str, reports: bool) -> tuple[Task, list[TaskReport]]:
        task_uuid = tree_rules.parse_id(task_id, "task_id")
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(queries.SELECT_TASK, task_uuid)
            if row is None:
                raise NotFound("task", task_id)
            found = (
                await conn.fetch(queries.SELECT_REPORTS, task_uuid, MAX_REPORTS) if reports else []
            )
        return task_from_row(row), [report_from_row(r) for r in found]

    async def list(
        self,
        tree_id: str,
        branch_node_id: str | None,
        states: tuple[TaskState, ...],
        after: int,
        limit: int,
    ) -> list[Task]:
        tree_uuid = tree_rules.parse_id(tree_id, "tree_id")
        branch = tree_rules.parse_id(branch_node_id, "branch_node_id") if branch_node_id else None
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(
                queries.LIST_TASKS, tree_uuid, branch, [s.value for s in states], after, limit
            )
            if not rows:
                await NodeStore.expect_tree(conn, tree_id)
        return [task_from_row(r) for r in rows]


async def _charge_estimate(conn: asyncpg.Connection, new: NewTask, node: Node) -> uuid.UUID:
    """A task started under an estimate reserves it on the owner's quota first (T20); the
    estimate's id."""
    assert new.estimate_id is not None
    estimate_uuid = tree_rules.parse_id(new.estimate_id, "estimate_id")
    taken = await conn.fetchval(queries.TASK_OF_ESTIMATE, estimate_uuid)
    if taken is not None:
        raise EstimateNotApplicable(
            f"estimate_id {new.estimate_id} pays for task {taken} already; an estimate pays "
            "for one task",
            {"field": "estimate_id", "task_id": taken},
        )
    cost = Decimal(new.budget.cost_micros) / MICROS
    await charges.charge_task(
        conn, new.estimate_id, node.tree_id, node.id, (cost, new.budget.currency)
    )
    return estimate_uuid


async def _settle_estimate(conn: asyncpg.Connection, task: Task) -> None:
    """An ended task's reservation is settled with what it spent; the rest goes back."""
    if task.estimate_id is None:
        return
    spent = Decimal(task.spent.cost_micros) / MICROS
    await charges.settle(conn, task.estimate_id, "estimate_id", spent, (task.spent.tokens, None))
