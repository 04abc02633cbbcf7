"""Giving the write side and the read side CPUs of their own (bench.run --split-cpus).

On the one host a benchmark runs on, the primary, tree_service, the replica, graph_service and
the client share every CPU, so an ingestion's work takes CPU time from the reads, which a
deployment — the primary on one machine, replicas on others — would not. Pinning the primary
and tree_service (every thread of every process of theirs) to some CPUs, and the replica,
graph_service and this client to the others, measures what still reaches the reads: the
replica replaying the ingestion, not the ingestion's CPU.
"""

from __future__ import annotations

import contextlib
import os


def pin(pids: list[int], cpus: set[int]) -> None:
    """Pin every thread of `pids` to `cpus` (processes and threads they start later inherit
    it)."""
    for pid in pids:
        with contextlib.suppress(FileNotFoundError):
            for thread in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(ProcessLookupError):
                    os.sched_setaffinity(int(thread), cpus)


def split(write: list[int], read: list[int]) -> str:
    """Pin the write side to the first half of this process's CPUs and the read side to the
    rest; says which went where."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--split-cpus needs at least 2 CPUs")
    half = len(cpus) // 2
    write_cpus, read_cpus = set(cpus[:half]), set(cpus[half:])
    pin(write, write_cpus)
    pin(read, read_cpus)
    return (
        f"CPUs split: primary and tree_service on {sorted(write_cpus)}; replica, graph_service "
        f"and the client on {sorted(read_cpus)}"
    )
