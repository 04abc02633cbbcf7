"""The stop rule of delegated tasks, without a database: a budget stops a task once used up,
the deadline once reached, failures at the limit; the first reason found is the one given."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tree_service.tasks.rules import Budget, Spend, StopReason, stop_reason

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
BUDGET = Budget(tokens=100, cost_micros=1_000, currency="EUR")
LATER = NOW + timedelta(minutes=5)


@pytest.mark.parametrize(
    ("spent", "deadline", "failures", "expected"),
    [
        (Spend(99, 999), LATER, 2, None),
        (Spend(100, 0), LATER, 0, StopReason.TOKEN_BUDGET),
        (Spend(150, 5_000), NOW, 3, StopReason.TOKEN_BUDGET),
        (Spend(0, 1_000), LATER, 0, StopReason.COST_BUDGET),
        (Spend(0, 0), NOW, 0, StopReason.DEADLINE),
        (Spend(0, 0), NOW - timedelta(seconds=1), 3, StopReason.DEADLINE),
        (Spend(0, 0), LATER, 3, StopReason.CONSECUTIVE_FAILURES),
    ],
)
def test_a_task_stops_at_the_first_limit_it_reaches(spent, deadline, failures, expected):
    assert stop_reason(BUDGET, spent, deadline, NOW, failures=failures, max_failures=3) == expected
