"""Benchmark: story_graph_search as MCP tools/call over Streamable HTTP vs direct gRPC Search.

    python -m bench.gateway [--clients 32] [--seconds 10] [--query PostgreSQL]
    python -m bench.gateway --mcp-url URL --graph-target HOST:PORT --token TOKEN

Without a target it runs the whole stack as `make run` does (`python -m devtools.launcher`,
a temporary data folder and free ports, demo data), so every service is its own process and
only the clients run here. Each of C clients holds its own MCP session (the official SDK
client, 2026-07-28 protocol) and calls the tool in a loop; the baseline is C concurrent direct
gRPC Search calls with the same binding, same query, same scope, measured in the same run.
The ratio of calls/s is the figure to compare (goal: ≥ 0.5).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.services import free_port
from mirrortree.v1 import graph_pb2, graph_pb2_grpc


@contextlib.asynccontextmanager
async def launched_stack() -> AsyncIterator[tuple[str, str, str]]:
    """(MCP URL, graph_service target, binding token) of a stack started like `make run`."""
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-gw-"))
    ports = {
        name: free_port()
        for name in (
            "MIRRORTREE_PG_PRIMARY_PORT",
            "MIRRORTREE_PG_REPLICA_PORT",
            "MIRRORTREE_TREE_PORT",
            "MIRRORTREE_GRAPH_PORT",
            "MIRRORTREE_GATEWAY_PORT",
        )
    }
    env = {**os.environ, "MIRRORTREE_DATA_DIR": str(data_dir), "MIRRORTREE_LOG_LEVEL": "warning"}
    env.update({k: str(v) for k, v in ports.items()})
    launcher = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "devtools.launcher",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert launcher.stdout is not None
    try:
        url = token = ""
        while not token:
            line = (await asyncio.wait_for(launcher.stdout.readline(), 300)).decode()
            if not line:
                raise RuntimeError("the launcher exited before printing the MCP token")
            if line.startswith("MCP endpoint: "):
                url = line.removeprefix("MCP endpoint: ").strip()
            if line.startswith("MCP token: "):
                token = line.removeprefix("MCP token: ").strip()
        # Keep draining its output so the pipe never blocks the launcher.
        drain = asyncio.create_task(launcher.stdout.read())
        yield url, f"127.0.0.1:{ports['MIRRORTREE_GRAPH_PORT']}", token
        launcher.send_signal(2)  # SIGINT: the launcher stops everything it started
        await asyncio.wait_for(launcher.wait(), 60)
        drain.cancel()
    finally:
        if launcher.returncode is None:
            launcher.kill()
            await launcher.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


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


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def measure(
    url: str, graph_target: str, token: str, *, clients: int, seconds: float, query: str
) -> None:
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
                f"MCP tools/call over Streamable HTTP ({clients} clients)",
                [over_mcp(c) for c in sessions],
            ),
        )
        for name, calls in cases:
            await run_clients(calls, min(2.0, seconds))  # warm-up
            samples, rate = await run_clients(calls, seconds)
            rows.append((name, samples, rate))
    base = rows[0][2]
    print()
    print(f"query {query!r}, {clients} concurrent callers, {seconds:.0f} s each")
    print()
    print("| case | p50 ms | p99 ms | calls/s | calls/s ÷ direct gRPC |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, samples, rate in rows:
        print(
            f"| {name} | {statistics.median(samples) * 1000:.1f} | {pct(samples, 0.99):.1f} | "
            f"{rate:,.0f} | {rate / base:.2f} |"
        )


async def main_async(args: argparse.Namespace) -> None:
    if args.mcp_url:
        target = (args.mcp_url, args.graph_target, args.token)
        await measure(*target, clients=args.clients, seconds=args.seconds, query=args.query)
        return
    async with launched_stack() as target:
        await measure(*target, clients=args.clients, seconds=args.seconds, query=args.query)


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
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
