"""Realms and effects (T17, T18) without a database: a real-world action only from the real
realm, canonicalized, with an allowing ruling for that node and action and no safety stop in
effect; what each commitment kind takes effect as in each realm, and how its state moves.
(tests/unit/tree_service/context_assembly/test_layers.py checks the order of the refusals and
a table of effects; these check what each refusal says and the rest of the effects.)"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from tree_service.commitments import (
    CommitmentKind,
    CommitmentState,
    StoredCommitment,
    effectiveness,
)
from tree_service.domain import Node, NodeKind, Realm
from tree_service.errors import PreconditionFailed
from tree_service.gate import (
    NotCanonicalized,
    RealmNotReal,
    RulingRequired,
    SafetyStopInEffect,
    expect_action_allowed,
)
from tree_service.realms.rules import Ruling, expect_confirmable, expect_withdrawable

NOW = datetime(2026, 12, 4, tzinfo=UTC)
K, S = CommitmentKind, CommitmentState


def node(realm: Realm = Realm.REAL, world: str | None = None) -> Node:
    return Node(
        id="n1",
        tree_id="t",
        parent_id=None,
        kind=NodeKind.QUESTION,
        realm=realm,
        text="send the letter",
        revision=1,
        ordinal=1,
        created_at=NOW,
        world=world,
    )


RULING = Ruling("r1", "t", "n1", "arbiter-a", "send_email", True, "fine", NOW)


def act(
    at: Node | None = None,
    version: str | None = "v1",
    ruling: Ruling | None = RULING,
    action: str = "send_email",
    stops: int = 0,
) -> None:
    expect_action_allowed(at or node(), version, ruling, action, stops=stops, ruling_id="r1")


def refusal(**changes) -> PreconditionFailed:
    with pytest.raises(PreconditionFailed) as caught:
        act(**changes)
    return caught.value


def test_a_ruled_action_from_a_canonicalized_real_node_without_a_stop_is_allowed():
    act()


@pytest.mark.parametrize(
    ("at", "where"),
    [(node(Realm.WORLD, "Arden"), "world 'Arden'"), (node(Realm.REHEARSAL), "a rehearsal")],
)
def test_an_action_from_outside_the_real_realm_is_refused_saying_where_it_was(at, where):
    refused = refusal(at=at)
    assert type(refused) is RealmNotReal and refused.reason == "realm_not_real"
    assert refused.metadata == {"field": "node_id", "realm": at.realm.value}
    assert f"belongs to {where}" in refused.message


def test_an_action_from_a_node_no_real_main_line_holds_is_refused():
    refused = refusal(version=None)
    assert type(refused) is NotCanonicalized and refused.reason == "not_canonicalized"
    assert refused.metadata == {"field": "node_id"}


@pytest.mark.parametrize(
    "ruling", [None, dataclasses.replace(RULING, node_id="another-node")], ids=["none", "other"]
)
def test_an_action_without_a_ruling_on_its_own_node_is_refused(ruling):
    refused = refusal(ruling=ruling)
    assert type(refused) is RulingRequired and refused.reason == "ruling_required"
    assert refused.metadata == {"field": "ruling_id"}
    assert "no arbiter ruling 'r1' is on record for node 'n1'" in refused.message


def test_an_action_the_arbiter_refused_is_refused_with_the_arbiters_reason():
    refused = refusal(ruling=dataclasses.replace(RULING, allowed=False, reason="too risky"))
    assert type(refused) is RulingRequired
    assert refused.metadata == {"field": "ruling_id", "allowed": "false"}
    assert refused.message == "the arbiter 'arbiter-a' refused this action: too risky"


def test_a_ruling_on_another_action_does_not_allow_this_one():
    refused = refusal(action="delete_account")
    assert type(refused) is RulingRequired and refused.metadata == {"field": "action"}
    assert "'send_email', not 'delete_account'" in refused.message


@pytest.mark.parametrize("stops", [1, 3])
def test_any_safety_stop_in_effect_holds_the_action_and_says_how_many(stops):
    refused = refusal(stops=stops)
    assert type(refused) is SafetyStopInEffect and refused.reason == "safety_stop_in_effect"
    assert refused.metadata == {"safety_stops": str(stops)}


def commitment(kind: CommitmentKind, realm: Realm = Realm.REAL, **fields) -> StoredCommitment:
    values = {
        "id": "c1",
        "tree_id": "t",
        "node_id": "n1",
        "kind": kind,
        "statement": "s",
        "realm": realm,
        "world": "Arden" if realm is Realm.WORLD else None,
        "stated_by": "u",
        "created_at": NOW,
        "confirmed_by": None,
        "withdrawn_by": None,
        **fields,
    }
    return StoredCommitment(**values)


def canonicalized(*holders: tuple[str, str, str]) -> dict[str, Any]:
    return {"canonicalized_in": holders}


@pytest.mark.parametrize("kind", [K.RELATIONSHIP, K.EXPERIENCE, K.STATED_FACT])
def test_a_real_statement_takes_effect_through_a_real_experience_main_line_naming_it(kind):
    waiting = effectiveness(commitment(kind))
    assert waiting.state is S.AWAITING_CANONICALIZATION
    assert (waiting.scope, waiting.version_id) == ("", "")
    assert waiting.reason == "takes effect only through a real-realm canonicalization"
    held = effectiveness(
        commitment(
            kind, **canonicalized(("v0", "world_canon", "Arden"), ("v2", "real_experience", ""))
        )
    )
    assert (held.state, held.scope, held.version_id) == (S.IN_EFFECT, "real", "v2")


@pytest.mark.parametrize("kind", [K.RELATIONSHIP, K.EXPERIENCE, K.STATED_FACT])
def test_a_world_statement_takes_effect_only_through_its_own_worlds_canon(kind):
    elsewhere = commitment(
        kind,
        Realm.WORLD,
        **canonicalized(("v1", "real_experience", ""), ("v2", "world_canon", "Oz")),
    )
    assert effectiveness(elsewhere).state is S.AWAITING_CANONICALIZATION
    assert effectiveness(elsewhere).reason == "takes effect only through world 'Arden''s canon"
    own = dataclasses.replace(
        elsewhere, canonicalized_in=(*elsewhere.canonicalized_in, ("v3", "world_canon", "Arden"))
    )
    held = effectiveness(own)
    assert (held.state, held.scope, held.version_id) == (S.IN_EFFECT, "world_canon:Arden", "v3")


@pytest.mark.parametrize("kind", [k for k in CommitmentKind if k is not K.SAFETY_STOP])
def test_a_rehearsal_statement_never_takes_effect_even_canonicalized_or_confirmed(kind):
    rehearsed = commitment(
        kind,
        Realm.REHEARSAL,
        confirmed_by="u",
        **canonicalized(("v", "real_experience", ""), ("w", "rehearsal", "")),
    )
    assert effectiveness(rehearsed).state is S.NEVER_IN_EFFECT


@pytest.mark.parametrize("realm", list(Realm))
def test_a_safety_stop_takes_effect_everywhere_at_once_from_any_realm(realm):
    stop = effectiveness(commitment(K.SAFETY_STOP, realm))
    assert (stop.state, stop.scope) == (S.IN_EFFECT, "everywhere")


def test_an_authorization_in_a_world_is_never_real_even_confirmed():
    world = effectiveness(commitment(K.AUTHORIZATION, Realm.WORLD, confirmed_by="u"))
    assert world.state is S.NEVER_IN_EFFECT
    assert "never a real authorization" in world.reason


def test_a_real_authorization_is_not_made_real_by_canonicalization_only_by_confirmation():
    held = commitment(K.AUTHORIZATION, **canonicalized(("v", "real_experience", "")))
    assert effectiveness(held).state is S.AWAITING_CONFIRMATION
    confirmed = effectiveness(dataclasses.replace(held, confirmed_by="ana"))
    assert (confirmed.state, confirmed.scope) == (S.IN_EFFECT, "real")
    assert confirmed.reason == "confirmed by ana"


@pytest.mark.parametrize(
    "stated",
    [
        commitment(K.AUTHORIZATION, confirmed_by="u"),
        commitment(K.SAFETY_STOP, Realm.REHEARSAL),
        commitment(K.RELATIONSHIP, **canonicalized(("v", "real_experience", ""))),
        commitment(K.STATED_FACT, Realm.REHEARSAL),
    ],
    ids=["confirmed", "stop", "canonicalized", "rehearsal"],
)
def test_withdrawal_ends_any_effect(stated):
    withdrawn = effectiveness(dataclasses.replace(stated, withdrawn_by="ana"))
    assert (withdrawn.state, withdrawn.scope) == (S.WITHDRAWN, "")
    assert withdrawn.reason == "withdrawn by ana"


def test_an_authorization_moves_from_awaiting_confirmation_to_in_effect_to_withdrawn():
    stated = commitment(K.AUTHORIZATION)
    states = [effectiveness(stated).state]
    expect_confirmable(stated)
    confirmed = dataclasses.replace(stated, confirmed_by="ana")
    states.append(effectiveness(confirmed).state)
    expect_withdrawable(confirmed)
    withdrawn = dataclasses.replace(confirmed, withdrawn_by="ana")
    states.append(effectiveness(withdrawn).state)
    assert states == [S.AWAITING_CONFIRMATION, S.IN_EFFECT, S.WITHDRAWN]
    # Withdrawn is final: neither confirmed nor withdrawn again.
    for expect in (expect_confirmable, expect_withdrawable):
        with pytest.raises(PreconditionFailed, match="withdrawn by 'ana'") as caught:
            expect(withdrawn)
        assert caught.value.metadata == {"field": "commitment_id"}


@pytest.mark.parametrize("kind", [k for k in CommitmentKind if k is not K.AUTHORIZATION])
def test_only_an_authorization_is_confirmed_on_its_own(kind):
    with pytest.raises(PreconditionFailed) as caught:
        expect_confirmable(commitment(kind))
    assert type(caught.value) is PreconditionFailed
    assert caught.value.metadata == {"field": "commitment_id", "kind": kind.value}


@pytest.mark.parametrize("realm", [Realm.WORLD, Realm.REHEARSAL])
def test_an_authorization_outside_the_real_realm_cannot_be_confirmed(realm):
    with pytest.raises(RealmNotReal) as caught:
        expect_confirmable(commitment(K.AUTHORIZATION, realm))
    assert caught.value.metadata == {"field": "commitment_id", "realm": realm.value}


def test_withdrawal_is_checked_before_kind_and_realm():
    gone = commitment(K.STATED_FACT, Realm.WORLD, withdrawn_by="u")
    with pytest.raises(PreconditionFailed, match="was withdrawn by 'u'"):
        expect_confirmable(gone)


@pytest.mark.parametrize("kind", list(CommitmentKind))
def test_any_standing_commitment_may_be_withdrawn(kind):
    expect_withdrawable(commitment(kind))
    expect_withdrawable(commitment(kind, Realm.WORLD, confirmed_by="u"))
