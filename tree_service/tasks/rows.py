"""Task and report rows as domain values."""

from __future__ import annotations

import json

import asyncpg

from tree_service.tasks.rules import (
    Budget,
    Lease,
    ReportKind,
    Spend,
    StopReason,
    Task,
    TaskReport,
    TaskState,
)


def task_from_row(row: asyncpg.Record) -> Task:
    lease = None
    if row["lease_token"] is not None:
        lease = Lease(
            token=row["lease_token"],
            worker_id=row["leased_by"],
            expires_at=row["lease_expires_at"],
            lease_seconds=row["lease_seconds"],
        )
    return Task(
        id=row["id"],
        tree_id=row["tree_id"],
        branch_node_id=row["branch_node_id"],
        goal=row["goal"],
        budget=Budget(row["budget_tokens"], row["budget_cost_micros"], row["currency"]),
        deadline=row["deadline"],
        capability_scope=tuple(row["capability_scope"]),
        data_scope=tuple(row["data_scope"]),
        stop_conditions=tuple(row["stop_conditions"]),
        max_consecutive_failures=row["max_consecutive_failures"],
        state=TaskState(row["state"]),
        stop_reason=StopReason(row["stop_reason"]) if row["stop_reason"] else None,
        spent=Spend(row["spent_tokens"], row["spent_cost_micros"]),
        consecutive_failures=row["consecutive_failures"],
        attempts=row["attempts"],
        lease=lease,
        observation_id=row["observation_id"],
        accepted_answer_id=row["accepted_answer_id"],
        started_by=row["started_by"],
        revision=row["revision"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        position=row["position"],
        estimate_id=row["estimate_id"],
    )


def report_from_row(row: asyncpg.Record) -> TaskReport:
    return TaskReport(
        seq=row["seq"],
        attempt=row["attempt"],
        kind=ReportKind(row["kind"]),
        message=row["message"],
        evidence=tuple(json.loads(row["evidence"])),
        spend=Spend(row["tokens"], row["cost_micros"]),
        reported_by=row["reported_by"],
        created_at=row["created_at"],
    )
