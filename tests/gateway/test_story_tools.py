"""The acceptance story as an agent runtime sees it over MCP: search → get_context →
read_source, the same on the in-memory transport (both protocol eras) and Streamable HTTP."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from gateway import tools
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.gateway.harness import http_client, http_gateway, in_memory, tool_error
from tests.graph_service.story import LoadedStory, load_acceptance_story


async def story_binding(tree_service, tree_stub, graph_stub) -> tuple[LoadedStory, str]:
    """The story in a fresh project, and a runtime binding of a session in that project."""
    story = await load_acceptance_story(f"127.0.0.1:{tree_service.port}")
    session = (await create_tree(tree_stub, project_id=story.project)).tree
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="OpenCode"
        )
    )
    await graph_stub.Search(  # the replica has the story and the binding
        graph_pb2.SearchRequest(
            query="x",
            scope=story.scope,
            options=graph_pb2.ReadOptions(min_consistency=binding.consistency),
        )
    )
    return story, binding.token


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A successful call's JSON text, equal to its structured content and valid against the
    tool's hand-written output schema."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    data: dict[str, Any] = json.loads(result.content[0].text)
    assert data == result.structured_content
    schema = tools.TOOLS_BY_NAME[tool].output_schema
    assert schema is not None
    jsonschema.validate(data, schema)
    return data


def collection(data: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in data["collections"] if c["name"] == name)
    return found


async def walk_the_story(client: Any) -> None:
    hits = await call(client, "story_graph_search", {"query": "storage engine", "page_size": 5})
    entity = next(h["ref"] for h in hits["hits"] if h["ref"]["type"] == "entity")
    assert entity["id"] == "ent-storage"

    current = await call(client, "story_graph_get_context", {"object_ref": entity})
    events = {i["ref"]["id"]: i for i in collection(current, "events")["items"]}
    assert events["ev-decide-a"]["time"]["validity"]["state"] == "superseded"
    assert events["ev-revise-b"]["time"]["validity"]["state"] == "current"
    projection = json.loads(collection(current, "current")["items"][0]["content"]["text"])
    assert projection["work_state"]["completion"]["state"] == "unknown"

    timeline = await call(
        client,
        "story_graph_get_context",
        {
            "object_ref": {"type": "event", "id": "ev-revise-b"},
            "mode": "timeline",
            "page_size": 2,
        },
    )
    page = collection(timeline, "timeline")
    assert page["page"]["has_more"] is True
    rest = await call(
        client,
        "story_graph_get_context",
        {
            "object_ref": {"type": "event", "id": "ev-revise-b"},
            "mode": "timeline",
            "page_size": 2,
            "cursor": page["page"]["next_cursor"],
        },
    )
    assert [c["name"] for c in rest["collections"]] == ["timeline"]

    source = await call(client, "story_graph_read_source", {"source_reference_id": "src-notes-v2"})
    assert "40% lock waits" in source["text"]
    gone = await client.call_tool(
        "story_graph_read_source",
        {"source_reference_id": "src-notes-v1", "read_kind": "version", "source_version": "1"},
    )
    assert tool_error(gone)["code"] == "historical_version_unavailable"
    missing = await client.call_tool(
        "story_graph_get_context", {"object_ref": {"type": "event", "id": "no-such"}}
    )
    assert tool_error(missing)["code"] == "not_found"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_acceptance_story_in_memory(tree_service, tree_stub, graph_stub, graph_service, mode):
    _, token = await story_binding(tree_service, tree_stub, graph_stub)
    async with in_memory(graph_service.port, token, mode) as client:
        await walk_the_story(client)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_acceptance_story_over_http(tree_service, tree_stub, graph_stub, graph_service, mode):
    _, token = await story_binding(tree_service, tree_stub, graph_stub)
    async with http_gateway(graph_service.port) as url, http_client(url, token, mode) as client:
        await walk_the_story(client)


async def test_every_read_kind_a_source_lists_is_one_the_tool_accepts(
    tree_service, tree_stub, graph_stub, graph_service
):
    _, token = await story_binding(tree_service, tree_stub, graph_stub)
    accepted = tools.TOOLS_BY_NAME["story_graph_read_source"].input_schema["properties"][
        "read_kind"
    ]["enum"]
    async with in_memory(graph_service.port, token, "auto") as client:
        source = await call(
            client, "story_graph_read_source", {"source_reference_id": "src-notes-v2"}
        )
        assert "current" in source["available_read_kinds"]
        assert set(source["available_read_kinds"]) <= set(accepted)
        current = await call(
            client,
            "story_graph_read_source",
            {"source_reference_id": "src-notes-v2", "read_kind": "current"},
        )
    assert current["content_kind"] == "whole_source"
