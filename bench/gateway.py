"""Benchmark: story_graph_search as MCP tools/call over Streamable HTTP vs direct gRPC Search.

    python -m bench.gateway [--clients 32] [--seconds 10] [--query PostgreSQL]
    python -m bench.gateway --mcp-url URL --graph-target HOST:PORT --token TOKEN

Without a target it runs the whole stack as `make run` does (`python -m devtools.launcher`,
a temporary data folder, a free port for every service, the web view's included, demo data,
the per-binding rate limit lifted), so every service is its own process and only the clients
run here; it stops all of it however the run ends. The baseline is C concurrent direct gRPC
Search calls with the same binding, query and scope; then C plain HTTP clients each POST
`tools/call` as the 2026-07-28 protocol has it (what the gateway costs), and C official SDK
client sessions call the tool (what an agent runtime built on the SDK adds on its side), all in
the same run. The ratio of calls/s is the figure to compare (goal: ≥ 0.7 for the plain
clients); on a stack it started, the CPU per call of each process group says where it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.cpus import CpuUse, Groups
from bench.measure import pct
from bench.services import free_port
from devtools.launcher import RunDir
from devtools.pgcluster.processes import postgres_processes
from mirrortree.v1 import graph_pb2, graph_pb2_grpc

# Every port the launcher binds, each given a free one: a default port in use (a `make run`
# left running, say) must not fail the bench.
PORT_VARIABLES = (
    "MIRRORTREE_PG_PRIMARY_PORT",
    "MIRRORTREE_PG_REPLICA_PORT",
    "MIRRORTREE_TREE_PORT",
    "MIRRORTREE_GRAPH_PORT",
    "MIRRORTREE_GATEWAY_PORT",
    "MIRRORTREE_WEBVIEW_PORT",
)
# The bench measures throughput, not the per-binding rate limit (gateway.ratelimit): lifted
# to the largest values the gateway accepts, so no call is refused as rate_limited.
RATE_LIMIT_LIFTED = {
    "MIRRORTREE_GATEWAY_RATE_PER_MINUTE": "1000000",
    "MIRRORTREE_GATEWAY_RATE_BURST": "100000",
}
START_S = 300.0
STOP_S = 90.0  # the launcher stops its services, then PostgreSQL
PROTOCOL = "2026-07-28"


@dataclass(frozen=True)
class LaunchedStack:
    """A stack started like `make run`, in its own data folder."""

    mcp_url: str
    graph_target: str
    token: str
    data_dir: Path
    env: dict[str, str]


@contextlib.contextmanager
def launched_stack(start_s: float = START_S) -> Iterator[LaunchedStack]:
    """Start the stack as `make run` does, and stop all of it on every way out: a normal end,
    an exception, Ctrl-C, a launcher that fails to start or to stop. Synchronous, outside any
    event loop, so that no cancellation can cut the stop short."""
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-gw-"))
    env = {
        **os.environ,
        "MIRRORTREE_DATA_DIR": str(data_dir),
        "MIRRORTREE_LOG_LEVEL": "warning",
        **{name: str(free_port()) for name in PORT_VARIABLES},
        **RATE_LIMIT_LIFTED,
    }
    # Its own session: a Ctrl-C at the terminal reaches the bench alone, which then stops the
    # launcher in order (the launcher runs each service in a session of its own too).
    launcher = subprocess.Popen(
        [sys.executable, "-m", "devtools.launcher"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        lines = launcher_lines(launcher)
        url = token = ""
        deadline = time.monotonic() + start_s
        while not token:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(
                    f"the launcher did not print the MCP token in {start_s:g} s"
                ) from None
            if line is None:
                raise RuntimeError("the launcher exited before printing the MCP token")
            if line.startswith("MCP endpoint: "):
                url = line.removeprefix("MCP endpoint: ").strip()
            if line.startswith("MCP token: "):
                token = line.removeprefix("MCP token: ").strip()
        graph_target = f"127.0.0.1:{env['MIRRORTREE_GRAPH_PORT']}"
        yield LaunchedStack(url, graph_target, token, data_dir, env)
    finally:
        stop_launched(launcher, env)
        shutil.rmtree(data_dir, ignore_errors=True)


def launcher_lines(launcher: subprocess.Popen[bytes]) -> queue.Queue[str | None]:
    """The launcher's output lines (None at its end), read by a thread that keeps draining
    it so the pipe never blocks the launcher."""
    lines: queue.Queue[str | None] = queue.Queue()
    output = launcher.stdout
    assert output is not None

    def read() -> None:
        for raw in output:
            lines.put(raw.decode(errors="replace"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def stop_launched(launcher: subprocess.Popen[bytes], env: dict[str, str]) -> None:
    """Stop the launcher and everything it started.

    SIGINT first: the launcher stops its services and PostgreSQL in order. If it does not end
    in STOP_S it is killed, and whatever it left (its run records: services, PostgreSQL) is
    stopped by `python -m devtools.launcher stop` on the same data folder, which also runs
    after a clean stop, where it finds nothing.
    """
    if launcher.poll() is None:
        launcher.send_signal(signal.SIGINT)
        try:
            launcher.wait(STOP_S)
        except subprocess.TimeoutExpired:
            launcher.kill()
            launcher.wait()
    subprocess.run(
        [sys.executable, "-m", "devtools.launcher", "stop"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=STOP_S,
        check=False,
    )


async def run_clients(
    clients: list[Callable[[], Awaitable[object]]], seconds: float
) -> tuple[list[float], float]:
    """Each client calls in a loop for `seconds`; (latencies, calls/s overall)."""
    samples: list[float] = []
    deadline = time.perf_counter() + seconds

    async def loop(call: Callable[[], Awaitable[object]]) -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await call()
            samples.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in clients))
    return samples, len(samples) / (time.perf_counter() - started)


def stack_groups(data_dir: Path) -> Groups:
    """The processes of a stack the launcher started in data_dir, by what they are (their
    pids as the launcher recorded them, PostgreSQL's as they are now): where each call's CPU
    goes."""

    run = RunDir(data_dir / "run")

    def recorded(name: str) -> list[int]:
        entry = run.recorded(name)
        return [entry.pid] if entry is not None else []

    def groups() -> dict[str, list[int]]:
        return {
            "gateway": recorded("gateway"),
            "graph_service": recorded("graph_service"),
            "PostgreSQL": [
                *postgres_processes(data_dir / "primary"),
                *postgres_processes(data_dir / "replica"),
            ],
            "clients": [os.getpid()],
        }

    return groups


def plain_mcp_call(
    stack: contextlib.AsyncExitStack, url: str, token: str, query: str
) -> Callable[[], Awaitable[object]]:
    """One `tools/call` as the wire protocol has it (2026-07-28: one sessionless POST, JSON
    back), from a client that does nothing else, as an agent runtime's HTTP layer would; its
    HTTP client closes with `stack`."""
    http = httpx2.AsyncClient(
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "story_graph_search",
        },
        timeout=httpx2.Timeout(30, read=60),
    )
    stack.push_async_callback(http.aclose)
    meta = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "bench.gateway", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "story_graph_search", "arguments": {"query": query}, "_meta": meta},
        }
    ).encode()

    async def call() -> object:
        response = await http.post(url, content=body)
        response.raise_for_status()
        result = response.json()["result"]
        assert not result.get("isError") and result["structuredContent"]["hits"], result
        return result

    return call


@dataclass(frozen=True)
class Row:
    name: str
    samples: list[float]
    rate: float
    cpu_ms: dict[str, float]  # CPU per call by process group (empty: not measured)


async def measure(
    url: str,
    graph_target: str,
    token: str,
    *,
    clients: int,
    seconds: float,
    query: str,
    groups: Groups | None = None,
) -> list[Row]:
    async with contextlib.AsyncExitStack() as stack:
        channel = grpc.aio.insecure_channel(graph_target)
        stack.push_async_callback(channel.close)
        stub = graph_pb2_grpc.StoryGraphStub(channel)
        metadata = [("authorization", f"Bearer {token}")]
        request = graph_pb2.SearchRequest(query=query)

        async def direct() -> object:
            response = await stub.Search(request, metadata=metadata, timeout=30)
            assert response.hits, "the query must find something"
            return response

        sessions = []
        for _ in range(clients):
            http = httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=60)
            )
            await stack.enter_async_context(http)
            client = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), cache=None)
            )
            sessions.append(client)

        def over_mcp(client: Client) -> Callable[[], Awaitable[object]]:
            async def call() -> object:
                result = await client.call_tool("story_graph_search", {"query": query})
                assert not result.is_error, result.content
                return result

            return call

        rows = []
        cases: tuple[tuple[str, list[Callable[[], Awaitable[object]]]], ...] = (
            (f"direct gRPC Search ({clients} concurrent, one channel)", [direct] * clients),
            (
                f"MCP tools/call, plain HTTP clients ({clients})",
                [plain_mcp_call(stack, url, token, query) for _ in range(clients)],
            ),
            (
                f"MCP tools/call, official SDK clients ({clients} sessions)",
                [over_mcp(c) for c in sessions],
            ),
        )
        for name, calls in cases:
            await run_clients(calls, min(2.0, seconds))  # warm-up
            use = CpuUse(groups) if groups is not None else None
            if use is not None:
                use.start(time.monotonic())
            samples, rate = await run_clients(calls, seconds)
            cpu_ms: dict[str, float] = {}
            if use is not None:
                use.stop(time.monotonic())
                cpu_ms = {group: used / len(samples) * 1000 for group, used in use.seconds.items()}
            rows.append(Row(name, samples, rate, cpu_ms))
    return rows


def report(rows: list[Row], *, clients: int, seconds: float, query: str) -> str:
    """The table: latency, throughput against direct gRPC, and CPU per call where measured."""
    base = rows[0].rate
    groups = list(rows[0].cpu_ms)
    head = ["case", "p50 ms", "p99 ms", "calls/s", "calls/s ÷ direct gRPC"]
    head += [f"CPU ms/call: {g}" for g in groups] + (["CPU ms/call: all"] if groups else [])
    lines = [
        f"query {query!r}, {clients} concurrent callers, {seconds:g} s each, "
        f"host load {os.getloadavg()[0]:.2f} (1-min average at the end)",
        "",
        "| " + " | ".join(head) + " |",
        "| --- |" + " ---: |" * (len(head) - 1),
    ]
    for row in rows:
        cells = [
            row.name,
            f"{statistics.median(row.samples) * 1000:.1f}",
            f"{pct(row.samples, 0.99):.1f}",
            f"{row.rate:,.0f}",
            f"{row.rate / base:.2f}",
        ]
        if groups:
            cells += [f"{row.cpu_ms[g]:.2f}" for g in groups]
            cells.append(f"{sum(row.cpu_ms.values()):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main_with(args: argparse.Namespace) -> None:
    measuring = {"clients": args.clients, "seconds": args.seconds, "query": args.query}
    if args.mcp_url:
        rows = asyncio.run(measure(args.mcp_url, args.graph_target, args.token, **measuring))
    else:
        with launched_stack() as stack:
            rows = asyncio.run(
                measure(
                    stack.mcp_url,
                    stack.graph_target,
                    stack.token,
                    groups=stack_groups(stack.data_dir),
                    **measuring,
                )
            )
    print()
    print(report(rows, **measuring))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--query", default="PostgreSQL")
    parser.add_argument("--mcp-url", default="", help="a running gateway's /mcp URL")
    parser.add_argument("--graph-target", default="127.0.0.1:50052")
    parser.add_argument("--token", default=os.environ.get("MIRRORTREE_BINDING_TOKEN", ""))
    args = parser.parse_args()
    if args.mcp_url and not args.token:
        parser.error("--token (or MIRRORTREE_BINDING_TOKEN) is required with --mcp-url")
    main_with(args)


if __name__ == "__main__":
    main()
