"""W4 requests and responses: the switches that gate the story-graph tools — the supervisor
app, the `story-graph` capability with its runtime assignments, and each session's own switch
in its context state (stored by tree_service.access.store) — and the runtime bindings (M4)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from mirrortree.v1 import tree_pb2
from mirrortree.validation import shown
from tree_service import convert
from tree_service.convert import Checker
from tree_service.domain import (
    CAPABILITY_ID,
    SESSION_SWITCH,
    AppSettings,
    IssuedBinding,
    SessionContext,
)

KNOWN_RUNTIMES = ("Model", "OpenCode", "Continue", "DeepSeek Harness")
MAX_CONTEXT_STATE = 1_000_000  # characters of JSON
_UNPARSED = object()


def _session_uuid(check: Checker, value: str) -> uuid.UUID | None:
    check.identifier("session_id", value)
    try:
        return uuid.UUID(value)
    except ValueError:
        check.fail("session_id", f"{shown(value)} is not a session id (a UUID)")
        return None


# ---- validation ------------------------------------------------------------------------


def app_request(request: tree_pb2.SetAppEnabledRequest) -> tuple[bool, int]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the revision GetSettings returned")
    check.done()
    return request.enabled, request.expected_revision


def capability_request(request: tree_pb2.SetCapabilityRequest) -> tuple[bool, list[str], int]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    if request.capability_id != CAPABILITY_ID:
        check.fail("capability_id", f"must be {CAPABILITY_ID!r}, the only gated capability")
    for i, runtime in enumerate(request.assignments):
        if runtime not in KNOWN_RUNTIMES:
            check.fail(f"assignments[{i}]", f"must be one of {', '.join(KNOWN_RUNTIMES)}")
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the revision GetSettings returned")
    check.done()
    return request.enabled, sorted(set(request.assignments)), request.expected_revision


def switch_request(request: tree_pb2.SetSessionStoryGraphRequest) -> tuple[uuid.UUID, bool]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    session = _session_uuid(check, request.session_id)
    check.done()
    assert session is not None
    return session, request.enabled


def save_request(request: tree_pb2.SaveSessionContextRequest) -> tuple[uuid.UUID, str, int]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    session = _session_uuid(check, request.session_id)
    # A sentinel, not None: the JSON text "null" parses to None and must be refused too.
    state: Any = _UNPARSED
    try:
        state = convert.parse_storable_json(request.context_state or "{}")
    except json.JSONDecodeError as exc:
        check.fail("context_state", f"is not JSON: {exc}")
    except ValueError as exc:  # convert.NotStorable, or e.g. an integer of too many digits
        check.fail("context_state", f"cannot be stored: {exc}")
    if state is not _UNPARSED and not isinstance(state, dict):
        check.fail("context_state", "must be a JSON object")
    elif isinstance(state, dict) and not isinstance(state.get(SESSION_SWITCH, True), bool):
        check.fail(f"context_state.{SESSION_SWITCH}", "must be true or false when present")
    if len(request.context_state) > MAX_CONTEXT_STATE:
        check.fail("context_state", f"is longer than {MAX_CONTEXT_STATE:,} characters")
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the revision the state was read at")
    check.done()
    assert session is not None
    return session, json.dumps(state), request.expected_revision


def settings_to_proto(settings: AppSettings) -> tree_pb2.Settings:
    return tree_pb2.Settings(
        heartbeat_enabled=settings.heartbeat_enabled,
        app_revision=settings.app_revision,
        story_graph=tree_pb2.Capability(
            id=CAPABILITY_ID,
            enabled=settings.story_graph_enabled,
            assignments=list(settings.assignments),
            revision=settings.capability_revision,
        ),
    )


def context_to_proto(context: SessionContext) -> tree_pb2.SessionContext:
    return tree_pb2.SessionContext(
        session_id=context.session_id,
        story_graph_enabled=context.story_graph_enabled,
        context_state=context.context_state,
        revision=context.revision,
    )


def binding_request(request: tree_pb2.CreateBindingRequest) -> tuple[str, str, list[str]]:
    """(session, runtime, scope keys the binding may also name explicitly)."""
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("session_id", request.session_id)
    if request.runtime not in KNOWN_RUNTIMES:
        check.fail("runtime", f"must be one of {', '.join(KNOWN_RUNTIMES)}")
    allowed = [
        check.scope(f"allowed_scopes[{i}]", scope, required=True)
        for i, scope in enumerate(request.allowed_scopes)
    ]
    check.done()
    return (
        request.session_id,
        request.runtime,
        sorted({scope.key for scope in allowed if scope is not None}),
    )


def binding_to_proto(binding: IssuedBinding) -> tree_pb2.CreateBindingResponse:
    return tree_pb2.CreateBindingResponse(
        binding_id=binding.binding_id,
        token=binding.token,
        session_id=binding.session_id,
        runtime=binding.runtime,
        project_id=binding.project_id or "",
    )
