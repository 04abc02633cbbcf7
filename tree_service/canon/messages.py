"""Canonicalization, invitation and candidate-review requests checked field by field, and main-line
versions, invitations and candidates as proto messages."""

from __future__ import annotations

import dataclasses
import uuid

from mirrortree.protoscope import scope_to_proto
from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.canon.rules import (
    MAX_CANDIDATES,
    MEMORY_KINDS,
    MEMORY_TIERS,
    CandidateReview,
    Invitation,
    InvitationState,
)
from tree_service.convert import Checker
from tree_service.domain import (
    CandidateProposal,
    CanonCandidate,
    Canonicalization,
    CanonicalScope,
    MainLineVersion,
)
from tree_service.errors import InvalidInput
from tree_service.ingestion.source_input import MAX_PREFERENCE, MAX_SUBJECT

SCOPE_TO_PROTO = {
    CanonicalScope.REAL_EXPERIENCE: tree_pb2.REAL_EXPERIENCE,
    CanonicalScope.WORLD_CANON: tree_pb2.WORLD_CANON,
    CanonicalScope.REHEARSAL: tree_pb2.REHEARSAL_RECORD,
}

SCOPE_FROM_PROTO = {v: k for k, v in SCOPE_TO_PROTO.items()}

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
        subject=candidate.subject,
        text=candidate.text,
        memory_id=candidate.memory_id or "",
    )


def proposals(
    check: Checker, values: list[tree_pb2.CandidateProposal]
) -> tuple[CandidateProposal, ...]:
    """The candidates a canonicalization proposes, each with its content; whether its scope
    allows each kind is known only once the selection is read (rules.expect_candidates_allowed)."""
    if len(values) > MAX_CANDIDATES:
        check.fail("candidates", f"holds more than {MAX_CANDIDATES} candidates")
    found = []
    for i, value in enumerate(values):
        field = f"candidates[{i}]"
        check.identifier(f"{field}.kind", value.kind)
        if value.kind == "memory_candidate":
            if value.tier not in MEMORY_TIERS:
                check.fail(f"{field}.tier", f"must be one of {', '.join(MEMORY_TIERS)}")
        elif value.tier:
            check.fail(f"{field}.tier", "is only for a memory_candidate")
        if value.kind in MEMORY_KINDS:
            check.text(f"{field}.subject", value.subject, MAX_SUBJECT)
        elif value.subject:
            check.fail(f"{field}.subject", f"is only for {' and '.join(MEMORY_KINDS)}")
        check.text(f"{field}.text", value.text, MAX_PREFERENCE)
        found.append(CandidateProposal(value.kind, value.tier, value.subject, value.text))
    return tuple(found)


def canonicalization(request: tree_pb2.CanonicalizeRequest) -> Canonicalization:
    """Only a user's explicit confirmation canonicalizes (T9/T10)."""
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    if not request.confirmation.confirmed:
        check.fail(
            "confirmation.confirmed",
            "must be true: canonicalization happens only on a user's confirmation",
        )
    check.identifier("confirmation.user_id", request.confirmation.user_id)
    if request.confirmation.invitation_id:
        try:
            uuid.UUID(request.confirmation.invitation_id)
        except ValueError:
            check.fail("confirmation.invitation_id", "is not a valid id (a UUID)")
    if request.expected_version < 0:
        check.fail("expected_version", "must be the main line's current version (0 = none)")
    which = request.WhichOneof("selection")
    node_ids: tuple[str, ...] = ()
    if which is None:
        check.fail("selection", "name leaf_node_id (a path) or nodes (selected nodes)")
    elif which == "leaf_node_id":
        check.identifier("leaf_node_id", request.leaf_node_id)
    else:
        node_ids = tuple(request.nodes.node_ids)
        if not node_ids:
            check.fail("nodes.node_ids", "must name at least one node")
        if len(node_ids) > 1000:
            check.fail("nodes.node_ids", "holds more than 1000 nodes")
        if len(set(node_ids)) != len(node_ids):
            check.fail("nodes.node_ids", "names a node twice")
        for i, node_id in enumerate(node_ids):
            check.identifier(f"nodes.node_ids[{i}]", node_id)
    candidates = proposals(check, list(request.candidates))
    check.done()
    return Canonicalization(
        tree_id=request.tree_id,
        leaf_node_id=request.leaf_node_id if which == "leaf_node_id" else None,
        node_ids=node_ids,
        confirmed_by=request.confirmation.user_id,
        invitation_id=request.confirmation.invitation_id or None,
        expected_version=request.expected_version,
        candidates=candidates,
    )


def scope_filter(value: int) -> CanonicalScope | None:
    if value == tree_pb2.CANONICAL_SCOPE_UNSPECIFIED:
        return None
    scope: CanonicalScope | None = SCOPE_FROM_PROTO.get(value)  # type: ignore[call-overload]
    if scope is None:
        raise InvalidInput.one("scope", f"unknown canonical scope {value}")
    return scope


def version_to_proto(version: MainLineVersion) -> tree_pb2.MainLineVersion:
    policy = version.policy
    return tree_pb2.MainLineVersion(
        id=version.id,
        tree_id=version.tree_id,
        scope=SCOPE_TO_PROTO[version.scope],
        world=version.world,
        version=version.version,
        node_ids=list(version.node_ids),
        snapshot=[convert.node_to_proto(n) for n in version.snapshot],
        confirmed_by=version.confirmed_by,
        created_at=format_utc(version.created_at),
        candidates=[
            candidate_to_proto(dataclasses.replace(c, version_id=version.id))
            for c in version.candidates
        ],
        forbidden_effects=list(policy.forbidden_effects),
        manual_extractions=list(policy.manual_extractions),
        replaces_version_id=version.replaces_version_id or "",
        story_graph_scope=scope_to_proto(version.graph_scope) if version.graph_scope else None,
        invitation_id=version.invitation_id or "",
    )
