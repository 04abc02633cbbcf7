"""The rules of realms and effects (T17, T18, T24), free of grpc and asyncpg.

言可入幻，行必归真: words may enter illusion, actions must return to truth. Whether a real-world
action may be recorded (the realm, the main line, the ruling, the safety stops) is the one
gate's to say (tree_service/gate.py), with every other rule of acting and spending. A commitment
or fact stated at a node takes the effect its kind and realm allow, and no more: that rule,
`effectiveness`, is in the core (tree_service/commitments.py), because context assembly and the
story-graph projection read it too; here are what confirming and withdrawing one expect.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tree_service.commitments import CommitmentKind, StoredCommitment
from tree_service.domain import Realm
from tree_service.errors import PreconditionFailed
from tree_service.gate import RealmNotReal

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
