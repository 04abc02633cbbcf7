"""Helpers to run the gateway for tests: in-memory, over Streamable HTTP, and over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.session import MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client

from gateway.config import Settings
from gateway.http import build_http_app
from gateway.server import build_server
from tests.conftest import free_port, uvicorn_serving


def settings_for(graph_port: int, token: str = "", **overrides: Any) -> Settings:
    overrides.setdefault("access_poll_s", 0.1)  # notice switches quickly in tests
    return Settings(graph_target=f"127.0.0.1:{graph_port}", binding_token=token, **overrides)


@contextlib.asynccontextmanager
async def in_memory(graph_port: int, token: str, mode: str = "auto") -> AsyncIterator[Client]:
    server = build_server(settings_for(graph_port, token))
    async with Client(server, mode=mode, cache=None) as client:
        yield client


@contextlib.asynccontextmanager
async def http_gateway(graph_port: int, **overrides: Any) -> AsyncIterator[str]:
    """Serve the HTTP app on a free loopback port; yields the /mcp URL."""
    port = free_port()
    settings = settings_for(graph_port, listen=f"127.0.0.1:{port}", **overrides)
    async with uvicorn_serving(build_http_app(settings), port, lifespan="on"):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.asynccontextmanager
async def http_client(url: str, token: str, mode: str = "auto") -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=60)
    )
    async with (
        http,
        Client(streamable_http_client(url, http_client=http), mode=mode, cache=None) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def stdio_gateway(
    graph_port: int,
    token: str,
    mode: str = "auto",
    message_handler: MessageHandlerFnT | None = None,
    **env: str,
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gateway"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "MIRRORTREE_GATEWAY_TRANSPORT": "stdio",
            "MIRRORTREE_GATEWAY_GRAPH_TARGET": f"127.0.0.1:{graph_port}",
            "MIRRORTREE_BINDING_TOKEN": token,
            "MIRRORTREE_LOG_LEVEL": "warning",
            **env,
        },
    )
    async with Client(params, mode=mode, cache=None, message_handler=message_handler) as client:
        yield client


def tool_error(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    data: dict[str, Any] = json.loads(result.content[0].text)["error"]
    return data


@dataclass
class GatewayProcess:
    process: asyncio.subprocess.Process
    url: str  # of /mcp
    healthz: str


@contextlib.asynccontextmanager
async def gateway_process(
    graph_port: int, env: Mapping[str, str] | None = None
) -> AsyncIterator[GatewayProcess]:
    """`python -m gateway` over HTTP (with `env` on top of the test's), once /healthz answers;
    stopped (SIGTERM, then SIGKILL after 10 s) unless the test stopped it already."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway",
        env={
            **os.environ,
            "MIRRORTREE_GATEWAY_GRAPH_TARGET": f"127.0.0.1:{graph_port}",
            "MIRRORTREE_GATEWAY_LISTEN": f"127.0.0.1:{port}",
            "MIRRORTREE_LOG_LEVEL": "warning",
            **(env or {}),
        },
        stdout=asyncio.subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    gateway = GatewayProcess(process, f"{base}/mcp", f"{base}/healthz")
    try:
        async with httpx2.AsyncClient(timeout=2) as probe:
            for _ in range(300):
                with contextlib.suppress(httpx2.TransportError):
                    if (await probe.get(gateway.healthz)).status_code == 200:
                        break
                await asyncio.sleep(0.1)
        yield gateway
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
        await process.wait()
