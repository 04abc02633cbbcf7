"""Fixtures of the story-graph read tests."""

from __future__ import annotations

import pytest

from graph_service import search


@pytest.fixture(autouse=True)
def generous_count_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search counts within a 10 ms budget and says "unknown" past it. On a loaded test
    machine one stall can take longer, and a test about what is counted would then fail on
    timing; these tests get a second. The test of the budget itself restores it."""
    monkeypatch.setattr(search, "COUNT_BUDGET_MS", 1_000)
