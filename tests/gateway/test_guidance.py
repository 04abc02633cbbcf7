"""What a model is told when a call fails: every code has a next step that fits the situation
(never a loop between scope_required and scope_mismatch), and arguments the schema lets
through but that cannot work are refused by name before any call."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from gateway import results, translate
from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import RpcFailure
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import free_port, unique
from tests.gateway.harness import in_memory, tool_error
from tests.gateway.test_tools import bound_project, project_less_binding
from tests.graph_service.story import options, record


async def test_a_session_without_a_project_is_said_plainly_and_never_sent_in_a_loop(
    tree_stub, graph_stub, graph_service
):
    token = await project_less_binding(tree_stub, graph_stub)
    async with in_memory(graph_service.port, token) as client:
        default = tool_error(await client.call_tool("story_graph_search", {"query": "x"}))
        explicit = tool_error(
            await client.call_tool(
                "story_graph_search", {"query": "x", "scope": {"projects": [unique("p")]}}
            )
        )
    assert default["code"] == "scope_required"
    assert "no current project" in default["next_step"]
    # A session's project is fixed when it is created: the advice must be one a user can take.
    assert "cannot be changed" in default["next_step"]
    assert "bound to a session in that project" in default["next_step"]
    assert "choose a project for this session" not in default["next_step"]
    assert '"projects"' not in default["next_step"]  # not an invitation to pass a scope
    assert explicit["code"] == "scope_mismatch"
    assert "no current project" in explicit["next_step"]
    assert "do not try other scopes" in explicit["next_step"]
    assert "bound to a session in that project" in explicit["next_step"]
    assert "belongs to another scope" not in explicit["next_step"]


async def test_a_foreign_scope_or_object_gets_a_next_step_for_that_situation(
    tree_stub, graph_stub, graph_service
):
    token, project = await bound_project(tree_stub, graph_stub, "Situations")
    elsewhere, event_id = unique("elsewhere"), unique("ev")
    written = await record(
        tree_stub,
        elsewhere,
        events=[tree_pb2.EventInput(id=event_id, kind=tree_pb2.DECISION, title="Far")],
    )
    await graph_stub.Search(  # wait until the replica has the result
        graph_pb2.SearchRequest(
            query="x", scope=project_scope([elsewhere]), options=options(written)
        )
    )
    async with in_memory(graph_service.port, token) as client:
        foreign = tool_error(
            await client.call_tool(
                "story_graph_search", {"query": "x", "scope": {"projects": [elsewhere]}}
            )
        )
        far = tool_error(
            await client.call_tool(
                "story_graph_get_context", {"object_ref": {"type": "event", "id": event_id}}
            )
        )
    assert foreign["code"] == "scope_mismatch"
    assert project in foreign["next_step"] and "without scope" in foreign["next_step"]
    assert far["code"] == "scope_mismatch"
    assert far["next_step"].startswith("That object exists, but not in the scope that was read")


# The codes the gateway itself derives from a bare gRPC status (graph_service sends
# not_implemented, out_of_range and failed_precondition only with a reason of its own).
@pytest.mark.parametrize(
    "code",
    ["unavailable", "deadline_exceeded", "internal", "permission_denied", "resource_exhausted"],
)
def test_every_code_the_gateway_makes_from_a_status_has_a_next_step(code):
    assert translate.ToolError(code, "m").as_json()["error"]["next_step"]


async def test_an_unreachable_story_graph_is_a_tool_error_with_a_next_step():
    async with in_memory(free_port(), "mtb_whatever") as client:
        error = tool_error(await client.call_tool("story_graph_search", {"query": "x"}))
    assert error["code"] == "unavailable"
    assert "retry" in error["next_step"]


async def test_a_lone_surrogate_is_refused_naming_the_field(graph_service):
    async with in_memory(graph_service.port, "mtb_unused") as client:
        error = tool_error(
            await client.call_tool(
                "story_graph_get_context", {"object_ref": {"type": "event", "id": "a\ud800"}}
            )
        )
    assert error["code"] == "invalid_argument"
    assert error["fields"][0]["field"] == "object_ref.id"
    assert "surrogate" in error["message"] and "whole numbers" not in error["message"]


async def test_source_version_without_read_kind_version_names_the_schema_value(graph_service):
    async with in_memory(graph_service.port, "mtb_unused") as client:
        error = tool_error(
            await client.call_tool(
                "story_graph_read_source", {"source_reference_id": "s", "source_version": "1"}
            )
        )
    assert error["fields"][0]["field"] == "source_version"
    assert 'read_kind "version"' in error["message"] and "VERSION" not in error["message"]


async def test_a_source_version_that_is_not_a_whole_number_is_refused_by_name(graph_service):
    async with in_memory(graph_service.port, "mtb_unused") as client:
        error = tool_error(
            await client.call_tool(
                "story_graph_read_source",
                {"source_reference_id": "s", "read_kind": "version", "source_version": "v2"},
            )
        )
    assert error["code"] == "invalid_argument"
    assert error["fields"][0]["field"] == "source_version"


async def test_read_source_refuses_a_cursor_with_an_offset(graph_service):
    async with in_memory(graph_service.port, "mtb_unused") as client:
        error = tool_error(
            await client.call_tool(
                "story_graph_read_source",
                {"source_reference_id": "s", "cursor": "abc", "offset": 0},
            )
        )
    assert error["code"] == "invalid_argument"
    assert error["fields"][0]["field"] == "offset"


def test_an_enum_value_the_gateway_does_not_know_is_rendered_not_a_crash():
    # What a newer graph_service may send: values this gateway's generated code lacks.
    response = graph_pb2.ReadSourceResponse(available_read_kinds=[graph_pb2.SNAPSHOT])
    unknown: Any = 7
    response.available_read_kinds.append(unknown)
    response.availability = 9  # type: ignore[assignment]
    data = results.message_json(response)
    assert data["availability"] == "unknown(9)"
    assert data["available_read_kinds"] == ["snapshot", "unknown(7)"]


def test_grpc_status_codes_map_to_codes_with_next_steps():
    error = translate.tool_error_from_rpc(RpcFailure(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy"))
    assert error.as_json()["error"]["next_step"]
