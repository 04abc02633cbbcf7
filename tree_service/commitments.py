"""Commitments and facts stated at a node, and the one rule of their effect (T18, T24), free of
grpc and asyncpg.

A commitment's effect is never stored: it is derived whenever it is read, from its kind, realm,
confirmation, withdrawal and the main-line versions holding its node (`effectiveness`). Every
reader asks this rule: the realms RPCs that list commitments, context assembly (which lets the
facts in effect into a context's memory, `holds_in`) and the story-graph projection of a
canonicalization (which records the facts a version put in effect, `put_in_effect_by`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from tree_service.domain import Realm


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


# What holds as a fact once in effect: what was said about the world (and a confirmed real
# authorization, which says what the user allowed). A safety stop is no fact: it holds the
# tree's actions, and the service enforces it where they happen.
HOLDING_KINDS = frozenset(
    {
        CommitmentKind.AUTHORIZATION,
        CommitmentKind.RELATIONSHIP,
        CommitmentKind.EXPERIENCE,
        CommitmentKind.STATED_FACT,
    }
)

KIND_LABELS = {
    CommitmentKind.SAFETY_STOP: "safety stop",
    CommitmentKind.AUTHORIZATION: "authorization",
    CommitmentKind.RELATIONSHIP: "relationship",
    CommitmentKind.EXPERIENCE: "experience",
    CommitmentKind.STATED_FACT: "stated fact",
}


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


# What `commitment_from_row` reads, selected from `commitments c`: the commitment, and the
# main-line versions holding its node, oldest first (`versions`, a JSON array).
COLUMNS = """
c.id::text, c.tree_id::text, c.node_id::text, c.kind, c.statement, c.realm, c.world,
c.stated_by, c.created_at, c.confirmed_by, c.withdrawn_by,
coalesce((SELECT json_agg(json_build_array(v.id::text, v.scope, v.world)
                          ORDER BY v.created_at, v.id)
          FROM main_line_versions v
          WHERE v.tree_id = c.tree_id AND c.node_id = any(v.node_ids)), '[]') AS versions
"""


def commitment_from_row(row: Mapping[str, Any]) -> StoredCommitment:
    """A commitment from a row of COLUMNS."""
    return StoredCommitment(
        id=row["id"],
        tree_id=row["tree_id"],
        node_id=row["node_id"],
        kind=CommitmentKind(row["kind"]),
        statement=row["statement"],
        realm=Realm(row["realm"]),
        world=row["world"],
        stated_by=row["stated_by"],
        created_at=row["created_at"],
        confirmed_by=row["confirmed_by"],
        withdrawn_by=row["withdrawn_by"],
        canonicalized_in=tuple((v[0], v[1], v[2]) for v in json.loads(row["versions"])),
    )


def effect_scope(realm: Realm, world: str | None) -> str | None:
    """Where a commitment of `realm` (and `world`) can take effect: `real`, or one world's
    canon (`world_canon:<world>`); None for a rehearsal, where nothing takes effect."""
    if realm is Realm.REAL:
        return "real"
    if realm is Realm.WORLD:
        return f"world_canon:{world}"
    return None


def effectiveness(c: StoredCommitment) -> Effectiveness:
    """The effect a commitment has now, from its kind, realm, confirmation, withdrawal and the
    main-line versions holding its node (seed 001 §6)."""
    if c.withdrawn_by is not None:
        return Effectiveness(CommitmentState.WITHDRAWN, "", f"withdrawn by {c.withdrawn_by}")
    if c.kind is CommitmentKind.SAFETY_STOP:
        return Effectiveness(
            CommitmentState.IN_EFFECT, "everywhere", "a safety stop takes effect at once"
        )
    scope = effect_scope(c.realm, c.world)
    if scope is None:
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
        return Effectiveness(CommitmentState.IN_EFFECT, scope, f"confirmed by {c.confirmed_by}")
    if c.realm is Realm.REAL:
        wanted, label = "real_experience", "a real-realm canonicalization"
    else:
        wanted, label = "world_canon", f"world {c.world!r}'s canon"
    for version_id, canonical_scope, world in c.canonicalized_in:
        if canonical_scope == wanted and (wanted != "world_canon" or world == c.world):
            return Effectiveness(
                CommitmentState.IN_EFFECT, scope, f"canonicalized into {label}", version_id
            )
    return Effectiveness(
        CommitmentState.AWAITING_CANONICALIZATION, "", f"takes effect only through {label}"
    )


def holds_in(c: StoredCommitment, realm: Realm, world: str | None) -> Effectiveness | None:
    """The effect by which `c` holds as a fact for a node of `realm` (and `world`), or None:
    only a fact, relationship, experience or authorization in effect, and only where it took
    effect — a real one for the real realm, a world's for that world, nothing for a rehearsal.
    (Which trees' statements reach a node is the reader's to say: see context assembly.)"""
    if c.kind not in HOLDING_KINDS:
        return None
    wanted = effect_scope(realm, world)
    effect = effectiveness(c)
    if wanted is None or effect.state is not CommitmentState.IN_EFFECT or effect.scope != wanted:
        return None
    return effect


def put_in_effect_by(c: StoredCommitment, version_id: str) -> Effectiveness | None:
    """The effect main-line version `version_id` gave `c`, or None: `c` is in effect through a
    canonicalization and that version is the first holding its node in the scope its realm
    needs (a confirmed authorization takes effect through its confirmation, not a version)."""
    effect = effectiveness(c)
    if effect.state is not CommitmentState.IN_EFFECT or effect.version_id != version_id:
        return None
    return effect
