"""Fixtures of the story-graph read tests."""

from __future__ import annotations

import pytest

from graph_service import search
from tests.graph_service.story import LoadedStory, load_acceptance_story


@pytest.fixture(autouse=True)
def generous_count_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Search counts within a 10 ms budget and says "unknown" past it. On a loaded test
    machine one stall can take longer, and a test about what is counted would then fail on
    timing; these tests get a second. The test of the budget itself restores it."""
    monkeypatch.setattr(search, "COUNT_BUDGET_MS", 1_000)


@pytest.fixture
async def story(tree_service) -> LoadedStory:
    """The acceptance story, recorded in a project of its own."""
    return await load_acceptance_story(f"127.0.0.1:{tree_service.port}")
