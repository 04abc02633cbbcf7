"""M3/W4: the switches that gate the story-graph tools — each one off hides the tools and
refuses direct calls; a flip during a call withholds its result; list_changed is published;
a stale autosave cannot undo an explicit session switch; bindings read only what they were
granted. The switches are global rows, so every test restores what it changed."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import grpc
import pytest
from mcp.shared.subscriptions import ToolsListChanged

from mirrortree.protoscope import global_scope, project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import create_tree, switch_app, unique
from tests.gateway.harness import http_client, http_gateway, in_memory, stdio_gateway, tool_error
from tests.gateway.test_cancellation import block_replica_reads
from tests.gateway.test_tools import TOOL_NAMES, bound_project


@contextlib.asynccontextmanager
async def capability(tree_stub, *, enabled: bool, assignments: list[str]) -> AsyncIterator[None]:
    """The story-graph capability set as given, restored afterwards (even when the block
    changed it again)."""
    before = await tree_stub.GetSettings(tree_pb2.GetSettingsRequest())
    await tree_stub.SetCapability(
        tree_pb2.SetCapabilityRequest(
            idempotency_key=unique("k"),
            capability_id="story-graph",
            enabled=enabled,
            assignments=assignments,
            expected_revision=before.story_graph.revision,
        )
    )
    try:
        yield
    finally:
        now = await tree_stub.GetSettings(tree_pb2.GetSettingsRequest())
        await tree_stub.SetCapability(
            tree_pb2.SetCapabilityRequest(
                idempotency_key=unique("k"),
                capability_id="story-graph",
                enabled=before.story_graph.enabled,
                assignments=list(before.story_graph.assignments),
                expected_revision=now.story_graph.revision,
            )
        )


@contextlib.asynccontextmanager
async def app_off(tree_service) -> AsyncIterator[None]:
    await switch_app(tree_service.port, False)
    try:
        yield
    finally:
        await switch_app(tree_service.port, True)


async def session_off(tree_stub, session_id: str) -> tree_pb2.SessionContext:
    context: tree_pb2.SessionContext = await tree_stub.SetSessionStoryGraph(
        tree_pb2.SetSessionStoryGraphRequest(
            idempotency_key=unique("k"), session_id=session_id, enabled=False
        )
    )
    return context


async def listed_and_called(
    graph_port: int, token: str, mode: str = "auto"
) -> tuple[list[str], Any]:
    async with in_memory(graph_port, token, mode) as client:
        listed = await client.list_tools()
        called = await client.call_tool("story_graph_search", {"query": "gated"})
    return [t.name for t in listed.tools], called


async def binding_session(graph_stub, token: str) -> str:
    response = await graph_stub.ResolveBinding(graph_pb2.ResolveBindingRequest(token=token))
    return str(response.session_id)


@pytest.mark.parametrize(
    "case",
    [
        f"{switch}/{mode}"
        for switch in ("app", "capability", "runtime", "session")
        for mode in ("auto", "legacy")
    ],
)
async def test_each_switch_off_hides_the_tools_and_refuses_calls(
    tree_service, tree_stub, graph_stub, graph_service, case
):
    switch, mode = case.split("/")
    token, _ = await bound_project(tree_stub, graph_stub, "Gated decision")
    names, called = await listed_and_called(graph_service.port, token, mode)
    assert names == TOOL_NAMES and not called.is_error
    async with contextlib.AsyncExitStack() as stack:
        if switch == "app":
            await stack.enter_async_context(app_off(tree_service))
        elif switch == "capability":
            await stack.enter_async_context(
                capability(tree_stub, enabled=False, assignments=["OpenCode"])
            )
        elif switch == "runtime":  # bound_project binds runtime OpenCode
            await stack.enter_async_context(
                capability(tree_stub, enabled=True, assignments=["Model", "Continue"])
            )
        else:
            await session_off(tree_stub, await binding_session(graph_stub, token))
        names, called = await listed_and_called(graph_service.port, token, mode)
        assert names == []
        error = tool_error(called)
        assert error["code"] == "disabled"
        assert error["next_step"]
        # Only the session's own switch is "for this session"; the others are wider.
        assert "for this session" not in error["next_step"] or switch == "session"
    if switch != "session":  # restored: the same binding works again
        names, called = await listed_and_called(graph_service.port, token, mode)
        assert names == TOOL_NAMES and not called.is_error


async def test_switching_the_app_off_and_on_keeps_each_sessions_choice(
    tree_service, tree_stub, graph_stub, graph_service
):
    off_token, _ = await bound_project(tree_stub, graph_stub, "Session stays off")
    on_token, _ = await bound_project(tree_stub, graph_stub, "Session stays on")
    await session_off(tree_stub, await binding_session(graph_stub, off_token))
    async with app_off(tree_service):
        assert (await listed_and_called(graph_service.port, on_token))[0] == []
    # Back on: the other session is unaffected by the first one's switch, and the first one's
    # own choice survived the app's off/on.
    assert (await listed_and_called(graph_service.port, on_token))[0] == TOOL_NAMES
    assert (await listed_and_called(graph_service.port, off_token))[0] == []


async def test_a_result_in_flight_when_the_app_is_switched_off_is_withheld(
    cluster, tree_service, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "In flight")
    async with in_memory(graph_service.port, token) as client:
        holder = await block_replica_reads(cluster)
        try:
            call = asyncio.create_task(client.call_tool("story_graph_search", {"query": "flight"}))
            await asyncio.sleep(0.5)  # the read is waiting on the replayed lock
            assert not call.done()
            await switch_app(tree_service.port, False)
        finally:
            await holder.execute("ROLLBACK")
            await holder.close()
        try:
            result = await call
        finally:
            await switch_app(tree_service.port, True)
    assert tool_error(result)["code"] == "disabled"


async def test_switching_off_publishes_tools_list_changed(
    tree_service, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Listen")
    async with in_memory(graph_service.port, token) as client:
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        async with (
            client.listen(tools_list_changed=True) as subscription,
            app_off(tree_service),
        ):
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert isinstance(event, ToolsListChanged)
            assert (await client.list_tools()).tools == []


async def test_http_discovery_follows_the_switch(
    tree_service, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Over HTTP")
    async with http_gateway(graph_service.port) as url, http_client(url, token) as client:
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        async with app_off(tree_service):
            assert (await client.list_tools()).tools == []
            called = await client.call_tool("story_graph_search", {"query": "http"})
            assert tool_error(called)["code"] == "disabled"


async def test_a_stale_autosave_cannot_switch_a_session_back_on(tree_stub, graph_stub):
    session = (await create_tree(tree_stub, project_id=unique("p"))).tree
    read = await tree_stub.GetSessionContext(
        tree_pb2.GetSessionContextRequest(session_id=session.id)
    )
    assert read.story_graph_enabled  # missing = on
    switched = await session_off(tree_stub, session.id)
    assert not switched.story_graph_enabled and switched.revision == read.revision + 1
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.SaveSessionContext(  # an autosave of the state read before the switch
            tree_pb2.SaveSessionContextRequest(
                idempotency_key=unique("k"),
                session_id=session.id,
                context_state='{"draft": "hello", "story_graph_enabled": true}',
                expected_revision=read.revision,
            )
        )
    assert caught.value.code() == grpc.StatusCode.ABORTED
    assert describe(caught.value).metadata["current_revision"] == str(switched.revision)
    after = await tree_stub.GetSessionContext(
        tree_pb2.GetSessionContextRequest(session_id=session.id)
    )
    assert not after.story_graph_enabled
    saved = await tree_stub.SaveSessionContext(  # a fresh autosave keeps the switch
        tree_pb2.SaveSessionContextRequest(
            idempotency_key=unique("k"),
            session_id=session.id,
            context_state='{"draft": "hello", "story_graph_enabled": false}',
            expected_revision=after.revision,
        )
    )
    assert not saved.story_graph_enabled and saved.revision == after.revision + 1


async def test_a_binding_reads_granted_scopes_only_when_asked(tree_stub, graph_stub, graph_service):
    own, granted, other = unique("own"), unique("granted"), unique("other")
    session = (await create_tree(tree_stub, project_id=own)).tree
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"),
            session_id=session.id,
            runtime="Continue",
            allowed_scopes=[project_scope([granted])],
        )
    )
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=project_scope([granted]),
            phase="daily",
            review_generated_at="2026-10-02T01:00:00Z",
            events=[tree_pb2.EventInput(id="g1", kind=tree_pb2.DECISION, title="Granted fact")],
        )
    )
    await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="x",
            scope=global_scope(),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    async with in_memory(graph_service.port, binding.token) as client:
        default = await client.call_tool("story_graph_search", {"query": "granted"})
        asked = await client.call_tool(
            "story_graph_search", {"query": "granted", "scope": {"projects": [granted]}}
        )
        foreign = await client.call_tool(
            "story_graph_search", {"query": "granted", "scope": {"projects": [other]}}
        )
        everything = await client.call_tool(
            "story_graph_search", {"query": "granted", "scope": {"global": True}}
        )
    assert default.structured_content["hits"] == []  # the default stays the own project
    assert [h["ref"]["id"] for h in asked.structured_content["hits"]] == ["g1"]
    assert tool_error(foreign)["code"] == "scope_mismatch"
    assert tool_error(everything)["code"] == "scope_mismatch"
    # The next step names what this connection may ask for.
    grant = json.dumps({"projects": [granted]})
    assert f"It was also granted {grant}" in tool_error(foreign)["next_step"]


async def test_stdio_discovery_follows_the_switch(
    tree_service, tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Over stdio")
    async with stdio_gateway(graph_service.port, token) as client:
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
        async with app_off(tree_service):
            assert (await client.list_tools()).tools == []
            called = await client.call_tool("story_graph_search", {"query": "stdio"})
            assert tool_error(called)["code"] == "disabled"
        assert [t.name for t in (await client.list_tools()).tools] == TOOL_NAMES
