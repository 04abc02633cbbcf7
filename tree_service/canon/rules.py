"""The rules of canonicalization invitations (T10) and canon candidate reviews (T22)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tree_service.domain import CANON_POLICIES, CandidateProposal, CanonCandidate, CanonicalScope
from tree_service.errors import InvalidInput, PreconditionFailed

MAX_CANDIDATES = 20
# A memory's tiers (seed 001 §6); long-term and core ones become confirmed preferences.
MEMORY_TIERS = ("short_term", "long_term", "core")
LONG_TERM_TIERS = ("long_term", "core")
# Kinds that are memories: they say what they are about, and may become long-term memory.
MEMORY_KINDS = ("memory_candidate", "world_memory")


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


def expect_candidates_allowed(
    scope: CanonicalScope, proposals: tuple[CandidateProposal, ...]
) -> None:
    """Each proposed candidate is of a kind the version's scope may produce (the
    canonical-scope table); nothing else is recorded."""
    allowed = CANON_POLICIES[scope].candidate_kinds
    for i, proposal in enumerate(proposals):
        if proposal.kind not in allowed:
            raise InvalidInput.one(
                f"candidates[{i}].kind",
                f"is not a candidate a {scope.value} canonicalization may produce "
                f"({', '.join(allowed)})",
            )


def becomes_long_term_memory(candidate: CanonCandidate) -> bool:
    """Whether accepting the candidate writes a confirmed long-term preference: a real
    memory of tier long_term or core, or a world's memory (its canon has no tiers)."""
    if candidate.kind == "world_memory":
        return True
    return candidate.kind == "memory_candidate" and candidate.detail in LONG_TERM_TIERS
