"""Canon → memory (T22, W5; seed 001 §6): a canonicalization records the candidates the caller
proposes, and accepting a long-term memory candidate writes a confirmed preference of the
version's scope, which the next assembled context holds as long-term memory."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import create_tree, unique
from tests.tree_service.helpers import answer, ask, canonicalize, new_tree
from tests.tree_service.reviews import scope_of


def memory(
    tier: str = "long_term", text: str = "", subject: str = ""
) -> tree_pb2.CandidateProposal:
    return tree_pb2.CandidateProposal(
        kind="memory_candidate",
        tier=tier,
        subject=subject or "sync server",
        text=text or f"The sync server runs on PostgreSQL {uuid.uuid4().hex}",
    )


def review(candidate_id: str, user: str = "user-1", reason: str = "") -> Any:
    return tree_pb2.ReviewCanonCandidateRequest(
        idempotency_key=unique("k"),
        candidate_id=candidate_id,
        expected_revision=1,
        reviewed_by=user,
        reason=reason,
    )


async def confirmed_path(stub, project: str, realm: int = tree_pb2.REAL, world: str = "", **kw):
    tree = (await create_tree(stub, project)).tree
    question = await ask(stub, tree.id, "Where does the sync server run?", realm=realm, world=world)
    reply = await answer(stub, question.id, "On PostgreSQL", realm=realm, world=world)
    version = await canonicalize(stub, tree.id, leaf=reply.id, **kw)
    return tree, reply, version


async def memory_items(stub, node_id: str) -> dict[str, str]:
    """The memory items of the node's next context that canon candidates became."""
    assembled = await stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=node_id, budget=100_000
        )
    )
    return {
        i.subject: i.text
        for i in assembled.items
        if i.layer == tree_pb2.LONG_TERM_MEMORY and i.subject.startswith("memory:mainline-memory-")
    }


async def test_an_accepted_memory_is_in_the_next_context_of_the_project(tree_stub, db):
    project = unique("memory")
    proposed = memory(text="The user keeps the sync server on PostgreSQL")
    _, reply, version = await confirmed_path(tree_stub, project, candidates=[proposed])
    candidate = version.candidates[0]
    assert (candidate.kind, candidate.detail, candidate.subject, candidate.text) == (
        "memory_candidate",
        "long_term",
        proposed.subject,
        proposed.text,
    )
    assert candidate.memory_id == ""
    assert await memory_items(tree_stub, reply.id) == {}  # pending: not memory yet

    accepted = (await tree_stub.AcceptCanonCandidate(review(candidate.id, reason="yes"))).candidate
    assert (accepted.status, accepted.reviewed_by, accepted.review_reason) == (
        "accepted",
        "user-1",
        "yes",
    )
    assert accepted.memory_id == f"mainline-memory-{candidate.id}"
    row = await db.fetchrow(
        "SELECT scope_key, subject, text, confirmed_by, about FROM preferences WHERE id = $1",
        accepted.memory_id,
    )
    assert (row["scope_key"], row["subject"], row["text"], row["confirmed_by"]) == (
        f"projects:{project}",
        proposed.subject,
        proposed.text,
        "user-1",
    )
    assert f"mainline-version-{version.id}" in row["about"]  # rests on the version's decision

    # The next context of any tree of the project holds it as long-term memory.
    other = (await create_tree(tree_stub, project)).tree
    elsewhere = await ask(tree_stub, other.id, "Next step?")
    expected = {f"memory:{accepted.memory_id}": f"{proposed.subject}: {proposed.text}"}
    assert await memory_items(tree_stub, elsewhere.id) == expected
    assert await memory_items(tree_stub, reply.id) == expected
    # ... and no tree of another project.
    stranger = (await create_tree(tree_stub, unique("other"))).tree
    assert await memory_items(tree_stub, (await ask(tree_stub, stranger.id)).id) == {}

    listed = await tree_stub.ListCanonCandidates(
        tree_pb2.ListCanonCandidatesRequest(version_id=version.id, include_reviewed=True)
    )
    assert [c.memory_id for c in listed.candidates] == [accepted.memory_id]


@pytest.mark.usefixtures("global_preferences_taken_back")
async def test_a_tree_without_a_project_remembers_globally(tree_stub, db):
    tree = await new_tree(tree_stub)
    reply = await answer(tree_stub, (await ask(tree_stub, tree.id)).id)
    version = await canonicalize(tree_stub, tree.id, leaf=reply.id, candidates=[memory("core")])
    accepted = (await tree_stub.AcceptCanonCandidate(review(version.candidates[0].id))).candidate
    scope = await db.fetchval("SELECT scope_key FROM preferences WHERE id = $1", accepted.memory_id)
    assert scope == "global"


async def test_short_term_memory_and_other_kinds_record_only_their_review(tree_stub, db):
    project = unique("memory")
    proposals = [
        memory("short_term"),
        tree_pb2.CandidateProposal(kind="heart_trace", text="relief"),
        tree_pb2.CandidateProposal(kind="real_record", text="decided"),
    ]
    _, reply, version = await confirmed_path(tree_stub, project, candidates=proposals)
    before = await db.fetchval("SELECT count(*) FROM preferences")
    for candidate in version.candidates:
        accepted = (await tree_stub.AcceptCanonCandidate(review(candidate.id))).candidate
        assert (accepted.status, accepted.memory_id) == ("accepted", "")
    assert await db.fetchval("SELECT count(*) FROM preferences") == before
    assert await memory_items(tree_stub, reply.id) == {}


async def test_a_rejected_memory_records_who_and_why_and_is_never_remembered(tree_stub, db):
    project = unique("memory")
    _, reply, version = await confirmed_path(tree_stub, project, candidates=[memory()])
    candidate = version.candidates[0]
    rejected = (
        await tree_stub.RejectCanonCandidate(review(candidate.id, "user-2", "not true anymore"))
    ).candidate
    assert (rejected.status, rejected.reviewed_by, rejected.review_reason) == (
        "rejected",
        "user-2",
        "not true anymore",
    )
    assert rejected.memory_id == "" and rejected.reviewed_at
    assert (
        await db.fetchval(
            "SELECT count(*) FROM preferences WHERE id = $1", f"mainline-memory-{candidate.id}"
        )
        == 0
    )
    assert await memory_items(tree_stub, reply.id) == {}
    with pytest.raises(grpc.aio.AioRpcError) as caught:  # a decided candidate stays decided
        await tree_stub.AcceptCanonCandidate(
            tree_pb2.ReviewCanonCandidateRequest(
                idempotency_key=unique("k"),
                candidate_id=candidate.id,
                expected_revision=2,
                reviewed_by="user-1",
            )
        )
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert await memory_items(tree_stub, reply.id) == {}


async def test_a_world_memory_is_remembered_in_that_worlds_canon_not_the_project(tree_stub, db):
    project = unique("memory")
    world_memory = tree_pb2.CandidateProposal(
        kind="world_memory", subject="Arden's king", text="The king of Arden is old"
    )
    _, reply, version = await confirmed_path(
        tree_stub, project, tree_pb2.WORLD, "Arden", candidates=[world_memory]
    )
    accepted = (await tree_stub.AcceptCanonCandidate(review(version.candidates[0].id))).candidate
    scope = await db.fetchval("SELECT scope_key FROM preferences WHERE id = $1", accepted.memory_id)
    assert scope == f"projects:{version.story_graph_scope.projects.project_ids[0]}"
    assert "world-canon" in scope and project in scope
    # The next context in that world holds it; a real context of the project never does, nor
    # one of another world.
    expected = {f"memory:{accepted.memory_id}": "Arden's king: The king of Arden is old"}
    assert await memory_items(tree_stub, reply.id) == expected
    real_tree = (await create_tree(tree_stub, project)).tree
    assert await memory_items(tree_stub, (await ask(tree_stub, real_tree.id)).id) == {}
    elsewhere = await ask(tree_stub, real_tree.id, realm=tree_pb2.WORLD, world="Brest")
    assert await memory_items(tree_stub, elsewhere.id) == {}


async def test_two_racing_acceptances_write_one_memory(tree_stub, db):
    project = unique("memory")
    _, _, version = await confirmed_path(tree_stub, project, candidates=[memory()])
    candidate_id = version.candidates[0].id
    outcomes = await asyncio.gather(
        *(tree_stub.AcceptCanonCandidate(review(candidate_id)) for _ in range(4)),
        return_exceptions=True,
    )
    won = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(won) == 1
    for lost in outcomes:
        if isinstance(lost, grpc.aio.AioRpcError):
            assert lost.code() in {
                grpc.StatusCode.ABORTED,
                grpc.StatusCode.FAILED_PRECONDITION,
            }
    assert (
        await db.fetchval(
            "SELECT count(*) FROM preferences WHERE id = $1", f"mainline-memory-{candidate_id}"
        )
        == 1
    )


async def test_a_replayed_acceptance_answers_the_same_memory(tree_stub):
    project = unique("memory")
    _, _, version = await confirmed_path(tree_stub, project, candidates=[memory()])
    request = review(version.candidates[0].id)
    first = await tree_stub.AcceptCanonCandidate(request)
    again = await tree_stub.AcceptCanonCandidate(request)
    assert again.candidate == first.candidate
    assert again.candidate.text == version.candidates[0].text


async def test_no_one_may_write_a_memory_id_through_set_preference(tree_stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.SetPreference(
            tree_pb2.SetPreferenceRequest(
                idempotency_key=unique("k"),
                preference_id=f"mainline-memory-{uuid.uuid4()}",
                subject="s",
                text="t",
                confirmed_by="user-1",
                scope=scope_of(unique("memory")),
            )
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "preference_id" in [v.field for v in failure.violations]
