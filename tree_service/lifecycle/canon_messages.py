"""Invitation and candidate-review requests checked field by field, and their messages."""

from __future__ import annotations

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service.convert import Checker
from tree_service.domain import CanonCandidate
from tree_service.lifecycle.rules import CandidateReview, Invitation, InvitationState

INVITATION_STATE_TO_PROTO = {
    InvitationState.PENDING: tree_pb2.INVITATION_PENDING,
    InvitationState.ACCEPTED: tree_pb2.INVITATION_ACCEPTED,
    InvitationState.DECLINED: tree_pb2.INVITATION_DECLINED,
}
INVITATION_STATE_FROM_PROTO: dict[int, InvitationState] = {
    v: k for k, v in INVITATION_STATE_TO_PROTO.items()
}
MAX_REASON = 2_000


def invitation(request: tree_pb2.InviteCanonicalizationRequest) -> tuple[str, str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    check.text("reason", request.reason, MAX_REASON)
    check.text("proposed_by", request.proposed_by, 200)
    check.done()
    return request.node_id, request.reason, request.proposed_by


def decline(request: tree_pb2.DeclineCanonInvitationRequest) -> tuple[str, str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("invitation_id", request.invitation_id)
    check.text("declined_by", request.declined_by, 200)
    check.text("reason", request.reason, MAX_REASON, required=False)
    check.done()
    return request.invitation_id, request.declined_by, request.reason


def invitation_states(check: Checker, values: list[int]) -> tuple[InvitationState, ...]:
    found = []
    for i, value in enumerate(values):
        if value not in INVITATION_STATE_FROM_PROTO:
            check.fail(
                f"states[{i}]",
                "must be INVITATION_PENDING, INVITATION_ACCEPTED or INVITATION_DECLINED",
            )
        else:
            found.append(INVITATION_STATE_FROM_PROTO[value])
    return tuple(found)


def review(request: tree_pb2.ReviewCanonCandidateRequest, *, accept: bool) -> CandidateReview:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("candidate_id", request.candidate_id)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the candidate's current revision")
    check.text("reviewed_by", request.reviewed_by, 200)
    check.text("reason", request.reason, MAX_REASON, required=False)
    check.done()
    return CandidateReview(
        candidate_id=request.candidate_id,
        accept=accept,
        expected_revision=request.expected_revision,
        reviewed_by=request.reviewed_by,
        reason=request.reason,
    )


def invitation_to_proto(found: Invitation) -> tree_pb2.CanonInvitation:
    return tree_pb2.CanonInvitation(
        id=found.id,
        tree_id=found.tree_id,
        node_id=found.node_id,
        reason=found.reason,
        proposed_by=found.proposed_by,
        state=INVITATION_STATE_TO_PROTO[found.state],
        decided_by=found.decided_by or "",
        decision_reason=found.decision_reason,
        decided_at=format_utc(found.decided_at) if found.decided_at else "",
        version_id=found.version_id or "",
        created_at=format_utc(found.created_at),
    )


def candidate_to_proto(candidate: CanonCandidate) -> tree_pb2.CanonCandidate:
    return tree_pb2.CanonCandidate(
        id=candidate.id,
        kind=candidate.kind,
        detail=candidate.detail,
        status=candidate.status,
        revision=candidate.revision,
        reviewed_by=candidate.reviewed_by or "",
        review_reason=candidate.review_reason,
        reviewed_at=format_utc(candidate.reviewed_at) if candidate.reviewed_at else "",
        version_id=candidate.version_id,
    )
