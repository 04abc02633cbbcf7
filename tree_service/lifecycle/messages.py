"""Lifecycle requests checked field by field, and branches and states as proto messages."""

from __future__ import annotations

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service.convert import BRANCH_STATE_FROM_PROTO, BRANCH_STATE_TO_PROTO, Checker
from tree_service.domain import BranchState
from tree_service.lifecycle.rules import Branch, StateChange, Transition

MAX_SUMMARY = 20_000
MAX_REASON = 2_000


def state_filter(check: Checker, values: list[int]) -> tuple[BranchState, ...]:
    found = []
    for i, value in enumerate(values):
        if value not in BRANCH_STATE_FROM_PROTO:
            check.fail(f"states[{i}]", "must be ACTIVE, PAUSED, CONCLUDED, ARCHIVED or PURGED")
        else:
            found.append(BRANCH_STATE_FROM_PROTO[value])
    return tuple(found)


def state_change(request: tree_pb2.SetBranchStateRequest) -> StateChange:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    state = BRANCH_STATE_FROM_PROTO.get(request.state)
    if state is None:
        check.fail("state", "must be ACTIVE, PAUSED, CONCLUDED or ARCHIVED")
    if request.expected_revision < 1:
        check.fail(
            "expected_revision", "is required: the branch's current revision (1 if never moved)"
        )
    check.text("changed_by", request.changed_by, 200)
    check.text("reason", request.reason, MAX_REASON, required=False)
    if state is BranchState.CONCLUDED:
        check.text("summary", request.summary, MAX_SUMMARY)
    elif request.summary:
        check.fail("summary", "is only allowed when concluding (state CONCLUDED)")
    check.done()
    assert state is not None
    return StateChange(
        node_id=request.node_id,
        state=state,
        expected_revision=request.expected_revision,
        changed_by=request.changed_by,
        reason=request.reason,
        summary=request.summary if state is BranchState.CONCLUDED else None,
    )


def transition_to_proto(t: Transition) -> tree_pb2.BranchTransition:
    return tree_pb2.BranchTransition(
        revision=t.revision,
        from_state=BRANCH_STATE_TO_PROTO[t.from_state],
        to_state=BRANCH_STATE_TO_PROTO[t.to_state],
        changed_by=t.changed_by,
        reason=t.reason,
        changed_at=format_utc(t.changed_at),
    )


def branch_to_proto(branch: Branch) -> tree_pb2.Branch:
    message = tree_pb2.Branch(
        node_id=branch.node_id,
        tree_id=branch.tree_id,
        state=BRANCH_STATE_TO_PROTO[branch.state],
        revision=branch.revision,
        transitions=[transition_to_proto(t) for t in branch.transitions],
    )
    conclusion = branch.last_conclusion
    if conclusion is not None:
        message.last_conclusion.CopyFrom(
            tree_pb2.BranchConclusion(
                summary=conclusion.summary or "",
                open_question_ids=list(conclusion.open_question_ids),
                candidate_answer_ids=list(conclusion.candidate_answer_ids),
                concluded_by=conclusion.changed_by,
                concluded_at=format_utc(conclusion.changed_at),
                revision=conclusion.revision,
            )
        )
    return message
