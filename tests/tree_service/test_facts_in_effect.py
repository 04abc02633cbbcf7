"""Facts in effect (T18, T24, "stop means stop"): a fact, relationship, experience or confirmed
real authorization enters a context's memory and the story graph as holding only once it is in
effect, and only where it took effect — a real one in its project's real contexts, a world's in
that world's contexts, a rehearsal's nowhere; a withdrawn one no longer; a purge forgets every
copy."""

from __future__ import annotations

import json
import uuid
from typing import Any

from mirrortree.scopes import ScopeValue
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.tree_service.helpers import answer, ask, canonicalize, commit, confirmation, withdraw
from tests.tree_service.purging import (
    ALL,
    code_word,
    footprint,
    preview,
    purge_request,
    world,
)
from tests.tree_service.reviews import scope_of


def words(what: str) -> str:
    """A statement no other test says."""
    return f"{what} ({uuid.uuid4().hex})"


async def context(stub, node_id: str) -> tree_pb2.AssembleContextResponse:
    response: tree_pb2.AssembleContextResponse = await stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=node_id, budget=100_000
        )
    )
    return response


async def facts(stub, node_id: str) -> dict[str, tree_pb2.AssembledItem]:
    """The fact items of a context newly assembled for the node, by subject, in reading
    order; every item of the memory layer (and no other layer) holds them."""
    assembled = await context(stub, node_id)
    found = {i.subject: i for i in assembled.items if i.subject.startswith("fact:")}
    assert {i.layer for i in found.values()} <= {tree_pb2.LONG_TERM_MEMORY}
    return found


async def held(stub, node_id: str, *statements: str) -> list[bool]:
    """For each statement: whether any item of a context newly assembled for the node holds
    it (whatever its subject)."""
    text = "\n".join(i.text for i in (await context(stub, node_id)).items)
    return [s in text for s in statements]


async def test_a_real_fact_holds_in_its_projects_real_contexts_from_canonicalization_to_withdrawal(
    tree_stub,
):
    project = unique("facts")
    tree = (await create_tree(tree_stub, project)).tree
    question = await ask(tree_stub, tree.id, "Where does Ana live?")
    reply = await answer(tree_stub, question.id, "In Porto, she said.")
    fact = await commit(tree_stub, reply.id, tree_pb2.STATED_FACT, words("Ana lives in Porto"))
    bond = await commit(tree_stub, reply.id, tree_pb2.RELATIONSHIP, words("Ana is my sister"))
    elsewhere = (await create_tree(tree_stub, project)).tree
    sibling_tree = await ask(tree_stub, elsewhere.id, "Visit her?")
    other_project = await ask(tree_stub, (await create_tree(tree_stub, unique("other"))).tree.id)
    no_project = await ask(tree_stub, (await create_tree(tree_stub)).tree.id)
    in_world = await ask(
        tree_stub, tree.id, "And in the story?", parent_id=reply.id, realm=tree_pb2.WORLD,
        world="Arden",
    )  # fmt: skip
    rehearsed = await ask(
        tree_stub, tree.id, "Play it", parent_id=reply.id, realm=tree_pb2.REHEARSAL
    )
    said = (fact.statement, bond.statement)

    # Awaiting canonicalization: in no context, not even the one of the node it was stated at.
    assert await held(tree_stub, reply.id, *said) == [False, False]
    assert await held(tree_stub, sibling_tree.id, *said) == [False, False]

    await canonicalize(tree_stub, tree.id, leaf=reply.id)

    for node_id in (reply.id, sibling_tree.id):  # its tree, and another tree of the project
        found = await facts(tree_stub, node_id)
        assert list(found) == [f"fact:{fact.id}", f"fact:{bond.id}"]  # in the order stated
        item = found[f"fact:{fact.id}"]
        assert item.text == f"stated fact in effect in the real realm: {fact.statement}"
        assert (item.inclusion, item.node_id, item.mandatory) == (
            tree_pb2.INCLUDED_VERBATIM,
            reply.id,
            False,
        )
        assert found[f"fact:{bond.id}"].text == (
            f"relationship in effect in the real realm: {bond.statement}"
        )
    # Never in another project's contexts, a tree without a project, a world or a rehearsal.
    for node_id in (other_project.id, no_project.id, in_world.id, rehearsed.id):
        assert await held(tree_stub, node_id, *said) == [False, False], node_id

    await withdraw(tree_stub, fact.id)

    assert list(await facts(tree_stub, sibling_tree.id)) == [f"fact:{bond.id}"]
    assert await held(tree_stub, reply.id, *said) == [False, True]


async def test_a_fact_of_a_tree_without_a_project_holds_in_that_tree_alone(tree_stub):
    tree = (await create_tree(tree_stub)).tree
    question = await ask(tree_stub, tree.id, "What did we learn?")
    reply = await answer(tree_stub, question.id, "That the bridge was closed.")
    lived = await commit(tree_stub, reply.id, tree_pb2.EXPERIENCE, words("The bridge was closed"))
    await canonicalize(tree_stub, tree.id, leaf=reply.id)
    later = await ask(tree_stub, tree.id, "So?", parent_id=reply.id)

    found = await facts(tree_stub, later.id)
    assert found[f"fact:{lived.id}"].text == (
        f"experience in effect in the real realm: {lived.statement}"
    )
    stranger = await ask(tree_stub, (await create_tree(tree_stub)).tree.id, "Hello?")
    assert await held(tree_stub, stranger.id, lived.statement) == [False]


async def test_a_world_fact_holds_only_in_that_worlds_contexts_once_its_canon_holds_it(
    tree_stub,
):
    project = unique("worlds")
    arden: dict[str, Any] = {"realm": tree_pb2.WORLD, "world": "Arden"}
    tree = (await create_tree(tree_stub, project)).tree
    question = await ask(tree_stub, tree.id, "Who is Rosalind to Celia?", **arden)
    reply = await answer(tree_stub, question.id, "Sworn sisters.")
    bond = await commit(tree_stub, reply.id, tree_pb2.RELATIONSHIP, words("Rosalind and Celia"))
    same_world = await ask(tree_stub, (await create_tree(tree_stub, project)).tree.id, **arden)
    other_world = await ask(
        tree_stub, (await create_tree(tree_stub, project)).tree.id, realm=tree_pb2.WORLD,
        world="Oz",
    )  # fmt: skip
    real = await ask(tree_stub, (await create_tree(tree_stub, project)).tree.id, "Real life?")

    assert await held(tree_stub, same_world.id, bond.statement) == [False]
    # A real canonicalization never holds a world's node, so only its world's canon does.
    await canonicalize(tree_stub, tree.id, leaf=reply.id)

    for node_id in (reply.id, same_world.id):
        found = await facts(tree_stub, node_id)
        assert found[f"fact:{bond.id}"].text == (
            f"relationship in effect in world 'Arden': {bond.statement}"
        )
    for node_id in (other_world.id, real.id):
        assert await held(tree_stub, node_id, bond.statement) == [False], node_id


async def test_rehearsal_statements_never_hold_even_after_their_rehearsal_canonicalization(
    tree_stub,
):
    project = unique("rehearsal")
    real_tree = (await create_tree(tree_stub, project)).tree
    real_question = await ask(tree_stub, real_tree.id, "Is the talk on Monday?")
    real_reply = await answer(tree_stub, real_question.id, "Yes.")
    real = await commit(tree_stub, real_reply.id, tree_pb2.STATED_FACT, words("The talk is Monday"))
    await canonicalize(tree_stub, real_tree.id, leaf=real_reply.id)
    stage = (await create_tree(tree_stub, project)).tree
    rehearsal = await ask(tree_stub, stage.id, "Rehearse the talk", realm=tree_pb2.REHEARSAL)
    played = await answer(tree_stub, rehearsal.id, "In character: I won the prize.")
    said = [
        (await commit(tree_stub, played.id, kind, words(f"in character {kind}"))).statement
        for kind in (tree_pb2.STATED_FACT, tree_pb2.RELATIONSHIP, tree_pb2.EXPERIENCE)
    ]
    await canonicalize(tree_stub, stage.id, leaf=played.id)  # a rehearsal record
    listed = await tree_stub.ListCommitments(tree_pb2.ListCommitmentsRequest(tree_id=stage.id))
    assert {c.state for c in listed.commitments} == {tree_pb2.NEVER_IN_EFFECT}

    later = await ask(tree_stub, real_tree.id, "Anything else?", parent_id=real_reply.id)
    assert list(await facts(tree_stub, later.id)) == [f"fact:{real.id}"]
    assert await held(tree_stub, later.id, *said) == [False, False, False]
    # The rehearsal's own contexts hold no fact at all: nothing takes effect there.
    assert await facts(tree_stub, played.id) == {}
    assert await held(tree_stub, played.id, *said, real.statement) == [False] * 4


async def test_an_authorization_holds_only_once_the_user_confirmed_it(tree_stub):
    project = unique("authorized")
    tree = (await create_tree(tree_stub, project)).tree
    question = await ask(tree_stub, tree.id, "May the agent pay the invoice?")
    reply = await answer(tree_stub, question.id, "Up to 10 EUR.")
    granted = await commit(tree_stub, reply.id, tree_pb2.AUTHORIZATION, words("pay up to 10 EUR"))
    await canonicalize(tree_stub, tree.id, leaf=reply.id)  # no canonicalization confirms it
    later = await ask(tree_stub, tree.id, "Pay it?", parent_id=reply.id)

    assert await held(tree_stub, later.id, granted.statement) == [False]

    await tree_stub.ConfirmCommitment(
        tree_pb2.ConfirmCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=granted.id, confirmation=confirmation()
        )
    )

    found = await facts(tree_stub, later.id)
    assert found[f"fact:{granted.id}"].text == (
        f"authorization in effect in the real realm: {granted.statement}"
    )


# ---- the story graph ------------------------------------------------------------------------


async def leaf_facts(db, version_id: str) -> dict[str, Any]:
    rows = await db.fetch(
        "SELECT object_id, title, body, kind, confirmation_state, scope_key, "
        "details::text AS details FROM graph_objects "
        "WHERE result_id = $1 AND object_type = 'leaf_fact'",
        f"mainline-{version_id}",
    )
    return {r["object_id"]: r for r in rows}


async def found_by(graph_stub, query: str, scope: common_pb2.Scope, written: Any) -> set[str]:
    response = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query=query,
            scope=scope,
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    return {h.ref.id for h in response.hits if h.ref.type == common_pb2.LEAF_FACT}


async def test_a_canonicalization_records_the_facts_it_put_in_effect_and_no_other(
    tree_stub, graph_stub, db
):
    project = unique("graph")
    tree = (await create_tree(tree_stub, project, title="Launch")).tree
    question = await ask(tree_stub, tree.id, "When is the launch?")
    reply = await answer(tree_stub, question.id, "Friday.")
    fact = await commit(tree_stub, reply.id, tree_pb2.STATED_FACT, words("The launch is Friday"))
    lived = await commit(tree_stub, question.id, tree_pb2.EXPERIENCE, words("We missed Tuesday"))
    taken_back = await commit(tree_stub, reply.id, tree_pb2.RELATIONSHIP, words("Bo leads it"))
    await withdraw(tree_stub, taken_back.id)
    awaiting = await commit(tree_stub, reply.id, tree_pb2.AUTHORIZATION, words("may announce"))
    confirmed = await commit(tree_stub, reply.id, tree_pb2.AUTHORIZATION, words("may spend"))
    await tree_stub.ConfirmCommitment(
        tree_pb2.ConfirmCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=confirmed.id, confirmation=confirmation()
        )
    )
    first = await tree_stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            leaf_node_id=reply.id,
            confirmation=confirmation(),
        )
    )
    version = first.version.id

    recorded = await leaf_facts(db, version)
    assert set(recorded) == {
        f"mainline-{version}-fact-{fact.id}",
        f"mainline-{version}-fact-{lived.id}",
    }
    leaf = recorded[f"mainline-{version}-fact-{fact.id}"]
    assert (leaf["body"], leaf["kind"], leaf["confirmation_state"]) == (
        fact.statement,
        "stated_fact",
        "confirmed",
    )
    assert fact.statement not in leaf["title"]  # the words are the body's alone
    assert leaf["scope_key"] == ScopeValue.of_projects([project]).key
    details = json.loads(leaf["details"])
    assert details["about"] == [{"type": "event", "id": f"mainline-version-{version}"}]
    assert details["source_reference_ids"] == [f"mainline-{version}-{reply.id}"]
    assert (details["commitment_id"], details["effective_scope"]) == (fact.id, "real")
    # Read as the graph serves it: the facts put in effect are found, none of the others.
    assert await found_by(graph_stub, fact.statement, scope_of(project), first) == {
        f"mainline-{version}-fact-{fact.id}"
    }
    for statement in (taken_back.statement, awaiting.statement, confirmed.statement):
        assert await found_by(graph_stub, statement, scope_of(project), first) == set()

    # A later version holding the same nodes records only what it put in effect itself.
    follow_up = await ask(tree_stub, tree.id, "Who presents?", parent_id=reply.id)
    presenter = await answer(tree_stub, follow_up.id, "Ana.")
    later_fact = await commit(tree_stub, presenter.id, tree_pb2.STATED_FACT, words("Ana presents"))
    second = await canonicalize(tree_stub, tree.id, presenter.id, expected=1)
    assert set(await leaf_facts(db, second.id)) == {f"mainline-{second.id}-fact-{later_fact.id}"}


async def test_world_facts_are_recorded_in_the_worlds_canon_and_rehearsals_never(
    tree_stub, graph_stub, db
):
    project = unique("canon-facts")
    story = (await create_tree(tree_stub, project)).tree
    question = await ask(
        tree_stub, story.id, "Who rules Arden?", realm=tree_pb2.WORLD, world="Arden"
    )
    reply = await answer(tree_stub, question.id, "Duke Frederick.")
    ruler = await commit(tree_stub, reply.id, tree_pb2.STATED_FACT, words("Frederick rules"))
    world_canon = await tree_stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=story.id,
            leaf_node_id=reply.id,
            confirmation=confirmation(),
        )
    )
    canon = world_canon.version.story_graph_scope
    assert await found_by(graph_stub, ruler.statement, canon, world_canon) == {
        f"mainline-{world_canon.version.id}-fact-{ruler.id}"
    }
    assert await found_by(graph_stub, ruler.statement, scope_of(project), world_canon) == set()

    stage = (await create_tree(tree_stub, project)).tree
    rehearsal = await ask(tree_stub, stage.id, "Rehearse", realm=tree_pb2.REHEARSAL)
    played = await answer(tree_stub, rehearsal.id, "In character.")
    line = await commit(tree_stub, played.id, tree_pb2.STATED_FACT, words("I am the duke"))
    record = await tree_stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=stage.id,
            leaf_node_id=played.id,
            confirmation=confirmation(),
        )
    )
    assert await leaf_facts(db, record.version.id) == {}
    for scope in (record.version.story_graph_scope, scope_of(project)):
        assert await found_by(graph_stub, line.statement, scope, record) == set()


# ---- forgetting -------------------------------------------------------------------------------


async def test_a_purge_forgets_every_copy_of_a_fact_the_branch_put_in_effect(tree_stub, db):
    w = await world(tree_stub)
    word = code_word(w.branch_id)
    # Before: the statement, its story-graph fact and the recorded contexts' memory hold it.
    assert await footprint(db, word) == [
        "commitments.statement",
        "context_versions.items",
        "graph_objects.body",
        "graph_objects.body_folded",
    ]

    shown = await preview(tree_stub, w.branch_id)
    await tree_stub.Purge(purge_request(w, shown.preview_token, choice=ALL))

    assert await footprint(db, word) == []
    assert await footprint(db, w.secret) == []
    # And no context assembled afterwards brings it back.
    assert await held(tree_stub, w.citing_id, word) == [False]
