"""Fuzzed switches and sessions — SetAppEnabled, SetCapability, SetSessionStoryGraph,
SaveSessionContext and CreateBinding — are answered OK or with a documented, named refusal that
writes nothing (see `fuzzing`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mirrortree.v1 import tree_pb2
from tests.tree_service.fuzzing import (
    FUZZ,
    JSONISH,
    KEYS,
    Code,
    answered,
    ids,
    ints,
    scopes,
    strings,
    unary,
)


@FUZZ
@given(data=st.data())
async def test_settings_switches(tree_stub, db, server_errors, data):
    # Other modules need the app and capability as they left them: a write that this
    # property lets through sets the values they already have.
    current = await tree_stub.GetSettings(tree_pb2.GetSettingsRequest())
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ABORTED, Code.ALREADY_EXISTS}
    revision = st.one_of(st.integers(-1, 3), ints())
    app = tree_pb2.SetAppEnabledRequest(
        idempotency_key=data.draw(KEYS),
        enabled=current.heartbeat_enabled,
        expected_revision=data.draw(st.one_of(st.just(current.app_revision), revision)),
    )
    await answered(db, server_errors, unary(tree_stub.SetAppEnabled, app), allowed, writes=True)
    capability = tree_pb2.SetCapabilityRequest(
        idempotency_key=data.draw(KEYS),
        capability_id=data.draw(st.one_of(st.just("story-graph"), strings())),
        enabled=current.story_graph.enabled,
        assignments=data.draw(
            st.one_of(
                st.just(list(current.story_graph.assignments)),
                st.lists(st.one_of(st.just("Model"), strings()), max_size=2),
            )
        ),
        expected_revision=data.draw(st.one_of(st.just(current.story_graph.revision), revision)),
    )
    if list(capability.assignments) != list(current.story_graph.assignments):
        capability.expected_revision = data.draw(revision.filter(lambda r: r < 1 or r > 10**6))
    await answered(
        db, server_errors, unary(tree_stub.SetCapability, capability), allowed, writes=True
    )


@FUZZ
@given(data=st.data())
async def test_session_context_and_bindings(tree_stub, conversation, db, server_errors, data):
    # Sessions are trees; the fuzz only writes to the conversation's own session.
    session = data.draw(ids(conversation))
    switch = tree_pb2.SetSessionStoryGraphRequest(
        idempotency_key=data.draw(KEYS), session_id=session, enabled=data.draw(st.booleans())
    )
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ALREADY_EXISTS}
    await answered(
        db, server_errors, unary(tree_stub.SetSessionStoryGraph, switch), allowed, writes=True
    )
    save = tree_pb2.SaveSessionContextRequest(
        idempotency_key=data.draw(KEYS),
        session_id=session,
        context_state=data.draw(JSONISH),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
    )
    await answered(
        db,
        server_errors,
        unary(tree_stub.SaveSessionContext, save),
        {*allowed, Code.ABORTED},
        writes=True,
    )
    binding = tree_pb2.CreateBindingRequest(
        idempotency_key=data.draw(KEYS),
        session_id=session,
        runtime=data.draw(st.one_of(st.sampled_from(["Model", "OpenCode"]), strings())),
        allowed_scopes=data.draw(st.lists(scopes(), max_size=2)),
    )
    await answered(db, server_errors, unary(tree_stub.CreateBinding, binding), allowed, writes=True)
