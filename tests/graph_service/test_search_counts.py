"""Search counts are taken beside the page, in their own transaction (search.Counting): they
are reported only when they belong to the page's read revision, and unknown — never guessed,
never failing the search — when they do not, run out of time or fail. (The counts themselves
are checked against real data in test_search and test_search_walks.)"""

from __future__ import annotations

import asyncio

from graph_service.search import COUNT_SETUP_MS, Counting
from graph_service.views import COUNT_BUDGET_MS

Counted = tuple[int, tuple[int | None, int | None]]


def counting(result: Counted | BaseException, delay_s: float = 0.0) -> Counting:
    async def count() -> Counted:
        await asyncio.sleep(delay_s)
        if isinstance(result, BaseException):
            raise result
        return result

    return Counting(asyncio.create_task(count()), excludes_unknown=True)


async def test_counts_of_the_pages_read_revision_are_reported():
    counts = await counting((7, (5, 2))).settle(read_revision=7, known_total=None)
    assert (counts.total, counts.unknown_time_excluded) == (5, 2)


async def test_counts_taken_at_another_revision_are_unknown():
    counts = await counting((8, (5, 2))).settle(read_revision=7, known_total=None)
    assert (counts.total, counts.unknown_time_excluded) == (None, None)


async def test_a_known_total_wins_and_a_late_or_failed_count_is_unknown():
    slow = counting((7, (5, 2)), delay_s=(COUNT_BUDGET_MS + COUNT_SETUP_MS) / 1000 * 5)
    counts = await slow.settle(read_revision=7, known_total=3)
    assert (counts.total, counts.unknown_time_excluded) == (3, None)
    failed = counting(ConnectionResetError("replica went away"))
    counts = await failed.settle(read_revision=7, known_total=None)
    assert (counts.total, counts.unknown_time_excluded) == (None, None)
