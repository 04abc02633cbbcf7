"""The context neighbourhood cache: bounded by the memory its entries take, one entry per
object at its newest read revision, least recently used out first — and the memory estimate it
is bounded by is what the entries really take."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph_service.config import Settings
from graph_service.neighbourhood import (
    COPY_BYTES,
    ENTRY_BYTES,
    Neighbourhood,
    NeighbourhoodCache,
)

START = datetime(2026, 3, 1, tzinfo=UTC)


def rows(copies: int, tag: str) -> list[list[Any]]:
    """CONTEXT_NEIGHBOURHOOD's rows (Member's fields in order), each with strings of its own
    as asyncpg decodes them."""
    made = []
    for i in range(copies):
        at = START + timedelta(minutes=i)
        made.append(
            [
                "self" if i == 0 else "member",
                "event",
                f"event-{tag}-{i:04d}",
                f"review-{tag}-{i % 3}-2026-03-01",
                1,
                "decision" if i % 4 == 0 else None,
                at,
                at + timedelta(hours=1),
                "minute",
                at + timedelta(days=1),
                at + timedelta(days=1, seconds=5),
                1000 + i,
                [f"source-{tag}-{i:04d}"],
            ]
        )
    return made


def neighbourhood(copies: int, tag: str = "x") -> Neighbourhood:
    return Neighbourhood(rows(copies, tag))


def key(n: int) -> tuple[str, str, str]:
    return ("project:p", "event", f"e{n}")


def test_the_bound_is_the_memory_entries_take_not_their_copies() -> None:
    one_copy = neighbourhood(1)
    assert one_copy.weight == ENTRY_BYTES + COPY_BYTES
    cache = NeighbourhoodCache(10 * one_copy.weight)
    for n in range(25):
        cache.put(key(n), 7, neighbourhood(1, str(n)))
        assert cache.held_bytes <= 10 * one_copy.weight
    # Ten one-copy entries fit, though the bound is ten entries' worth, not ten copies'.
    assert len(cache) == 10 and cache.held_bytes == 10 * one_copy.weight
    # The oldest went first.
    assert cache.get(key(14), 7) is None and cache.get(key(15), 7) is not None
    # Nothing larger than the whole bound is held, and it evicts nothing.
    cache.put(key(99), 7, neighbourhood(20))
    assert cache.get(key(99), 7) is None and len(cache) == 10


def test_a_read_keeps_its_entry_from_going_first() -> None:
    weight = neighbourhood(1).weight
    cache = NeighbourhoodCache(3 * weight)
    for n in range(3):
        cache.put(key(n), 1, neighbourhood(1))
    assert cache.get(key(0), 1) is not None
    cache.put(key(3), 1, neighbourhood(1))
    assert [cache.get(key(n), 1) is not None for n in range(4)] == [True, False, True, True]


def test_an_object_is_held_once_at_its_newest_revision() -> None:
    cache = NeighbourhoodCache(1 << 20)
    first, newer, older = neighbourhood(2), neighbourhood(3), neighbourhood(4)
    cache.put(key(1), 5, first)
    assert cache.get(key(1), 5) is first
    # Another revision of the scope is another neighbourhood: never answered from this one.
    assert cache.get(key(1), 6) is None and cache.get(key(1), 4) is None
    cache.put(key(1), 6, newer)
    assert len(cache) == 1 and cache.held_bytes == newer.weight
    assert cache.get(key(1), 6) is newer and cache.get(key(1), 5) is None
    # A read on a replica further behind does not push out the newer entry.
    cache.put(key(1), 5, older)
    assert cache.get(key(1), 6) is newer and cache.held_bytes == newer.weight
    # The same object in another scope is another entry.
    cache.put(("project:q", "event", "e1"), 6, first)
    assert len(cache) == 2 and cache.held_bytes == newer.weight + first.weight


def test_a_bound_of_zero_holds_nothing() -> None:
    cache = NeighbourhoodCache(0)
    cache.put(key(1), 1, neighbourhood(1))
    assert len(cache) == 0 and cache.held_bytes == 0 and cache.get(key(1), 1) is None


@pytest.mark.parametrize("copies", [1, 3, 10, 100])
def test_the_estimate_is_what_the_entries_really_take(copies: int) -> None:
    entries = 2000 // copies + 20
    gc.collect()
    tracemalloc.start()
    try:
        cache = NeighbourhoodCache(1 << 40)
        for n in range(entries):
            cache.put(("project:p", "event", f"event-{n:06d}"), 1, neighbourhood(copies, str(n)))
        gc.collect()
        taken, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    ratio = cache.held_bytes / taken
    assert 0.8 <= ratio <= 1.3, (copies, taken / entries, ratio)


def test_the_bound_is_set_in_megabytes_and_the_retired_count_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MIRRORTREE_GRAPH_REPLICA_DSNS", "postgresql://replica/db")
    monkeypatch.setenv("MIRRORTREE_CURSOR_SECRET", "s" * 32)
    assert Settings.from_env().context_cache_mb == 64
    monkeypatch.setenv("MIRRORTREE_GRAPH_CONTEXT_CACHE_MB", "0")
    assert Settings.from_env().context_cache_mb == 0
    monkeypatch.setenv("MIRRORTREE_GRAPH_CONTEXT_CACHE_MB", "-1")
    with pytest.raises(ValueError, match="MIRRORTREE_GRAPH_CONTEXT_CACHE_MB=-1 is outside"):
        Settings.from_env()
    monkeypatch.setenv("MIRRORTREE_GRAPH_CONTEXT_CACHE_MB", "8")
    monkeypatch.setenv("MIRRORTREE_GRAPH_CONTEXT_CACHE_COPIES", "100000")
    with pytest.raises(ValueError, match=r"CACHE_COPIES is no longer read: set .*CACHE_MB"):
        Settings.from_env()
