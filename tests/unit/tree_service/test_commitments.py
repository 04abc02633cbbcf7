"""Where a commitment holds as a fact (T18, T24), from the one rule of its effect: in a
context of the realm (and world) where it took effect, and in the story graph of the
canonicalization that put it in effect — never anywhere while it is not in effect."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from tree_service import canon_projection
from tree_service.commitments import (
    CommitmentKind,
    StoredCommitment,
    holds_in,
    put_in_effect_by,
)
from tree_service.domain import CanonicalScope, MainLineVersion, Node, NodeKind, ObjectType, Realm

AT = datetime(2026, 12, 4, tzinfo=UTC)
K, R = CommitmentKind, Realm
REAL_V = ("v1", "real_experience", "")
ARDEN_V = ("v1", "world_canon", "Arden")


def stated(kind: CommitmentKind, realm: Realm = R.REAL, **fields: Any) -> StoredCommitment:
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "tree_id": "t",
        "node_id": "n",
        "kind": kind,
        "statement": "the words",
        "realm": realm,
        "world": "Arden" if realm is R.WORLD else None,
        "stated_by": "u",
        "created_at": AT,
        "confirmed_by": None,
        "withdrawn_by": None,
        **fields,
    }
    return StoredCommitment(**values)


@pytest.mark.parametrize(
    ("commitment", "realm", "world", "scope"),
    [
        (stated(K.STATED_FACT, canonicalized_in=(REAL_V,)), R.REAL, None, "real"),
        (stated(K.EXPERIENCE, canonicalized_in=(REAL_V,)), R.REAL, None, "real"),
        (stated(K.AUTHORIZATION, confirmed_by="u"), R.REAL, None, "real"),
        (stated(K.RELATIONSHIP, R.WORLD, canonicalized_in=(ARDEN_V,)), R.WORLD, "Arden",
         "world_canon:Arden"),
        # Not in effect: awaiting canonicalization, awaiting confirmation, withdrawn.
        (stated(K.STATED_FACT), R.REAL, None, None),
        (stated(K.AUTHORIZATION), R.REAL, None, None),
        (stated(K.STATED_FACT, canonicalized_in=(REAL_V,), withdrawn_by="u"), R.REAL, None, None),
        # A rehearsal's never, even canonicalized as a rehearsal record.
        (stated(K.STATED_FACT, R.REHEARSAL, canonicalized_in=(("v", "rehearsal", ""),)),
         R.REHEARSAL, None, None),
        # In effect, but elsewhere: a real fact in a world or a rehearsal, a world's in another
        # world or in the real realm.
        (stated(K.STATED_FACT, canonicalized_in=(REAL_V,)), R.WORLD, "Arden", None),
        (stated(K.STATED_FACT, canonicalized_in=(REAL_V,)), R.REHEARSAL, None, None),
        (stated(K.RELATIONSHIP, R.WORLD, canonicalized_in=(ARDEN_V,)), R.WORLD, "Oz", None),
        (stated(K.RELATIONSHIP, R.WORLD, canonicalized_in=(ARDEN_V,)), R.REAL, None, None),
        # A safety stop is in effect everywhere, and is no fact.
        (stated(K.SAFETY_STOP), R.REAL, None, None),
    ],
)  # fmt: skip
def test_a_commitment_holds_only_in_effect_and_where_it_took_effect(
    commitment, realm, world, scope
):
    effect = holds_in(commitment, realm, world)
    assert (effect.scope if effect else None) == scope


def test_a_version_puts_in_effect_only_what_it_is_the_first_to_hold():
    first, second = ("v1", "real_experience", ""), ("v2", "real_experience", "")
    fact = stated(K.STATED_FACT, canonicalized_in=(first, second))
    assert put_in_effect_by(fact, "v1") is not None
    assert put_in_effect_by(fact, "v2") is None  # in effect through v1 already
    assert put_in_effect_by(dataclasses.replace(fact, withdrawn_by="u"), "v1") is None
    confirmed = stated(K.AUTHORIZATION, confirmed_by="u", canonicalized_in=(first,))
    assert put_in_effect_by(confirmed, "v1") is None  # its confirmation put it in effect
    rehearsed = stated(K.EXPERIENCE, R.REHEARSAL, canonicalized_in=(("v1", "rehearsal", ""),))
    assert put_in_effect_by(rehearsed, "v1") is None


def version(scope: CanonicalScope, realm: Realm, world: str = "") -> MainLineVersion:
    nodes = tuple(
        Node(
            id=str(uuid.uuid4()),
            tree_id="t",
            parent_id=None,
            kind=kind,
            realm=realm,
            text="said before",
            revision=1,
            ordinal=i,
            created_at=AT,
            world=world or None,
        )
        for i, kind in enumerate((NodeKind.QUESTION, NodeKind.ANSWER))
    )
    return MainLineVersion(
        id=str(uuid.uuid4()),
        tree_id="t",
        scope=scope,
        world=world,
        version=1,
        node_ids=tuple(n.id for n in nodes),
        snapshot=nodes,
        confirmed_by="u",
        created_at=AT,
        candidates=(),
        replaces_version_id=None,
    )


def test_a_projection_holds_the_facts_its_version_put_in_effect_and_no_other():
    v = version(CanonicalScope.REAL_EXPERIENCE, R.REAL)
    answer = v.snapshot[1].id
    here = (v.id, "real_experience", "")
    held = stated(K.STATED_FACT, node_id=answer, statement="Ana lives in Porto")
    held = dataclasses.replace(held, canonicalized_in=(here,))
    earlier = stated(K.EXPERIENCE, node_id=answer)
    earlier = dataclasses.replace(earlier, canonicalized_in=(("v0", "real_experience", ""), here))
    withdrawn = stated(K.RELATIONSHIP, node_id=answer, canonicalized_in=(here,), withdrawn_by="u")
    waiting = stated(K.AUTHORIZATION, node_id=answer, canonicalized_in=(here,))
    result = canon_projection.projection(v, "Trip", "p", None, [held, earlier, withdrawn, waiting])
    facts = [o for o in result.objects if o.object_type is ObjectType.LEAF_FACT]
    assert [f.object_id for f in facts] == [f"mainline-{v.id}-fact-{held.id}"]
    (fact,) = facts
    assert (fact.body, fact.kind, fact.confirmation_state) == (
        "Ana lives in Porto",
        "stated_fact",
        "confirmed",
    )
    assert "Porto" not in fact.title and "Porto" not in str(fact.details)
    assert set(fact.links) == {
        ("about", "event", f"mainline-version-{v.id}"),
        ("cites", "source_reference", f"mainline-{v.id}-{answer}"),
    }
    assert {o.object_id for o in result.objects} >= {f"mainline-{v.id}-{answer}"}
    again = canon_projection.projection(v, "Trip", "p", None, [held, earlier, withdrawn, waiting])
    assert again == result  # deterministic


def test_a_rehearsal_record_holds_no_fact():
    v = version(CanonicalScope.REHEARSAL, R.REHEARSAL)
    said = stated(
        K.STATED_FACT, R.REHEARSAL, node_id=v.snapshot[1].id,
        canonicalized_in=((v.id, "rehearsal", ""),),
    )  # fmt: skip
    result = canon_projection.projection(v, "Stage", "p", None, [said])
    assert all(o.object_type is not ObjectType.LEAF_FACT for o in result.objects)
