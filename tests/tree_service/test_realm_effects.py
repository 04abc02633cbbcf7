"""Realms and what leaves the conversation (T17, T18, T24): a real-world action only from a
canonicalized node of the real realm with an arbiter ruling on record, written to the effects
ledger; refusals write nothing; commitments stated in branches take only the effect their realm
and kind allow."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import (
    answer,
    ask,
    canonicalize,
    commit,
    confirmation,
    new_tree,
)


async def ruling(stub, node_id: str, action: str = "send the email", allowed: bool = True):
    response = await stub.RecordArbiterRuling(
        tree_pb2.RecordArbiterRulingRequest(
            idempotency_key=unique("k"),
            node_id=node_id,
            arbiter="arbiter-1",
            action=action,
            allowed=allowed,
            reason="the user asked for it in the real realm",
        )
    )
    return response.ruling


def act(node_id: str, ruling_id: str, action: str = "send the email", **fields):
    return tree_pb2.RecordRealActionRequest(
        idempotency_key=unique("k"),
        node_id=node_id,
        ruling_id=ruling_id,
        tool="mail",
        action=action,
        parameters_json=fields.pop("parameters_json", '{"to": "a@example.org"}'),
        recorded_by="runtime-1",
        **fields,
    )


async def refusal(call, request) -> tuple[grpc.StatusCode, str, list[str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(request)
    failure = describe(caught.value)
    return caught.value.code(), failure.reason, [v.field for v in failure.violations]


async def ledger(db, tree_id: str) -> int:
    return int(await db.fetchval("SELECT count(*) FROM effects WHERE tree_id = $1", tree_id))


async def branch(stub, realm: int = tree_pb2.REAL, world: str = ""):
    tree = await new_tree(stub)
    question = await ask(stub, tree.id, "Shall I write to Ana?", realm=realm, world=world)
    reply = await answer(stub, question.id, "Yes, write to her.")
    return tree, question, reply


async def confirmed_branch(stub):
    """A real branch the user canonicalized, so that its answer may act."""
    tree, question, reply = await branch(stub)
    await canonicalize(stub, tree.id, leaf=reply.id)
    return tree, question, reply


async def test_a_ruled_action_from_the_real_realm_is_written_to_the_ledger(tree_stub, db):
    tree, _, reply = await confirmed_branch(tree_stub)
    allowed = await ruling(tree_stub, reply.id)
    request = act(reply.id, allowed.id)
    done = await tree_stub.RecordRealAction(request)
    assert done.effect.kind == "real_world_action"
    assert done.effect.ruling_id == allowed.id and done.effect.node_id == reply.id
    assert done.effect.main_line_version_id
    assert done.consistency.lsn
    again = await tree_stub.RecordRealAction(request)  # a retry never acts twice
    assert again.effect == done.effect
    listed = await tree_stub.ListEffects(tree_pb2.ListEffectsRequest(tree_id=tree.id))
    assert [e.id for e in listed.effects] == [done.effect.id]
    assert await ledger(db, tree.id) == 1
    # A ruling allows one action: another request under it is refused, naming the effect.
    code, reason, _ = await refusal(tree_stub.RecordRealAction, act(reply.id, allowed.id))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ruling_required")
    assert await ledger(db, tree.id) == 1
    ruled_again = await ruling(tree_stub, reply.id)
    await tree_stub.RecordRealAction(act(reply.id, ruled_again.id))
    assert await ledger(db, tree.id) == 2


@pytest.mark.parametrize(("realm", "world"), [(tree_pb2.REHEARSAL, ""), (tree_pb2.WORLD, "Arden")])
async def test_an_action_from_a_world_or_rehearsal_is_refused_and_writes_nothing(
    tree_stub, db, realm, world
):
    tree, _, reply = await branch(tree_stub, realm, world)
    allowed = await ruling(tree_stub, reply.id)
    code, reason, _ = await refusal(tree_stub.RecordRealAction, act(reply.id, allowed.id))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "realm_not_real")
    assert await ledger(db, tree.id) == 0


async def test_an_un_canonicalized_action_is_refused_and_writes_nothing(tree_stub, db):
    tree, _, reply = await branch(tree_stub)
    allowed = await ruling(tree_stub, reply.id)
    code, reason, _ = await refusal(tree_stub.RecordRealAction, act(reply.id, allowed.id))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "not_canonicalized")
    # A rehearsal canonicalized is still no real main line.
    rehearsal_tree, _, rehearsed = await branch(tree_stub, tree_pb2.REHEARSAL)
    await canonicalize(tree_stub, rehearsal_tree.id, leaf=rehearsed.id)
    ruled = await ruling(tree_stub, rehearsed.id)
    code, reason, _ = await refusal(tree_stub.RecordRealAction, act(rehearsed.id, ruled.id))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "realm_not_real")
    assert await ledger(db, tree.id) == await ledger(db, rehearsal_tree.id) == 0


async def test_an_action_without_an_allowing_ruling_for_it_is_refused(tree_stub, db):
    tree, question, reply = await confirmed_branch(tree_stub)
    elsewhere = await ruling(tree_stub, question.id)  # a ruling on another node
    denied = await ruling(tree_stub, reply.id, allowed=False)
    other_action = await ruling(tree_stub, reply.id, action="delete the account")
    never_ruled = "00000000-0000-4000-8000-000000000000"
    for ruling_id in (elsewhere.id, denied.id, other_action.id, never_ruled):
        code, reason, _ = await refusal(tree_stub.RecordRealAction, act(reply.id, ruling_id))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ruling_required")
    assert await ledger(db, tree.id) == 0


async def test_bad_action_input_names_the_field_and_writes_nothing(tree_stub, db):
    tree, _, reply = await confirmed_branch(tree_stub)
    allowed = await ruling(tree_stub, reply.id)
    cases = [
        (act(reply.id, allowed.id, parameters_json="[1]"), ["parameters_json"]),
        (act(reply.id, allowed.id, parameters_json='{"x": NaN}'), ["parameters_json"]),
        (act(reply.id, "not-a-ruling"), ["ruling_id"]),
        (act("", allowed.id), ["node_id"]),
    ]
    for request, fields in cases:
        code, _, named = await refusal(tree_stub.RecordRealAction, request)
        assert (code, named) == (grpc.StatusCode.INVALID_ARGUMENT, fields)
    code, _, named = await refusal(
        tree_stub.RecordArbiterRuling,
        tree_pb2.RecordArbiterRulingRequest(
            idempotency_key=unique("k"), node_id=reply.id, arbiter="a", action="x"
        ),
    )
    assert (code, named) == (grpc.StatusCode.INVALID_ARGUMENT, ["reason"])
    assert await ledger(db, tree.id) == 0


async def test_a_safety_stop_in_a_rehearsal_branch_holds_every_real_action_at_once(tree_stub, db):
    tree, _, reply = await confirmed_branch(tree_stub)
    allowed = await ruling(tree_stub, reply.id)
    rehearsal = await ask(
        tree_stub, tree.id, "Play it through", parent_id=reply.id, realm=tree_pb2.REHEARSAL
    )
    stop = await commit(tree_stub, rehearsal.id, tree_pb2.SAFETY_STOP, "stop everything")
    assert stop.state == tree_pb2.IN_EFFECT and stop.effective_scope == "everywhere"
    code, reason, _ = await refusal(tree_stub.RecordRealAction, act(reply.id, allowed.id))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "safety_stop_in_effect")
    assert await ledger(db, tree.id) == 0
    lifted = await tree_stub.WithdrawCommitment(
        tree_pb2.WithdrawCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=stop.id, withdrawn_by="user-1"
        )
    )
    assert lifted.commitment.state == tree_pb2.WITHDRAWN
    await tree_stub.RecordRealAction(act(reply.id, allowed.id))
    assert await ledger(db, tree.id) == 1


async def test_a_real_authorization_needs_its_own_confirmation(tree_stub):
    _, _, reply = await branch(tree_stub)
    granted = await commit(tree_stub, reply.id, tree_pb2.AUTHORIZATION, "you may pay 10 EUR")
    assert granted.state == tree_pb2.AWAITING_CONFIRMATION
    confirmed = await tree_stub.ConfirmCommitment(
        tree_pb2.ConfirmCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=granted.id, confirmation=confirmation()
        )
    )
    assert confirmed.commitment.state == tree_pb2.IN_EFFECT
    assert confirmed.commitment.effective_scope == "real"
    assert confirmed.commitment.confirmed_by == "user-1"


@pytest.mark.parametrize(("realm", "world"), [(tree_pb2.REHEARSAL, ""), (tree_pb2.WORLD, "Arden")])
async def test_an_authorization_outside_the_real_realm_is_never_real(tree_stub, db, realm, world):
    _, _, reply = await branch(tree_stub, realm, world)
    granted = await commit(tree_stub, reply.id, tree_pb2.AUTHORIZATION, "you may pay")
    assert granted.state == tree_pb2.NEVER_IN_EFFECT
    code, reason, _ = await refusal(
        tree_stub.ConfirmCommitment,
        tree_pb2.ConfirmCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=granted.id, confirmation=confirmation()
        ),
    )
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "realm_not_real")
    assert (
        await db.fetchval("SELECT confirmed_by FROM commitments WHERE id = $1", granted.id) is None
    )


async def test_relationships_and_facts_take_effect_only_through_their_canonicalization(
    tree_stub,
):
    tree, _, reply = await branch(tree_stub)
    bond = await commit(tree_stub, reply.id, tree_pb2.RELATIONSHIP, "we are partners")
    fact = await commit(tree_stub, reply.id, tree_pb2.STATED_FACT, "Ana lives in Porto")
    assert {bond.state, fact.state} == {tree_pb2.AWAITING_CANONICALIZATION}
    version = await canonicalize(tree_stub, tree.id, leaf=reply.id)
    listed = await tree_stub.ListCommitments(tree_pb2.ListCommitmentsRequest(tree_id=tree.id))
    assert [
        (c.id, c.state, c.effective_scope, c.main_line_version_id) for c in listed.commitments
    ] == [
        (bond.id, tree_pb2.IN_EFFECT, "real", version.id),
        (fact.id, tree_pb2.IN_EFFECT, "real", version.id),
    ]


async def test_a_world_relation_affects_only_that_worlds_canon(tree_stub):
    tree, _, reply = await branch(tree_stub, tree_pb2.WORLD, "Arden")
    bond = await commit(tree_stub, reply.id, tree_pb2.RELATIONSHIP, "sworn siblings")
    assert bond.state == tree_pb2.AWAITING_CANONICALIZATION
    await canonicalize(tree_stub, tree.id, leaf=reply.id)
    listed = await tree_stub.ListCommitments(tree_pb2.ListCommitmentsRequest(tree_id=tree.id))
    assert listed.commitments[0].state == tree_pb2.IN_EFFECT
    assert listed.commitments[0].effective_scope == "world_canon:Arden"


async def test_rehearsal_statements_never_take_effect_even_canonicalized(tree_stub):
    tree, _, reply = await branch(tree_stub, tree_pb2.REHEARSAL)
    said = [
        await commit(tree_stub, reply.id, kind, "in character")
        for kind in (tree_pb2.RELATIONSHIP, tree_pb2.EXPERIENCE, tree_pb2.STATED_FACT)
    ]
    await canonicalize(tree_stub, tree.id, leaf=reply.id)
    listed = await tree_stub.ListCommitments(tree_pb2.ListCommitmentsRequest(tree_id=tree.id))
    assert [c.id for c in listed.commitments] == [c.id for c in said]
    assert {c.state for c in listed.commitments} == {tree_pb2.NEVER_IN_EFFECT}


async def test_a_commitment_needs_a_kind_and_a_known_node(tree_stub, db):
    before = await db.fetchval("SELECT count(*) FROM commitments")
    code, _, named = await refusal(
        tree_stub.RecordCommitment,
        tree_pb2.RecordCommitmentRequest(idempotency_key=unique("k"), node_id="x", stated_by="u"),
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert named == ["kind", "statement"]
    code, _, _ = await refusal(
        tree_stub.RecordCommitment,
        tree_pb2.RecordCommitmentRequest(
            idempotency_key=unique("k"),
            node_id="00000000-0000-4000-8000-000000000000",
            kind=tree_pb2.STATED_FACT,
            statement="s",
            stated_by="u",
        ),
    )
    assert code == grpc.StatusCode.NOT_FOUND
    assert await db.fetchval("SELECT count(*) FROM commitments") == before


async def test_a_cross_realm_citation_keeps_the_citing_nodes_realm(tree_stub):
    tree = await new_tree(tree_stub, default_realm=tree_pb2.REHEARSAL)
    real_tree = await new_tree(tree_stub)
    real_question = await ask(tree_stub, real_tree.id, "Real question")
    assert real_question.realm == tree_pb2.REAL
    citing = await ask(
        tree_stub,
        tree.id,
        "What if?",
        citations=[tree_pb2.Citation(node_id=real_question.id)],
    )
    assert citing.realm == tree_pb2.REHEARSAL  # inherited from the tree, not the cited node
    reply = await answer(tree_stub, citing.id, "then")
    switched = await ask(
        tree_stub, tree.id, "For real now", parent_id=reply.id, realm=tree_pb2.REAL
    )
    assert switched.realm == tree_pb2.REAL
    assert (await answer(tree_stub, switched.id, "ok")).realm == tree_pb2.REAL


async def test_no_action_lands_after_a_concurrent_safety_stop(tree_stub, db):
    tree, _, reply = await confirmed_branch(tree_stub)
    rulings = [await ruling(tree_stub, reply.id) for _ in range(20)]  # one per action

    async def try_act(allowed: tree_pb2.ArbiterRuling) -> str:
        try:
            await tree_stub.RecordRealAction(act(reply.id, allowed.id))
        except grpc.aio.AioRpcError as error:
            return describe(error).reason
        return "recorded"

    outcomes = await asyncio.gather(
        *(try_act(r) for r in rulings[:10]),
        commit(tree_stub, reply.id, tree_pb2.SAFETY_STOP, "stop"),
        *(try_act(r) for r in rulings[10:]),
    )
    stop = outcomes[10]
    assert isinstance(stop, tree_pb2.Commitment)
    assert set(outcomes[:10] + outcomes[11:]) <= {"recorded", "safety_stop_in_effect"}
    stopped_at = await db.fetchval("SELECT created_at FROM commitments WHERE id = $1", stop.id)
    latest = await db.fetchval("SELECT max(created_at) FROM effects WHERE tree_id = $1", tree.id)
    assert latest is None or latest < stopped_at
    recorded = outcomes[:10].count("recorded") + outcomes[11:].count("recorded")
    assert await ledger(db, tree.id) == recorded
