"""The transitions between branch states (T13), merges by reference (T15) and transplants
(T14); the states themselves are domain values (tree_service.domain.BranchState)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tree_service.domain import BranchState, Node
from tree_service.errors import PreconditionFailed

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
