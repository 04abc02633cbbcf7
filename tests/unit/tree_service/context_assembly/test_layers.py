"""The rules of realms, commitments, context layers and citation anchors, without a database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from tree_service import gate
from tree_service.citations import anchors
from tree_service.commitments import (
    CommitmentKind,
    CommitmentState,
    StoredCommitment,
    effectiveness,
)
from tree_service.context_assembly import layers
from tree_service.context_assembly.layers import Budget, Inclusion, Layer, Summary
from tree_service.domain import Node, NodeKind, Realm
from tree_service.errors import InvalidInput
from tree_service.realms import rules

NOW = datetime(2026, 12, 4, tzinfo=UTC)


def node(text: str, parent: Node | None = None, **fields) -> Node:
    return Node(
        id=str(uuid.uuid4()),
        tree_id="t",
        parent_id=parent.id if parent else None,
        kind=NodeKind.QUESTION
        if parent is None or parent.kind is NodeKind.ANSWER
        else NodeKind.ANSWER,
        realm=fields.pop("realm", Realm.REAL),
        text=text,
        revision=1,
        ordinal=1,
        created_at=NOW,
        **fields,
    )


def commitment(kind: CommitmentKind, realm: Realm, **fields) -> StoredCommitment:
    values = {
        "id": "c",
        "tree_id": "t",
        "node_id": "n",
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


K, R, S = CommitmentKind, Realm, CommitmentState


def held(scope: str, world: str = "") -> dict[str, object]:
    return {"canonicalized_in": (("v", scope, world),)}


@pytest.mark.parametrize(
    ("kind", "realm", "fields", "state", "scope"),
    [
        (K.SAFETY_STOP, R.REHEARSAL, {}, S.IN_EFFECT, "everywhere"),
        (K.STATED_FACT, R.REHEARSAL, held("rehearsal"), S.NEVER_IN_EFFECT, ""),
        (K.AUTHORIZATION, R.REAL, {}, S.AWAITING_CONFIRMATION, ""),
        (K.AUTHORIZATION, R.REAL, {"confirmed_by": "u"}, S.IN_EFFECT, "real"),
        (K.AUTHORIZATION, R.WORLD, {}, S.NEVER_IN_EFFECT, ""),
        (K.RELATIONSHIP, R.REAL, {}, S.AWAITING_CANONICALIZATION, ""),
        (K.RELATIONSHIP, R.REAL, held("real_experience"), S.IN_EFFECT, "real"),
        # A world relation takes effect only through that world's canon.
        (K.RELATIONSHIP, R.WORLD, held("world_canon", "Oz"), S.AWAITING_CANONICALIZATION, ""),
        (K.RELATIONSHIP, R.WORLD, held("world_canon", "Arden"), S.IN_EFFECT, "world_canon:Arden"),
        (K.SAFETY_STOP, R.REAL, {"withdrawn_by": "u"}, S.WITHDRAWN, ""),
    ],
)  # fmt: skip
def test_the_effect_of_a_commitment_follows_its_kind_and_realm(kind, realm, fields, state, scope):
    effect = effectiveness(commitment(kind, realm, **fields))
    assert (effect.state, effect.scope) == (state, scope)


def test_an_action_is_refused_for_realm_main_line_ruling_and_stop_in_that_order():
    real = node("q")
    ruling = rules.Ruling("r", "t", real.id, "a", "send", True, "ok", NOW)

    def check(at: Node, version: str | None, given: rules.Ruling | None, action: str, stops: int):
        gate.expect_action_allowed(at, version, given, action, stops=stops, ruling_id="r")

    check(real, "v", ruling, "send", 0)
    with pytest.raises(gate.RealmNotReal):
        check(node("q", realm=Realm.REHEARSAL), None, None, "send", 1)
    with pytest.raises(gate.NotCanonicalized):
        check(real, None, ruling, "send", 1)
    with pytest.raises(gate.RulingRequired):
        check(real, "v", None, "send", 1)
    with pytest.raises(gate.RulingRequired):
        check(real, "v", ruling, "delete", 0)
    with pytest.raises(gate.SafetyStopInEffect):
        check(real, "v", ruling, "send", 1)


def path_of(depth: int) -> list[Node]:
    path = [node("root " * 20)]
    for i in range(depth):
        path.append(node(f"step {i} " * 20, path[-1]))
    return path


def test_assembly_is_deterministic_and_compresses_the_oldest_first():
    path = path_of(6)
    items = layers.candidates(path, ["rule"], [], [], 2)
    summaries = {
        f"node:{n.id}": Summary(f"node:{n.id}", 3, f"s{i}", 0) for i, n in enumerate(path[:4])
    }
    whole = sum(i.code_points for i in items)
    budget = Budget(whole - len(path[0].text) + 2)  # room once the root is summarized
    first = layers.assemble(items, summaries, budget)
    again = layers.assemble(layers.candidates(path, ["rule"], [], [], 2), summaries, budget)
    assert first == again
    inclusion = {i.node_id: i.inclusion for i in first.items if i.node_id}
    assert inclusion[path[0].id] is Inclusion.SUMMARY
    assert {inclusion[n.id] for n in path[1:]} == {Inclusion.VERBATIM}
    assert first.used <= budget.code_points
    assert first.digest == layers.digest(first.items)


def test_assembly_omits_by_layer_when_summaries_are_not_enough():
    path = path_of(4)
    items = layers.candidates(path, [], [], [], 2)
    mandatory = sum(i.code_points for i in items if i.mandatory)
    result = layers.assemble(items, {}, Budget(mandatory))
    older = [i for i in result.items if i.layer is Layer.OLDER_ANCESTOR]
    assert older and {i.inclusion for i in older} == {Inclusion.OMITTED}
    assert all(i.inclusion is Inclusion.VERBATIM for i in result.items if i.mandatory)
    with pytest.raises(layers.ContextOverBudget, match="current_node"):
        layers.assemble(items, {}, Budget(mandatory - 1))


def test_redaction_and_tombstones_keep_nothing_of_the_original():
    assert anchors.redact("Ask Bruno at b@x.org", ["bruno"]) == "Ask [redacted] at [redacted]"
    cited = {"node_id": "n", "snapshot": "secret", "authorization_id": "g", "note": "mine"}
    (stone,) = anchors.tombstone_revoked([cited], {"g"})
    assert stone["snapshot"] == "" and stone["status"] == "revoked" and stone["note"] == "mine"
    assert anchors.tombstone_revoked([cited], {"other"}) == (cited,)


def test_an_anchor_outside_its_image_names_the_coordinate():
    cited = node(
        "q",
        attachments=({"id": "p", "name": "p", "media_type": "image/png", "width": 10,
                      "height": 10},),
    )  # fmt: skip
    anchors.check_anchor(cited, {"attachment_id": "p", "image_region": {
        "x": 0, "y": 0, "width": 10, "height": 10}}, "a")  # fmt: skip
    with pytest.raises(InvalidInput) as caught:
        anchors.check_anchor(cited, {"attachment_id": "p", "image_region": {
            "x": 5, "y": 0, "width": 6, "height": 1}}, "a")  # fmt: skip
    assert caught.value.violations[0].field == "a.image_region.width"
