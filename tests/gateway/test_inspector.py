"""A second real MCP client: the MCP Inspector CLI (npm), over stdio and Streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.harness import http_gateway
from tests.gateway.test_tools import TOOL_NAMES, bound_project

INSPECTOR = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "mcp-inspector"

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists(), reason="MCP Inspector not installed (make test installs it with npm)"
)


async def inspector(*args: str) -> tuple[int, Any]:
    """Run the Inspector CLI; return its exit code and the JSON it printed on stdout."""
    # Its catalog and secrets go to a home of its own, kept out of ~ and removed afterwards.
    with tempfile.TemporaryDirectory(prefix="inspector-home-") as home:
        process = await asyncio.create_subprocess_exec(
            str(INSPECTOR),
            "--cli",
            *args,
            "--format",
            "json",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "HOME": home},
        )
        out, err = await asyncio.wait_for(process.communicate(), 120)
    assert out, err.decode()
    return process.returncode or 0, json.loads(out.decode().strip().splitlines()[-1])


async def test_inspector_lists_and_calls_the_tools_over_stdio(tree_stub, graph_stub, graph_service):
    token, _ = await bound_project(tree_stub, graph_stub, "Inspector over stdio")
    stdio = [
        sys.executable,
        "-m",
        "gateway",
        "-e",
        "MIRRORTREE_GATEWAY_TRANSPORT=stdio",
        "-e",
        f"MIRRORTREE_BINDING_TOKEN={token}",
        "-e",
        f"MIRRORTREE_GATEWAY_GRAPH_TARGET=127.0.0.1:{graph_service.port}",
        "-e",
        "MIRRORTREE_LOG_LEVEL=warning",
    ]
    code, listed = await inspector(*stdio, "--method", "tools/list")
    assert code == 0
    tools = listed["result"]["tools"]
    assert [t["name"] for t in tools] == TOOL_NAMES
    assert all(t["annotations"]["readOnlyHint"] is True for t in tools)
    code, called = await inspector(
        *stdio,
        "--method",
        "tools/call",
        "--tool-name",
        "story_graph_search",
        "--tool-args-json",
        '{"query": "inspector"}',
    )
    assert code == 0
    assert [h["ref"]["id"] for h in called["result"]["structuredContent"]["hits"]] == ["d1"]


async def test_inspector_over_http_with_a_bearer_binding(tree_stub, graph_stub, graph_service):
    token, _ = await bound_project(tree_stub, graph_stub, "Inspector over HTTP")
    async with http_gateway(graph_service.port) as url:
        http = [url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
        for era in ("legacy", "modern"):
            code, called = await inspector(
                *http,
                "--protocol-era",
                era,
                "--method",
                "tools/call",
                "--tool-name",
                "story_graph_search",
                "--tool-args-json",
                '{"query": "http"}',
            )
            assert code == 0, called
            assert [h["ref"]["id"] for h in called["result"]["structuredContent"]["hits"]] == ["d1"]
        code, refused = await inspector(
            *http,
            "--method",
            "tools/call",
            "--tool-name",
            "story_graph_search",
            "--tool-args-json",
            '{"query": "x", "as_of": "2026-01-01T00:00:00Z"}',
        )
    assert code == 5  # the Inspector's exit code for a tool result with isError
    error = json.loads(refused["result"]["content"][0]["text"])["error"]
    assert error["code"] == "as_of_unsupported"
