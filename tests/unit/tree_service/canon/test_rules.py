"""Canonicalization invitations (T10) without a database: only a pending invitation is decided,
once, and accepting one canonicalizes at least the node it invites to."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from tree_service.canon.rules import (
    Invitation,
    InvitationState,
    expect_invited_node_selected,
    expect_pending,
)
from tree_service.errors import PreconditionFailed

NOW = datetime(2026, 12, 4, tzinfo=UTC)
PENDING = Invitation(
    "inv-1", "t", "node-1", "worth keeping", "assistant", InvitationState.PENDING, NOW
)


def test_a_pending_invitation_may_be_decided():
    expect_pending(PENDING)


@pytest.mark.parametrize("state", [InvitationState.ACCEPTED, InvitationState.DECLINED])
def test_a_decided_invitation_is_refused_with_its_state(state):
    decided = dataclasses.replace(PENDING, state=state, decided_by="u", decided_at=NOW)
    with pytest.raises(PreconditionFailed) as caught:
        expect_pending(decided)
    assert caught.value.metadata == {"invitation_id": "inv-1", "state": state.value}
    assert caught.value.message == f"invitation inv-1 was {state.value} already"


@pytest.mark.parametrize("selected", [("node-1",), ("root", "node-1"), ("root", "node-1", "leaf")])
def test_accepting_passes_when_the_canonicalization_includes_the_invited_node(selected):
    expect_invited_node_selected(PENDING, selected)


@pytest.mark.parametrize("selected", [(), ("root", "leaf"), ("node-10",), ("NODE-1",)])
def test_accepting_is_refused_when_the_invited_node_is_left_out(selected):
    with pytest.raises(PreconditionFailed) as caught:
        expect_invited_node_selected(PENDING, selected)
    assert caught.value.metadata == {"invitation_id": "inv-1", "node_id": "node-1"}
    assert "for node node-1, which this canonicalization does not include" in (caught.value.message)
