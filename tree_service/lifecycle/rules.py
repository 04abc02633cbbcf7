"""Branch states and the transitions between them (T13), and the answer lifecycle (T22)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tree_service.domain import Node
from tree_service.errors import PreconditionFailed


class AnswerLifecycle(StrEnum):
    CANDIDATE = "candidate"
    ADOPTED = "adopted"
    IN_EXPLORATION = "in_exploration"
    CANONICALIZED = "canonicalized"


class BranchState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    CONCLUDED = "concluded"
    ARCHIVED = "archived"
    PURGED = "purged"  # reached only by a purge (T16), and final


# From → the states it may move to: a concluded branch is reopened (to active) before it is
# paused, and an archived one is restored to active; archiving is possible from everywhere.
ALLOWED = {
    BranchState.ACTIVE: {BranchState.PAUSED, BranchState.CONCLUDED, BranchState.ARCHIVED},
    BranchState.PAUSED: {BranchState.ACTIVE, BranchState.CONCLUDED, BranchState.ARCHIVED},
    BranchState.CONCLUDED: {BranchState.ACTIVE, BranchState.ARCHIVED},
    BranchState.ARCHIVED: {BranchState.ACTIVE},
    BranchState.PURGED: set(),
}


def expect_transition(branch_id: str, current: BranchState, wanted: BranchState) -> None:
    if wanted is BranchState.PURGED:
        raise PreconditionFailed(
            f"branch {branch_id} is {current.value}: only Purge, after PreviewPurge, purges",
            {"branch_id": branch_id, "state": current.value},
        )
    if wanted not in ALLOWED[current]:
        allowed = ", ".join(sorted(s.value for s in ALLOWED[current])) or "no other state"
        raise PreconditionFailed(
            f"branch {branch_id} is {current.value}: it may move to {allowed}, "
            f"not to {wanted.value}",
            {"branch_id": branch_id, "state": current.value},
        )


@dataclass(frozen=True)
class StateChange:
    node_id: str
    state: BranchState
    expected_revision: int
    changed_by: str
    reason: str
    summary: str | None  # conclusions only


@dataclass(frozen=True)
class Transition:
    revision: int
    from_state: BranchState
    to_state: BranchState
    changed_by: str
    reason: str
    changed_at: datetime
    summary: str | None = None
    open_question_ids: tuple[str, ...] = ()
    candidate_answer_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Branch:
    node_id: str
    tree_id: str
    state: BranchState
    revision: int
    transitions: tuple[Transition, ...] = ()

    @property
    def last_conclusion(self) -> Transition | None:
        concluded = [t for t in self.transitions if t.to_state is BranchState.CONCLUDED]
        return concluded[-1] if concluded else None


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


class MergeSourceState(StrEnum):
    AVAILABLE = "available"
    ARCHIVED = "archived"
    PURGED = "purged"


@dataclass(frozen=True)
class MergeRequest:
    tree_id: str
    parent_id: str | None
    text: str
    source_node_ids: tuple[str, ...]
    merged_by: str


@dataclass(frozen=True)
class MergeReference:
    question_id: str
    position: int
    source_node_id: str
    source_tree_id: str
    source_state: MergeSourceState
    merged_by: str
    created_at: datetime


@dataclass(frozen=True)
class TransplantRequest:
    node_id: str
    title: str
    transplanted_by: str


@dataclass(frozen=True)
class TransplantOrigin:
    tree_id: str
    source_tree_id: str
    source_node_id: str
    source_tree_revision: int
    ancestor_path: tuple[Node, ...]
    copies: dict[str, str]
    transplanted_by: str
    transplanted_at: datetime
