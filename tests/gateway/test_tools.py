"""The MCP gateway with the official SDK client: in-memory, Streamable HTTP and stdio."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp import types

from graph_service import search
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.gateway.harness import http_client, http_gateway, in_memory, stdio_gateway, tool_error
from tests.graph_service.story import options, record
from tests.graph_service.test_search import entries, slow_index_scans

TOOL_NAMES = ["story_graph_search", "story_graph_get_context", "story_graph_read_source"]


async def project_less_binding(tree_stub, graph_stub) -> str:
    """A binding (no granted scopes) on a session without a current project."""
    session = (await create_tree(tree_stub)).tree
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="Continue"
        )
    )
    await graph_stub.Search(  # wait until the replica knows the binding
        graph_pb2.SearchRequest(
            query="x",
            scope=project_scope(["p"]),
            options=graph_pb2.ReadOptions(min_consistency=binding.consistency),
        )
    )
    return str(binding.token)


async def bound_project(tree_stub, graph_stub, title: str) -> tuple[str, str]:
    """A session in a fresh project with one decision event; returns (token, project)."""
    project = unique("proj")
    session = (await create_tree(tree_stub, project_id=project)).tree
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="OpenCode"
        )
    )
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
            phase="daily",
            review_generated_at="2026-10-02T01:00:00Z",
            events=[tree_pb2.EventInput(id="d1", kind=tree_pb2.DECISION, title=title)],
        )
    )
    # Wait until the replica has the binding and the review before the gateway reads.
    await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="x",
            options=graph_pb2.ReadOptions(
                min_consistency=written.consistency, session_id=session.id
            ),
        )
    )
    return binding.token, project


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_three_read_only_tools_are_listed(tree_stub, graph_stub, graph_service, mode):
    token, _ = await bound_project(tree_stub, graph_stub, "Listed")
    async with in_memory(graph_service.port, token, mode) as client:
        listed = await client.list_tools()
    async with in_memory(graph_service.port, "mtb_unknown", mode) as client:
        unknown = await client.list_tools()
    assert unknown.tools == []
    assert [t.name for t in listed.tools] == TOOL_NAMES
    for tool in listed.tools:
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert "as_of" not in json.dumps(tool.input_schema)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_search_in_memory_returns_a_page_from_the_bound_project(
    tree_stub, graph_stub, graph_service, mode
):
    token, project = await bound_project(tree_stub, graph_stub, "Use PostgreSQL replicas")
    async with in_memory(graph_service.port, token, mode) as client:
        result = await client.call_tool("story_graph_search", {"query": "postgresql"})
    assert not result.is_error, result.content
    data = result.structured_content
    assert [h["ref"] for h in data["hits"]] == [{"type": "event", "id": "d1"}]
    assert data["requested_scope"] == {"default": True}
    assert data["resolved_scope"]["scope"] == {"projects": [project]}
    assert data["resolved_scope"]["resolution"] == "session_current_project"
    assert data["page"]["total"] == {"exact": "1"}  # int64 travels as a string
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == data


async def test_as_of_is_refused_with_a_tool_error_naming_it(graph_service):
    async with in_memory(graph_service.port, "unused") as client:
        result = await client.call_tool("story_graph_search", {"query": "x", "as_of": "2026-01-01"})
    error = tool_error(result)
    assert error["code"] == "as_of_unsupported"
    assert "as_of" in error["message"]


async def test_a_callers_consistency_token_reaches_the_read(tree_stub, graph_stub, graph_service):
    token, project = await bound_project(tree_stub, graph_stub, "Listed")
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=project_scope([project]),
            phase="daily",
            review_generated_at="2026-10-03T01:00:00Z",
            events=[tree_pb2.EventInput(id="d2", kind=tree_pb2.DECISION, title="Fresh plan")],
        )
    )

    def search(lsn: str, **more: str) -> dict[str, object]:
        return {"query": "fresh plan", "options": {"min_consistency": {"lsn": lsn, **more}}}

    async with in_memory(graph_service.port, token) as client:
        fresh = await client.call_tool("story_graph_search", search(written.consistency.lsn))
        ahead = await client.call_tool("story_graph_search", search("FFFFFF/0"))
        too_far = await client.call_tool("story_graph_search", search("FFFFFFFF/FFFFFFFF"))
        session = await client.call_tool("story_graph_search", search("0/1", session_id="s"))
    assert not fresh.is_error, fresh.content
    assert [h["ref"]["id"] for h in fresh.structured_content["hits"]] == ["d2"]
    assert tool_error(ahead)["code"] == "consistency_timeout"  # the replica never gets there
    refused = tool_error(too_far)
    assert refused["code"] == "invalid_argument"
    assert "min_consistency" in json.dumps(refused)
    assert tool_error(session)["code"] == "invalid_argument"  # a session is never named


async def test_arguments_that_break_the_schema_are_refused_before_any_call(graph_service):
    async with in_memory(graph_service.port, "unused") as client:
        result = await client.call_tool("story_graph_search", {"query": "x", "page_size": 99})
    error = tool_error(result)
    assert error["code"] == "invalid_argument"
    assert error["fields"][0]["field"] == "page_size"


async def test_graph_errors_become_tool_errors_with_the_machine_code(
    tree_stub, graph_stub, graph_service
):
    token = await project_less_binding(tree_stub, graph_stub)
    async with in_memory(graph_service.port, token) as client:
        missing_scope = await client.call_tool("story_graph_search", {"query": "x"})
        wider_scope = await client.call_tool(
            "story_graph_read_source", {"source_reference_id": "s1", "scope": {"global": True}}
        )
        as_of = await client.call_tool(
            "story_graph_get_context",
            {
                "object_ref": {"type": "event", "id": "e"},
                "as_of": "2026-01-01T00:00:00Z",
            },
        )
    assert tool_error(missing_scope)["code"] == "scope_required"
    assert "scope" in tool_error(missing_scope)["next_step"]
    assert tool_error(wider_scope)["code"] == "scope_mismatch"
    assert tool_error(as_of)["code"] == "as_of_unsupported"


async def test_a_search_past_its_scan_budget_is_a_tool_error_with_a_next_step(
    tree_stub, graph_stub, graph_service, monkeypatch
):
    token, project = await bound_project(tree_stub, graph_stub, "Budget")
    written = await record(tree_stub, project, events=entries())
    await graph_stub.Search(
        graph_pb2.SearchRequest(query="x", scope=project_scope([project]), options=options(written))
    )
    monkeypatch.setattr(search, "SCAN_BUDGET_S", 0.05)
    slow_index_scans(monkeypatch)
    async with in_memory(graph_service.port, token) as client:
        result = await client.call_tool("story_graph_search", {"query": "zq"})
    error = tool_error(result)
    assert error["code"] == "search_budget_exceeded"
    assert "fewer than three characters" in error["message"]
    assert "three characters or more" in error["next_step"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_requires_a_valid_binding_and_serves_the_same_results(
    tree_stub, graph_stub, graph_service, mode
):
    token, _ = await bound_project(tree_stub, graph_stub, "Adopt streaming replicas")
    async with http_gateway(graph_service.port) as url:
        async with http_client(url, token, mode) as client:
            listed = await client.list_tools()
            result = await client.call_tool("story_graph_search", {"query": "streaming"})
        assert [t.name for t in listed.tools] == TOOL_NAMES
        assert [h["ref"]["id"] for h in result.structured_content["hits"]] == ["d1"]
        async with httpx2.AsyncClient() as raw:
            anonymous = await raw.post(
                url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            )
            wrong = await raw.post(
                url,
                headers={"Authorization": "Bearer mtb_wrong"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
            health = await raw.get(url.removesuffix("/mcp") + "/healthz")
    assert anonymous.status_code == 401
    assert wrong.status_code == 401
    assert health.status_code == 200


async def test_stdio_serves_the_same_tools(tree_stub, graph_stub, graph_service):
    token, _ = await bound_project(tree_stub, graph_stub, "Keep stdio working")
    async with stdio_gateway(graph_service.port, token) as client:
        listed = await client.list_tools()
        result = await client.call_tool("story_graph_search", {"query": "stdio"})
    assert [t.name for t in listed.tools] == TOOL_NAMES
    assert [h["ref"]["id"] for h in result.structured_content["hits"]] == ["d1"]


async def test_a_binding_reads_only_its_own_project(tree_stub, graph_stub, graph_service):
    token, project = await bound_project(tree_stub, graph_stub, "Confined to one project")
    other = unique("other")
    async with in_memory(graph_service.port, token) as client:
        own = await client.call_tool(
            "story_graph_search", {"query": "confined", "scope": {"projects": [project]}}
        )
        foreign = await client.call_tool(
            "story_graph_search", {"query": "confined", "scope": {"projects": [other]}}
        )
        everything = await client.call_tool(
            "story_graph_search", {"query": "confined", "scope": {"global": True}}
        )
        missing = await client.call_tool(
            "story_graph_read_source", {"source_reference_id": unique("nope")}
        )
    assert [h["ref"]["id"] for h in own.structured_content["hits"]] == ["d1"]
    assert tool_error(foreign)["code"] == "scope_mismatch"
    assert tool_error(everything)["code"] == "scope_mismatch"
    assert tool_error(missing)["code"] == "not_found"
