"""Giving the write side and the read side CPUs of their own (bench.run --split-cpus).

On the one host a benchmark runs on, the primary, tree_service, the replica, graph_service and
the client share every CPU, so an ingestion's work takes CPU time from the reads, which a
deployment — the primary on one machine, replicas on others — would not. Pinning the primary
and tree_service (every thread of every process of theirs) to some CPUs, and the replica,
graph_service and this client to the others, measures what still reaches the reads once the
ingestion's own CPU does not. Pinning the replica's WAL replay and receiver with the write side
as well leaves the reads' CPU to the reads alone, as on a replica with a CPU to spare for its
replay.

Beside that, where the CPU goes: the CPU time of each group of processes over a phase
(CpuUse), which bench.mixed reports quiet and while ingesting.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

# Each group's processes as they are now (backends come and go): name -> pids.
Groups = Callable[[], dict[str, list[int]]]


def pin(pids: list[int], cpus: set[int]) -> None:
    """Pin every thread of `pids` to `cpus` (processes and threads they start later inherit
    it)."""
    for pid in pids:
        with contextlib.suppress(FileNotFoundError):
            for thread in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(ProcessLookupError):
                    os.sched_setaffinity(int(thread), cpus)


def split(write: list[int], read: list[int], write_side: str, read_side: str) -> str:
    """Pin the write side to the first half of this process's CPUs and the read side to the
    rest; says which went where (the sides named as given)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--split-cpus needs at least 2 CPUs")
    half = len(cpus) // 2
    write_cpus, read_cpus = set(cpus[:half]), set(cpus[half:])
    pin(write, write_cpus)
    pin(read, read_cpus)
    return f"CPUs split: {write_side} on {sorted(write_cpus)}; {read_side} on {sorted(read_cpus)}"


def cpu_seconds(pid: int) -> float:
    """The CPU time `pid` has used so far (user and system), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def titled(pids: list[int], word: str) -> list[int]:
    """Those of `pids` whose title (a postgres process's: "postgres: startup ...") has `word`."""
    found = []
    for pid in pids:
        with (
            contextlib.suppress(FileNotFoundError, ProcessLookupError),
            open(f"/proc/{pid}/cmdline") as cmdline,
        ):
            if word in cmdline.read():
                found.append(pid)
    return found


class CpuUse:
    """The CPU time each group of processes used between start() and stop(), summed over
    every such span. A process that starts within a span counts from its start; one that
    ends within it loses its last span."""

    def __init__(self, groups: Groups) -> None:
        self._groups = groups
        self._at_start: dict[str, dict[int, float]] = {}
        self.seconds: dict[str, float] = {}
        self.wall = 0.0
        self._started = 0.0

    def start(self, now: float) -> None:
        self._started = now
        self._at_start = {
            name: {pid: cpu_seconds(pid) for pid in pids} for name, pids in self._groups().items()
        }

    def stop(self, now: float) -> None:
        self.wall += now - self._started
        for name, pids in self._groups().items():
            before = self._at_start.get(name, {})
            used = sum(
                max(cpu_seconds(pid) - before.get(pid, 0.0), 0.0) for pid in set(pids) | set(before)
            )
            self.seconds[name] = self.seconds.get(name, 0.0) + used

    def cores(self) -> dict[str, float]:
        """Each group's CPU time over the spans' wall time: the CPUs it kept busy."""
        return {name: used / self.wall for name, used in self.seconds.items()} if self.wall else {}
