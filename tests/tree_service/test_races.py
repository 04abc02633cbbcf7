"""Concurrent writers on one tree, on real concurrent connections: zero lost updates, every
loser gets ABORTED with the current revision, and the final state is consistent (T21).

Each race is forced: a connection of the test's own holds a lock the writers need until all
of them wait for it, so they provably overlap in the database (tests.tree_service.racing)."""

from __future__ import annotations

import asyncio
import uuid

import grpc

from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, canonicalize, new_tree
from tests.tree_service.racing import LOCK_NODE, LOCK_TREE, held
from tree_service.ingestion.queries import LOCK_SCOPE_REVISIONS as LOCK_SCOPE

WRITERS = 8


async def outcomes(calls):
    results = await asyncio.gather(*calls, return_exceptions=True)
    wins = [r for r in results if not isinstance(r, BaseException)]
    losses = [r for r in results if isinstance(r, BaseException)]
    for loss in losses:
        assert isinstance(loss, grpc.aio.AioRpcError), loss
    return wins, [describe(loss) for loss in losses]


async def test_concurrent_adoptions_of_one_revision_have_exactly_one_winner(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    answers = [await answer(tree_stub, question.id, f"a{i}") for i in range(WRITERS)]
    # Every adoption has read the question at the same revision before any of them updates it.
    async with held(cluster.primary_dsn, LOCK_NODE, uuid.UUID(question.id)) as gate:
        writers = [
            asyncio.ensure_future(adopt(tree_stub, question.id, a.id, question.revision))
            for a in answers
        ]
        await gate.until_waiting(writers)
    wins, losses = await outcomes(writers)
    assert len(wins) == 1 and len(losses) == WRITERS - 1
    assert {f.code for f in losses} == {grpc.StatusCode.ABORTED}
    assert {f.metadata["current_revision"] for f in losses} == {str(question.revision + 1)}
    final = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    assert final.adopted_answer_id == wins[0].adopted_answer_id
    assert final.revision == question.revision + 1


async def test_adopters_that_retry_on_abort_all_land_in_turn(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    answers = [await answer(tree_stub, question.id, f"a{i}") for i in range(WRITERS)]
    aborted: list[str] = []

    async def adopt_until_done(answer_id: str) -> int:
        expected = question.revision
        while True:
            try:
                adopted = await adopt(tree_stub, question.id, answer_id, expected)
                return int(adopted.revision)
            except grpc.aio.AioRpcError as error:
                failure = describe(error)
                assert failure.code == grpc.StatusCode.ABORTED
                aborted.append(answer_id)
                expected = int(failure.metadata["current_revision"])

    async with held(cluster.primary_dsn, LOCK_NODE, uuid.UUID(question.id)) as gate:
        writers = [asyncio.ensure_future(adopt_until_done(a.id)) for a in answers]
        await gate.until_waiting(writers)
    revisions = await asyncio.gather(*writers)
    # Every write landed exactly once, each on its own revision: no update was lost.
    assert sorted(revisions) == list(range(question.revision + 1, question.revision + 1 + WRITERS))
    # All first tries expected one revision, so all but one of them were turned away.
    assert len(set(aborted)) == WRITERS - 1


async def test_concurrent_canonicalizations_number_versions_without_gaps(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    leaves = [await answer(tree_stub, question.id, f"a{i}") for i in range(WRITERS)]
    # A main line's version rows check their tree, so holding the tree's row holds every
    # canonicalization once it has claimed (or waits behind the claim of) its version.
    async with held(cluster.primary_dsn, LOCK_TREE, uuid.UUID(tree.id)) as gate:
        writers = [
            asyncio.ensure_future(canonicalize(tree_stub, tree.id, leaf=a.id)) for a in leaves
        ]
        await gate.until_waiting(writers)
    wins, losses = await outcomes(writers)
    assert len(wins) == 1
    assert {(f.code, f.metadata["current_revision"]) for f in losses} == {
        (grpc.StatusCode.ABORTED, "1")
    }
    async with held(cluster.primary_dsn, LOCK_TREE, uuid.UUID(tree.id)) as gate:
        writers = [
            asyncio.ensure_future(canonicalize(tree_stub, tree.id, leaf=a.id, expected=1))
            for a in leaves
        ]
        await gate.until_waiting(writers)
    second_round, _ = await outcomes(writers)
    assert [v.version for v in second_round] == [2]
    listed = await tree_stub.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id)
    )
    assert [v.version for v in listed.versions] == [2, 1]
    assert listed.versions[0].replaces_version_id == listed.versions[1].id


async def test_concurrent_edits_of_one_question_get_distinct_versions(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id, "v1")
    # Held at the tree's row, every edit has read the question (and, unless the lineage lock
    # orders them, numbered its version) before any of them appends.
    async with held(cluster.primary_dsn, LOCK_TREE, uuid.UUID(tree.id)) as gate:
        writers = [
            asyncio.ensure_future(
                tree_stub.EditQuestion(
                    tree_pb2.EditQuestionRequest(
                        idempotency_key=f"edit-{question.id}-{i}",
                        question_id=question.id,
                        expected_revision=question.revision,
                        text=f"edit {i}",
                    )
                )
            )
            for i in range(WRITERS)
        ]
        await gate.until_waiting(writers)
    edits = await asyncio.gather(*writers)
    assert sorted(e.node.version for e in edits) == list(range(2, 2 + WRITERS))


async def test_concurrent_results_recording_one_new_reference_id_keep_one_content(
    cluster, tree_stub
):
    """Results that record the same new source reference id with different content, all
    started before any commits: exactly one stores it, the others see it and are refused."""
    project = unique("refs")
    # Hold the scope's ingestion lock until every writer has read what it could before it.
    async with held(cluster.primary_dsn, LOCK_SCOPE, f"projects:{project}") as gate:
        writers = [
            asyncio.ensure_future(
                tree_stub.RecordReview(
                    tree_pb2.RecordReviewRequest(
                        idempotency_key=unique("k"),
                        result_id=f"{project}-{i}",
                        scope=project_scope([project]),
                        phase="daily",
                        review_generated_at="2026-10-02T01:00:00Z",
                        source_references=[
                            tree_pb2.SourceReferenceInput(
                                id="s", source_type="document", source_id="d", fragment=f"v{i}"
                            )
                        ],
                    )
                )
            )
            for i in range(WRITERS)
        ]
        await gate.until_waiting(writers)
    wins, losses = await outcomes(writers)
    assert len(wins) == 1
    assert {f.code for f in losses} == {grpc.StatusCode.INVALID_ARGUMENT}
    assert {v.field for f in losses for v in f.violations} == {"source_references[0].id"}
    assert all(f"earlier result {wins[0].result_id!r}" in f.message for f in losses)
