"""The transitions between branch states (T13) without a database: which moves are allowed,
that only a purge reaches purged and nothing leaves it, and what a refusal says."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from tree_service.domain import BranchState
from tree_service.errors import PreconditionFailed
from tree_service.lifecycle.rules import ALLOWED, Branch, Transition, expect_transition

S = BranchState
# Written out rather than read from ALLOWED, so that a change to the table fails here: a
# concluded branch is reopened before it is paused, an archived one is restored to active,
# archiving is possible from every live state, and a purged branch never moves again.
MOVES = {
    (S.ACTIVE, S.PAUSED),
    (S.ACTIVE, S.CONCLUDED),
    (S.ACTIVE, S.ARCHIVED),
    (S.PAUSED, S.ACTIVE),
    (S.PAUSED, S.CONCLUDED),
    (S.PAUSED, S.ARCHIVED),
    (S.CONCLUDED, S.ACTIVE),
    (S.CONCLUDED, S.ARCHIVED),
    (S.ARCHIVED, S.ACTIVE),
}
PAIRS = list(itertools.product(BranchState, repeat=2))
NOW = datetime(2026, 12, 4, tzinfo=UTC)


@pytest.mark.parametrize(("current", "wanted"), [p for p in PAIRS if p in MOVES])
def test_an_allowed_move_passes(current, wanted):
    expect_transition("b", current, wanted)


@pytest.mark.parametrize(("current", "wanted"), [p for p in PAIRS if p not in MOVES])
def test_any_other_move_is_refused_naming_the_branch_and_its_state(current, wanted):
    with pytest.raises(PreconditionFailed) as caught:
        expect_transition("branch-9", current, wanted)
    assert caught.value.metadata == {"branch_id": "branch-9", "state": current.value}
    assert caught.value.message.startswith(f"branch branch-9 is {current.value}:")


def test_the_table_holds_every_state_and_allows_exactly_the_moves_written_here():
    assert set(ALLOWED) == set(BranchState)
    assert {(a, b) for a, targets in ALLOWED.items() for b in targets} == MOVES


@pytest.mark.parametrize("current", list(BranchState))
def test_purged_is_reached_only_by_a_purge(current):
    with pytest.raises(PreconditionFailed, match="only Purge, after PreviewPurge, purges"):
        expect_transition("b", current, S.PURGED)


@pytest.mark.parametrize("wanted", [s for s in BranchState if s is not S.PURGED])
def test_a_purged_branch_cannot_move_again(wanted):
    with pytest.raises(PreconditionFailed, match="it may move to no other state, not to"):
        expect_transition("b", S.PURGED, wanted)


def test_a_refusal_lists_the_states_the_branch_may_move_to():
    with pytest.raises(PreconditionFailed) as caught:
        expect_transition("b", S.CONCLUDED, S.PAUSED)
    assert caught.value.message == (
        "branch b is concluded: it may move to active, archived, not to paused"
    )
    # Staying in the same state is not a move.
    with pytest.raises(PreconditionFailed, match="to archived, concluded, paused, not to active"):
        expect_transition("b", S.ACTIVE, S.ACTIVE)


def transition(to_state: BranchState, revision: int, summary: str | None = None) -> Transition:
    return Transition(
        revision=revision,
        from_state=S.ACTIVE,
        to_state=to_state,
        changed_by="u",
        reason="r",
        changed_at=NOW + timedelta(minutes=revision),
        summary=summary,
    )


def test_a_branch_never_concluded_has_no_last_conclusion():
    assert Branch("n", "t", S.ACTIVE, 1).last_conclusion is None
    moved = (transition(S.PAUSED, 2), transition(S.ARCHIVED, 3))
    assert Branch("n", "t", S.ARCHIVED, 3, moved).last_conclusion is None


def test_the_last_conclusion_is_the_latest_even_after_the_branch_was_reopened():
    first, second = transition(S.CONCLUDED, 2, "first"), transition(S.CONCLUDED, 4, "second")
    moves = (first, transition(S.ACTIVE, 3), second, transition(S.ACTIVE, 5))
    assert Branch("n", "t", S.ACTIVE, 5, moves).last_conclusion == second
    assert Branch("n", "t", S.CONCLUDED, 2, moves[:1]).last_conclusion == first
