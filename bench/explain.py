"""The --explain pass: the slow reads run again through a graph_service whose replica sessions
log their slow statements' plans (auto_explain)."""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path
from urllib.parse import urlencode

import grpc

from bench.cases import Reads
from bench.services import start_graph
from bench.story import StoryPlan
from mirrortree.v1 import graph_pb2_grpc

# Statements slower than this are logged with their plans in the --explain pass.
EXPLAIN_MIN_MS = 2
EXPLAIN_CALLS = 3


async def explain(
    replica_dsn: str,
    replica_log: Path,
    plan: StoryPlan,
    names: list[str],
    args: argparse.Namespace,
) -> None:
    """Run the named cases through a graph_service whose sessions log slow plans, and write
    each case's plans to args.explain."""
    settings = {
        "session_preload_libraries": "auto_explain",
        "auto_explain.log_min_duration": str(EXPLAIN_MIN_MS),
        "auto_explain.log_analyze": "on",
        "auto_explain.log_buffers": "on",
        "auto_explain.log_timing": "on",
        "auto_explain.log_nested_statements": "on",
    }
    graph = await start_graph(
        f"{replica_dsn}?{urlencode(settings)}", replica_log.parent / "graph_service_explain.log"
    )
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{graph.port}")
    sections: list[str] = []
    try:
        stub = graph_pb2_grpc.StoryGraphStub(channel)
        cases = {c.name: c for c in await Reads(stub, plan).cases()}
        for name in names:
            before = replica_log.stat().st_size  # noqa: ASYNC240 - a stat, not worth a thread
            for _ in range(EXPLAIN_CALLS):
                await cases[name].call()
            await asyncio.sleep(0.5)  # let the server flush its log
            logged = await asyncio.to_thread(read_from, replica_log, before)
            durations = [float(d) for d in re.findall(r"duration: ([0-9.]+) ms\s+plan:", logged)]
            cancelled = logged.count("canceling statement due to statement timeout")
            slowest = ", ".join(f"{d:.1f}" for d in sorted(durations, reverse=True)[:4])
            summary = (
                f"{name}: per call {len(durations) / EXPLAIN_CALLS:.1f} statements over "
                f"{EXPLAIN_MIN_MS} ms taking {sum(durations) / EXPLAIN_CALLS:.1f} ms, "
                f"{cancelled / EXPLAIN_CALLS:.1f} cancelled by a statement timeout; slowest "
                f"{slowest or '-'} ms"
            )
            print(f"  {summary}")
            sections.append(f"===== {summary}\n{logged}")
        await asyncio.to_thread(Path(args.explain).write_text, "\n".join(sections))
        print(f"plans of the slow reads' statements written to {args.explain}")
    finally:
        await channel.close()
        await graph.stop()


def read_from(path: Path, offset: int) -> str:
    with path.open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")
