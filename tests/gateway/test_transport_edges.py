"""What each transport tells a client at its edges: a legacy stdio client that was promised
tools/list_changed gets it, an HTTP client whose credential cannot be checked right now is
told to retry (not to drop it), and a stdio gateway started with a token graph_service refuses
says so and exits."""

from __future__ import annotations

import asyncio
import os
import sys

import anyio
import httpx2
from mcp import types

from tests.conftest import free_port
from tests.gateway.harness import http_gateway, stdio_gateway
from tests.gateway.test_gating import app_off
from tests.gateway.test_tools import TOOL_NAMES, bound_project

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


async def test_a_legacy_stdio_client_is_sent_tools_list_changed_when_the_switch_flips(
    tree_service, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Legacy stdio")
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with stdio_gateway(
        graph_service.port,
        token,
        mode="legacy",
        message_handler=on_message,
        MIRRORTREE_GATEWAY_ACCESS_POLL_MS="100",
    ) as client:
        tools = client.server_capabilities.tools
        assert tools is not None and tools.list_changed is True  # what it was promised
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        async with app_off(tree_service):
            with anyio.fail_after(10):
                await changed.wait()
            assert (await client.list_tools()).tools == []


async def test_http_answers_503_not_401_when_the_story_graph_cannot_check_a_token():
    async with http_gateway(free_port()) as url, httpx2.AsyncClient(timeout=30) as raw:
        headers = {"Accept": "application/json, text/event-stream"}
        unchecked = await raw.post(
            url, headers={**headers, "Authorization": "Bearer mtb_some_token"}, json=INITIALIZE
        )
        anonymous = await raw.post(url, headers=headers, json=INITIALIZE)
    assert unchecked.status_code == 503, unchecked.text
    assert unchecked.headers["retry-after"]
    assert unchecked.json()["error"] == "temporarily_unavailable"
    assert anonymous.status_code == 401


async def test_stdio_with_a_token_graph_service_refuses_exits_with_a_clear_error(graph_service):
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway",
        env={
            **os.environ,
            "MIRRORTREE_GATEWAY_TRANSPORT": "stdio",
            "MIRRORTREE_GATEWAY_GRAPH_TARGET": f"127.0.0.1:{graph_service.port}",
            "MIRRORTREE_BINDING_TOKEN": "mtb_not_a_binding",
        },
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 2
    assert out == b""  # nothing on the MCP wire
    assert b"MIRRORTREE_BINDING_TOKEN is not a valid runtime binding" in err
