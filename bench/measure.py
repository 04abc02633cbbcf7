"""Measuring one case: warm-up, sequential latency (p50/p99) and throughput with calls in
flight, against the story-graph reads' p99 target."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

TARGET_P99_MS = 25.0
WARM_UP_CALLS = 20
WARM_UP_S = 2.0


Call = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Case:
    name: str
    call: Call
    graph_read: bool = False  # a story-graph read, held to the p99 target


@dataclass(frozen=True)
class Measured:
    case: Case
    samples: list[float]
    rate: float

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.samples) * 1000

    @property
    def p99_ms(self) -> float:
        return pct(self.samples, 0.99)

    @property
    def over_target(self) -> bool:
        return self.case.graph_read and self.p99_ms > TARGET_P99_MS


async def warm_up(call: Call) -> None:
    """Connections, prepared statements, caches: a few calls, bounded in time for slow ones."""
    deadline = time.perf_counter() + WARM_UP_S
    for _ in range(WARM_UP_CALLS):
        await call()
        if time.perf_counter() > deadline:
            return


async def measure(case: Case, seconds: float, concurrency: int) -> Measured:
    """Warm up, then `seconds` of calls one at a time (latency) and `seconds` with
    `concurrency` in flight (calls/s)."""
    await warm_up(case.call)
    samples = await sequential(case.call, seconds)
    rate = await throughput(case.call, seconds, concurrency)
    return Measured(case, samples, rate)


async def sequential(call: Call, seconds: float) -> list[float]:
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def throughput(call: Call, seconds: float, workers: int) -> float:
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return done / (time.perf_counter() - started)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000
