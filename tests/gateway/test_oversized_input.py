"""Oversized input gets a short answer and leaves nothing behind: every error quotes at most a
short prefix of an offending value, HTTP bodies past the limit are refused before parsing, and
memory stays flat when a client keeps sending them."""

from __future__ import annotations

import contextlib
import gc
import json
import tracemalloc
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from gateway import bodylimit, tools
from tests.conftest import free_port
from tests.gateway.harness import http_client, http_gateway, in_memory, tool_error
from tests.gateway.test_tools import bound_project

HUGE = 1_000_000
# An error of any oversized call stays this small (the old answer was ~2 MB).
MAX_ERROR_BYTES = 2_000

OVERSIZED_CALLS: list[tuple[str, dict[str, Any]]] = [
    (tools.SEARCH, {"query": "q" * HUGE}),  # maxLength
    (tools.SEARCH, {"query": "x", "time_basis": "t" * HUGE}),  # enum
    (tools.SEARCH, {"query": ["q" * HUGE]}),  # type
    (tools.SEARCH, {"query": "x", "cursor": "c" * HUGE}),  # maxLength
    (tools.SEARCH, {"query": "x", "object_types": ["o" * HUGE]}),  # enum in an array
    (tools.SEARCH, {"query": "x", "scope": {"projects": ["p" * HUGE]}}),  # oneOf
    (tools.SEARCH, {"query": "x", "scope": "s" * HUGE}),  # oneOf, not an object
    (tools.SEARCH, {"query": "x", "a" * HUGE: 1}),  # additionalProperties
    (tools.SEARCH, {"query": "x", "time_range": {"from": "2" * HUGE}}),  # maxLength
    (tools.SEARCH, {"query": "x", "options": {"min_consistency": {"lsn": "0/" + "1" * HUGE}}}),
    (tools.READ_SOURCE, {"source_reference_id": "r", "source_version": "9" * HUGE}),  # pattern
    (tools.GET_CONTEXT, {"object_ref": {"type": "e" * HUGE, "id": "i"}}),  # enum
    (tools.GET_CONTEXT, {"object_ref": {"type": "event", "id": "i" * HUGE}}),  # maxLength
]


@pytest.mark.parametrize(("tool", "arguments"), OVERSIZED_CALLS)
async def test_an_oversized_argument_is_refused_quoting_only_a_short_prefix(
    tool: str, arguments: dict[str, Any]
) -> None:
    async with in_memory(free_port(), "mtb_not_a_binding") as client:
        result = await client.call_tool(tool, arguments)
    error = tool_error(result)
    text = result.content[0].text  # type: ignore[union-attr]
    assert len(text.encode()) < MAX_ERROR_BYTES, text[:300]
    assert error["code"] == "invalid_argument"
    assert str(HUGE) in error["message"] or "characters" in error["message"], error
    for field in error.get("fields", []):
        assert len(field["description"]) < 500 and len(field["field"]) < 100


async def test_an_unknown_tool_with_a_huge_name_is_refused_with_a_short_message() -> None:
    async with in_memory(free_port(), "mtb_not_a_binding") as client:
        with pytest.raises(Exception) as refused:
            await client.call_tool("t" * HUGE, {})
    assert len(str(refused.value)) < MAX_ERROR_BYTES


def test_the_default_body_limit_holds_the_largest_legal_call_of_every_tool() -> None:
    for tool in tools.TOOLS:
        largest = bodylimit.largest_json(tool.input_schema)
        assert largest + bodylimit.ENVELOPE_BYTES <= bodylimit.DEFAULT_MAX_BODY_BYTES
    # A 1,000,000-character query never reaches the parser.
    assert bodylimit.DEFAULT_MAX_BODY_BYTES < HUGE


def test_a_schema_without_a_size_bound_is_caught() -> None:
    with pytest.raises(bodylimit.UnboundedSchema, match="maxLength"):
        bodylimit.largest_json(
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": False,
            }
        )


def call_body(arguments: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tools.SEARCH, "arguments": arguments},
    }
    return json.dumps(message).encode()


HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "authorization": "Bearer mtb_not_a_binding",
}


async def test_http_refuses_a_body_over_the_limit_with_413_and_a_short_json_rpc_error() -> None:
    body = call_body({"query": "q" * HUGE})
    async with http_gateway(free_port()) as url, httpx2.AsyncClient(timeout=30) as http:
        declared = await http.post(url, content=body, headers=HEADERS)

        async def chunks() -> Any:  # no Content-Length: the limit holds while it streams
            for start in range(0, len(body), 64 * 1024):
                yield body[start : start + 64 * 1024]

        streamed = await http.post(url, content=chunks(), headers=HEADERS)
    for response in (declared, streamed):
        assert response.status_code == 413
        assert len(response.content) < 500
        error = response.json()
        assert error["jsonrpc"] == "2.0" and error["error"]["code"] == -32600
        assert str(bodylimit.DEFAULT_MAX_BODY_BYTES) in error["error"]["message"]


async def test_http_lets_the_largest_legal_call_through_the_body_limit() -> None:
    # Every character escaped the longest way JSON allows (a surrogate pair of \\u escapes).
    wide = "\U0001f600"
    largest = {
        "query": wide * tools.MAX_QUERY,
        "scope": {"projects": [f"{i:03}" + wide * 197 for i in range(50)]},
        "cursor": wide * tools.MAX_CURSOR_CHARS,
        "time_range": {"from": wide * 64, "to": wide * 64},
    }
    body = call_body(largest)
    assert len(body) > bodylimit.DEFAULT_MAX_BODY_BYTES // 2
    async with http_gateway(free_port()) as url, httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, content=body, headers=HEADERS)
    # Past the limit; refused further in (the token cannot be checked here), never as 413.
    assert response.status_code != 413, response.text


async def oversized_calls(sessions: list[Any], query: str) -> None:
    for client in sessions:
        try:
            result = await client.call_tool(tools.SEARCH, {"query": query})
        except MCPError as refused:  # 413: the SDK client raises the JSON-RPC error
            assert "too large" in str(refused) and len(str(refused)) < MAX_ERROR_BYTES
        else:
            assert len(result.content[0].text) < MAX_ERROR_BYTES


@contextlib.asynccontextmanager
async def open_sessions(url: str, token: str) -> Any:
    """20 legacy clients, each holding its session (Mcp-Session-Id) open, each served once."""
    async with contextlib.AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(http_client(url, token, "legacy")) for _ in range(20)
        ]
        for client in sessions:
            tool_error(await client.call_tool(tools.SEARCH, {"query": "x", "page_size": 0}))
        yield sessions


def traced_after_collect() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def test_memory_stays_flat_across_oversized_calls_with_sessions_left_open(
    tree_stub, graph_stub, graph_service
) -> None:
    """20 sessions left open each send a 1,000,000-character query, refused at the body
    limit: nothing of it is kept (measured in-process with tracemalloc)."""
    token, _ = await bound_project(tree_stub, graph_stub, "Oversized")
    query = "q" * HUGE
    async with http_gateway(graph_service.port) as url, open_sessions(url, token) as sessions:
        tracemalloc.start()
        try:
            before = traced_after_collect()
            await oversized_calls(sessions, query)
            grown = traced_after_collect() - before
        finally:
            tracemalloc.stop()
    # A kept copy of each query would be 20 MB; the unread rest of each body left buffered
    # per open connection 2.5 MB (see gateway.bodylimit.too_large).
    assert grown < 1024 * 1024, f"grew {grown:,} bytes over 20 oversized calls"


async def test_past_a_raised_limit_the_sdk_keeps_one_request_per_session_never_more(
    tree_stub, graph_stub, graph_service
) -> None:
    """With the limit raised to the SDK's own 4 MiB the query reaches the schema check, and
    the SDK (mcp 2.3, shared/jsonrpc_dispatcher.py: the read loop's `item`) keeps each legacy
    session's last message, raw body and parsed JSON, until that session's next message or
    its end: memory grows with open sessions times the body limit, not with calls."""
    token, _ = await bound_project(tree_stub, graph_stub, "Oversized")
    query = "q" * HUGE
    async with (
        http_gateway(graph_service.port, max_body_bytes=4 * 1024 * 1024) as url,
        open_sessions(url, token) as sessions,
    ):
        tracemalloc.start()
        try:
            before = traced_after_collect()
            await oversized_calls(sessions, query)
            first = traced_after_collect() - before
            for _ in range(2):
                await oversized_calls(sessions, query)
            again = traced_after_collect() - before - first
        finally:
            tracemalloc.stop()
    assert first < 20 * 3 * HUGE, f"grew {first:,} bytes over the first 20 calls"
    assert again < 1024 * 1024, f"grew {again:,} bytes more over 40 further calls"
