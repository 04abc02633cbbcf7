"""The rules of canonicalization invitations (T10) and canon candidate reviews (T22)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tree_service.errors import PreconditionFailed


class InvitationState(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"


@dataclass(frozen=True)
class Invitation:
    id: str
    tree_id: str
    node_id: str
    reason: str
    proposed_by: str
    state: InvitationState
    created_at: datetime
    decided_by: str | None = None
    decision_reason: str = ""
    decided_at: datetime | None = None
    version_id: str | None = None


def expect_pending(invitation: Invitation) -> None:
    if invitation.state is not InvitationState.PENDING:
        raise PreconditionFailed(
            f"invitation {invitation.id} was {invitation.state.value} already",
            {"invitation_id": invitation.id, "state": invitation.state.value},
        )


def expect_invited_node_selected(invitation: Invitation, node_ids: tuple[str, ...]) -> None:
    """Accepting an invitation canonicalizes the node it invites to, at least."""
    if invitation.node_id not in node_ids:
        raise PreconditionFailed(
            f"invitation {invitation.id} is for node {invitation.node_id}, which this "
            "canonicalization does not include",
            {"invitation_id": invitation.id, "node_id": invitation.node_id},
        )


@dataclass(frozen=True)
class CandidateReview:
    candidate_id: str
    accept: bool
    expected_revision: int
    reviewed_by: str
    reason: str
