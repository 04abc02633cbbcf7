"""The rules of realms and effects (T17, T18, T24), free of grpc and asyncpg.

言可入幻，行必归真: words may enter illusion, actions must return to truth. A real-world action
is recorded only from a node of the real realm that a real-experience main line holds (nothing
un-canonicalized acts), with an allowing arbiter ruling for that node and action, and while no
safety stop holds the tree. A commitment or fact stated at a node
takes the effect its kind and realm allow, and no more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tree_service.domain import Node, Realm
from tree_service.errors import PreconditionFailed


class RealmNotReal(PreconditionFailed):
    """A real-world action from a world or rehearsal node; nothing was written."""

    reason = "realm_not_real"


class RulingRequired(PreconditionFailed):
    """A real-world action without an allowing arbiter ruling on record; nothing was written."""

    reason = "ruling_required"


class NotCanonicalized(PreconditionFailed):
    """A real-world action from a node no real-experience main line holds; nothing was
    written."""

    reason = "not_canonicalized"


class SafetyStopInEffect(PreconditionFailed):
    """A safety stop stated in the tree holds every real-world action; nothing was written."""

    reason = "safety_stop_in_effect"


class CommitmentKind(StrEnum):
    SAFETY_STOP = "safety_stop"
    AUTHORIZATION = "authorization"
    RELATIONSHIP = "relationship"
    EXPERIENCE = "experience"
    STATED_FACT = "stated_fact"


class CommitmentState(StrEnum):
    IN_EFFECT = "in_effect"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    AWAITING_CANONICALIZATION = "awaiting_canonicalization"
    NEVER_IN_EFFECT = "never_in_effect"
    WITHDRAWN = "withdrawn"


REAL_WORLD_ACTION = "real_world_action"


@dataclass(frozen=True)
class RulingRequest:
    node_id: str
    arbiter: str
    action: str
    allowed: bool
    reason: str


@dataclass(frozen=True)
class ActionRequest:
    node_id: str
    ruling_id: str
    tool: str
    action: str
    parameters_json: str
    recorded_by: str


@dataclass(frozen=True)
class Ruling:
    id: str
    tree_id: str
    node_id: str
    arbiter: str
    action: str
    allowed: bool
    reason: str
    created_at: datetime


@dataclass(frozen=True)
class Effect:
    id: str
    tree_id: str
    node_id: str
    kind: str
    ruling_id: str
    tool: str
    action: str
    parameters_json: str
    recorded_by: str
    created_at: datetime
    main_line_version_id: str


@dataclass(frozen=True)
class StoredCommitment:
    """A commitment as recorded, with the canonicalizations that hold its node."""

    id: str
    tree_id: str
    node_id: str
    kind: CommitmentKind
    statement: str
    realm: Realm
    world: str | None
    stated_by: str
    created_at: datetime
    confirmed_by: str | None
    withdrawn_by: str | None
    # (version id, canonical scope, world) of each main-line version holding the node.
    canonicalized_in: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Effectiveness:
    state: CommitmentState
    scope: str
    reason: str
    version_id: str = ""


def expect_action_allowed(
    node: Node,
    canonicalized_in: str | None,
    ruling: Ruling | None,
    action: str,
    *,
    stops: int,
    ruling_id: str,
    used_by: str | None = None,
) -> None:
    """Refuse a real-world action that the realm, the main line, the ruling or a safety stop
    forbids; `used_by` is the effect the ruling authorized already, if any (a ruling allows
    one action)."""
    if node.realm is not Realm.REAL:
        where = f"world {node.world!r}" if node.realm is Realm.WORLD else "a rehearsal"
        raise RealmNotReal(
            f"node {node.id!r} belongs to {where}: words may enter illusion, actions must return "
            "to truth; ask for the action again from a node of the real realm",
            {"field": "node_id", "realm": node.realm.value},
        )
    if canonicalized_in is None:
        raise NotCanonicalized(
            f"node {node.id!r} is not on a confirmed real-experience main line: nothing "
            "un-canonicalized acts in the real world; canonicalize its path first",
            {"field": "node_id"},
        )
    if ruling is None or ruling.node_id != node.id:
        raise RulingRequired(
            f"no arbiter ruling {ruling_id!r} is on record for node {node.id!r}; record the "
            "arbiter's ruling on this action first",
            {"field": "ruling_id"},
        )
    if not ruling.allowed:
        raise RulingRequired(
            f"the arbiter {ruling.arbiter!r} refused this action: {ruling.reason}",
            {"field": "ruling_id", "allowed": "false"},
        )
    if used_by is not None:
        raise RulingRequired(
            f"ruling {ruling.id!r} authorized effect {used_by!r} already: a ruling allows one "
            "action; record the arbiter's ruling on this one",
            {"field": "ruling_id", "effect_id": used_by},
        )
    if ruling.action != action:
        raise RulingRequired(
            f"ruling {ruling.id!r} is on the action {ruling.action!r}, not {action!r}",
            {"field": "action"},
        )
    if stops:
        raise SafetyStopInEffect(
            f"{stops} safety stop(s) stated in this tree hold every real-world action; "
            "withdraw the stop before acting",
            {"safety_stops": str(stops)},
        )


def expect_confirmable(commitment: StoredCommitment) -> None:
    """Only a real-realm authorization is confirmed on its own, and only while it stands."""
    if commitment.withdrawn_by is not None:
        raise PreconditionFailed(
            f"commitment {commitment.id!r} was withdrawn by {commitment.withdrawn_by!r}",
            {"field": "commitment_id"},
        )
    if commitment.kind is not CommitmentKind.AUTHORIZATION:
        raise PreconditionFailed(
            f"commitment {commitment.id!r} is a {commitment.kind.value}; only an authorization "
            "is confirmed on its own (relationships, experiences and facts take effect through "
            "canonicalization, a safety stop at once)",
            {"field": "commitment_id", "kind": commitment.kind.value},
        )
    if commitment.realm is not Realm.REAL:
        raise RealmNotReal(
            f"commitment {commitment.id!r} was stated in the {commitment.realm.value} realm; "
            "an authorization there is never a real one",
            {"field": "commitment_id", "realm": commitment.realm.value},
        )


def expect_withdrawable(commitment: StoredCommitment) -> None:
    if commitment.withdrawn_by is not None:
        raise PreconditionFailed(
            f"commitment {commitment.id!r} was already withdrawn by {commitment.withdrawn_by!r}",
            {"field": "commitment_id"},
        )


def effectiveness(c: StoredCommitment) -> Effectiveness:
    """The effect a commitment has now, from its kind, realm, confirmation, withdrawal and the
    main-line versions holding its node (seed 001 §6)."""
    if c.withdrawn_by is not None:
        return Effectiveness(CommitmentState.WITHDRAWN, "", f"withdrawn by {c.withdrawn_by}")
    if c.kind is CommitmentKind.SAFETY_STOP:
        return Effectiveness(
            CommitmentState.IN_EFFECT, "everywhere", "a safety stop takes effect at once"
        )
    if c.realm is Realm.REHEARSAL:
        return Effectiveness(
            CommitmentState.NEVER_IN_EFFECT, "", "rehearsal statements never take effect"
        )
    if c.kind is CommitmentKind.AUTHORIZATION:
        if c.realm is not Realm.REAL:
            return Effectiveness(
                CommitmentState.NEVER_IN_EFFECT,
                "",
                "an authorization stated in a world is never a real authorization",
            )
        if c.confirmed_by is None:
            return Effectiveness(
                CommitmentState.AWAITING_CONFIRMATION,
                "",
                "a real authorization needs its own explicit confirmation",
            )
        return Effectiveness(CommitmentState.IN_EFFECT, "real", f"confirmed by {c.confirmed_by}")
    if c.realm is Realm.REAL:
        wanted, scope, label = "real_experience", "real", "a real-realm canonicalization"
    else:
        wanted, scope, label = "world_canon", f"world_canon:{c.world}", f"world {c.world!r}'s canon"
    for version_id, canonical_scope, world in c.canonicalized_in:
        if canonical_scope == wanted and (wanted != "world_canon" or world == c.world):
            return Effectiveness(
                CommitmentState.IN_EFFECT, scope, f"canonicalized into {label}", version_id
            )
    return Effectiveness(
        CommitmentState.AWAITING_CANONICALIZATION, "", f"takes effect only through {label}"
    )
