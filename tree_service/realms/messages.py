"""Requests of realms and effects → checked values, and their records → proto messages."""

from __future__ import annotations

import json

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.commitments import (
    CommitmentKind,
    CommitmentState,
    StoredCommitment,
    effectiveness,
)
from tree_service.convert import Checker
from tree_service.realms.rules import ActionRequest, Effect, Ruling, RulingRequest

MAX_NAME = 200
MAX_ACTION = 1_000
MAX_REASON = 10_000
MAX_STATEMENT = 10_000
MAX_PARAMETERS = 100_000  # characters of JSON
DEFAULT_LEDGER_PAGE = 50
MAX_LEDGER_PAGE = 200

KIND_FROM_PROTO = {
    tree_pb2.SAFETY_STOP: CommitmentKind.SAFETY_STOP,
    tree_pb2.AUTHORIZATION: CommitmentKind.AUTHORIZATION,
    tree_pb2.RELATIONSHIP: CommitmentKind.RELATIONSHIP,
    tree_pb2.EXPERIENCE: CommitmentKind.EXPERIENCE,
    tree_pb2.STATED_FACT: CommitmentKind.STATED_FACT,
}
KIND_TO_PROTO = {kind: value for value, kind in KIND_FROM_PROTO.items()}
STATE_TO_PROTO = {
    CommitmentState.IN_EFFECT: tree_pb2.IN_EFFECT,
    CommitmentState.AWAITING_CONFIRMATION: tree_pb2.AWAITING_CONFIRMATION,
    CommitmentState.AWAITING_CANONICALIZATION: tree_pb2.AWAITING_CANONICALIZATION,
    CommitmentState.NEVER_IN_EFFECT: tree_pb2.NEVER_IN_EFFECT,
    CommitmentState.WITHDRAWN: tree_pb2.WITHDRAWN,
}


def ruling_request(request: tree_pb2.RecordArbiterRulingRequest) -> RulingRequest:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    check.text("arbiter", request.arbiter, MAX_NAME)
    check.text("action", request.action, MAX_ACTION)
    check.text("reason", request.reason, MAX_REASON)
    check.done()
    return RulingRequest(
        request.node_id, request.arbiter, request.action, request.allowed, request.reason
    )


def action_request(request: tree_pb2.RecordRealActionRequest) -> ActionRequest:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    check.identifier("ruling_id", request.ruling_id)
    check.text("tool", request.tool, MAX_NAME)
    check.text("action", request.action, MAX_ACTION)
    check.text("recorded_by", request.recorded_by, MAX_NAME)
    parameters = request.parameters_json or "{}"
    if len(parameters) > MAX_PARAMETERS:
        check.fail("parameters_json", f"is longer than {MAX_PARAMETERS} characters")
    else:
        try:
            value = convert.parse_storable_json(parameters)
        except ValueError as exc:
            check.fail("parameters_json", f"is not storable JSON: {str(exc)[:200]}")
        else:
            if not isinstance(value, dict):
                check.fail("parameters_json", "must be a JSON object")
            parameters = json.dumps(value, ensure_ascii=False)
    check.done()
    return ActionRequest(
        request.node_id,
        request.ruling_id,
        request.tool,
        request.action,
        parameters,
        request.recorded_by,
    )


def commitment_request(
    request: tree_pb2.RecordCommitmentRequest,
) -> tuple[str, CommitmentKind, str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    kind = KIND_FROM_PROTO.get(request.kind)
    if kind is None:
        check.fail(
            "kind",
            "is required: SAFETY_STOP, AUTHORIZATION, RELATIONSHIP, EXPERIENCE or STATED_FACT",
        )
    check.text("statement", request.statement, MAX_STATEMENT)
    check.text("stated_by", request.stated_by, MAX_NAME)
    check.done()
    assert kind is not None
    return request.node_id, kind, request.statement, request.stated_by


def confirm_request(request: tree_pb2.ConfirmCommitmentRequest) -> tuple[str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("commitment_id", request.commitment_id)
    if not request.confirmation.confirmed:
        check.fail("confirmation.confirmed", "must be true: only the user confirms")
    check.text("confirmation.user_id", request.confirmation.user_id, MAX_NAME)
    check.done()
    return request.commitment_id, request.confirmation.user_id


def withdraw_request(request: tree_pb2.WithdrawCommitmentRequest) -> tuple[str, str]:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("commitment_id", request.commitment_id)
    check.text("withdrawn_by", request.withdrawn_by, MAX_NAME)
    check.done()
    return request.commitment_id, request.withdrawn_by


def ledger_page(tree_id: str, page_size: int, page_token: str) -> tuple[int, int]:
    """(position after which to read, limit) of a ledger or commitment list page."""
    check = Checker()
    check.identifier("tree_id", tree_id)
    limit = check.page_size(page_size, DEFAULT_LEDGER_PAGE, MAX_LEDGER_PAGE)
    after = convert.page_token(check, page_token)
    check.done()
    return after, limit


def ruling_to_proto(ruling: Ruling) -> tree_pb2.ArbiterRuling:
    return tree_pb2.ArbiterRuling(
        id=ruling.id,
        tree_id=ruling.tree_id,
        node_id=ruling.node_id,
        arbiter=ruling.arbiter,
        action=ruling.action,
        allowed=ruling.allowed,
        reason=ruling.reason,
        created_at=format_utc(ruling.created_at),
    )


def effect_to_proto(effect: Effect) -> tree_pb2.Effect:
    return tree_pb2.Effect(
        id=effect.id,
        tree_id=effect.tree_id,
        node_id=effect.node_id,
        kind=effect.kind,
        ruling_id=effect.ruling_id,
        tool=effect.tool,
        action=effect.action,
        parameters_json=effect.parameters_json,
        recorded_by=effect.recorded_by,
        created_at=format_utc(effect.created_at),
        main_line_version_id=effect.main_line_version_id,
    )


def commitment_to_proto(c: StoredCommitment) -> tree_pb2.Commitment:
    effect = effectiveness(c)
    return tree_pb2.Commitment(
        id=c.id,
        tree_id=c.tree_id,
        node_id=c.node_id,
        kind=KIND_TO_PROTO[c.kind],
        statement=c.statement,
        realm=convert.REALM_TO_PROTO[c.realm],
        world=c.world or "",
        stated_by=c.stated_by,
        created_at=format_utc(c.created_at),
        state=STATE_TO_PROTO[effect.state],
        effective_scope=effect.scope,
        state_reason=effect.reason,
        confirmed_by=c.confirmed_by or "",
        main_line_version_id=effect.version_id,
        withdrawn_by=c.withdrawn_by or "",
    )
