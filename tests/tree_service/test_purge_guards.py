"""T16: nothing builds on a purged node, and a purge is safe against concurrent purges,
appends and streaming answers."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc

from mirrortree.rpcstatus import describe
from mirrortree.v1 import costs_pb2, tasks_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.tree_service import tasking
from tests.tree_service.helpers import answer, ask
from tests.tree_service.purging import (
    as_answered,
    failure_of,
    footprint,
    preview,
    purge_request,
    set_state,
    world,
)
from tests.tree_service.test_buds import Stream, chunk, open_message


async def test_nothing_builds_on_a_purged_node(tree_stub):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    await tree_stub.Purge(purge_request(w, shown.preview_token))
    other = (await create_tree(tree_stub, w.project)).tree
    attempts = {
        "answer": answer(tree_stub, w.branch_id, "late answer"),
        "follow-up": ask(tree_stub, w.tree_id, "late question", parent_id=w.branch_answer_id),
        "citation": ask(
            tree_stub, other.id, "cite", citations=[tree_pb2.Citation(node_id=w.branch_id)]
        ),
        "merge": tree_stub.MergeByReference(
            tree_pb2.MergeByReferenceRequest(
                idempotency_key=unique("k"),
                tree_id=other.id,
                text="merge",
                source_node_ids=[w.branch_id],
                merged_by="user-1",
            )
        ),
        "transplant": tree_stub.TransplantBranch(
            tree_pb2.TransplantBranchRequest(
                idempotency_key=unique("k"), node_id=w.branch_id, title="t", transplanted_by="u"
            )
        ),
        "canonicalize": tree_stub.Canonicalize(
            tree_pb2.CanonicalizeRequest(
                idempotency_key=unique("k"),
                tree_id=w.tree_id,
                leaf_node_id=w.branch_answer_id,
                confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="user-1"),
                expected_version=w.version.version,
            )
        ),
    }
    for what, call in attempts.items():
        failure = await failure_of(call)
        assert failure.code == grpc.StatusCode.FAILED_PRECONDITION, what
        assert "was purged" in failure.message, what


async def test_concurrent_purges_of_one_preview_make_one_purge(tree_stub, db):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    done = await asyncio.gather(
        *(tree_stub.Purge(purge_request(w, shown.preview_token)) for _ in range(4))
    )
    assert len({d.tombstone.purge_id for d in done}) == 1
    assert all(d.impact == as_answered(shown.impact) for d in done)
    count = await db.fetchval(
        "SELECT count(*) FROM purges WHERE branch_id = $1", uuid.UUID(w.branch_id)
    )
    assert count == 1


async def test_a_purge_racing_an_append_leaves_exactly_one_of_them(tree_stub, db):
    for _ in range(3):
        w = await world(tree_stub)
        shown = await preview(tree_stub, w.branch_id)
        outcomes: tuple[Any, Any] = await asyncio.gather(
            tree_stub.Purge(purge_request(w, shown.preview_token)),
            ask(tree_stub, w.tree_id, "racing", parent_id=w.branch_answer_id),
            return_exceptions=True,
        )
        purge, append = outcomes
        if isinstance(purge, grpc.aio.AioRpcError):
            assert describe(purge).reason == "purge_preview_stale"
            assert not isinstance(append, BaseException)
        else:
            assert isinstance(append, grpc.aio.AioRpcError)
            assert describe(append).code == grpc.StatusCode.FAILED_PRECONDITION
            texts = await db.fetch(
                "SELECT text FROM nodes WHERE parent_id = $1", uuid.UUID(w.branch_answer_id)
            )
            assert texts == []


async def test_a_branch_with_a_streaming_answer_is_not_purged(tree_stub):
    w = await world(tree_stub)
    stream = Stream(tree_stub)
    opened = (await stream.send(open_message(w.branch_id))).opened
    await stream.send(chunk(1, "still talking"))
    failure = await failure_of(preview(tree_stub, w.branch_id))
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert f"answer {opened.id}" in failure.message and "still streams" in failure.message
    await stream.send(
        tree_pb2.StreamAnswerRequest(complete=tree_pb2.StreamAnswerRequest.Complete())
    )
    await stream.finish()
    shown = await preview(tree_stub, w.branch_id)
    assert opened.id in {n.node_id for n in shown.impact.nodes}


async def test_a_comparison_in_the_branch_loses_its_criteria_and_verdict(tree_stub, db):
    w = await world(tree_stub, archive=False)
    second = await answer(tree_stub, w.branch_id, "Another answer")
    compared = await tree_stub.CompareCandidates(
        costs_pb2.CompareCandidatesRequest(
            idempotency_key=unique("k"),
            question_id=w.branch_id,
            answer_ids=[w.branch_answer_id, second.id],
            criteria=[f"closest to {w.secret}"],
            verdict=f"The first, for {w.secret}",
            conditions=costs_pb2.RunConditionsRecord(model_strategy="provider/judge"),
        )
    )
    await set_state(tree_stub, w.branch_id, tree_pb2.ARCHIVED, 1)
    shown = await preview(tree_stub, w.branch_id)
    assert compared.node_id in {n.node_id for n in shown.impact.nodes}

    await tree_stub.Purge(purge_request(w, shown.preview_token))

    assert await footprint(db, w.secret) == []
    node = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=compared.node_id))).node
    assert list(node.comparison.answer_ids) == [w.branch_answer_id, second.id]
    assert (node.text, list(node.comparison.criteria)) == ("", [])


async def test_a_purge_racing_a_canonicalization_leaves_no_copy_of_the_text(tree_stub, db):
    for _ in range(3):
        w = await world(tree_stub)
        shown = await preview(tree_stub, w.branch_id)
        outcomes: tuple[Any, Any] = await asyncio.gather(
            tree_stub.Purge(purge_request(w, shown.preview_token)),
            tree_stub.Canonicalize(
                tree_pb2.CanonicalizeRequest(
                    idempotency_key=unique("k"),
                    tree_id=w.tree_id,
                    leaf_node_id=w.branch_answer_id,
                    expected_version=w.version.version,
                    confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="user-1"),
                )
            ),
            return_exceptions=True,
        )
        purge, canon = outcomes
        if isinstance(purge, grpc.aio.AioRpcError):
            assert describe(purge).reason == "purge_preview_stale"
            assert not isinstance(canon, BaseException)
        else:
            assert isinstance(canon, grpc.aio.AioRpcError)
            assert describe(canon).code == grpc.StatusCode.FAILED_PRECONDITION
            assert await footprint(db, w.secret) == []


async def test_a_delegated_task_must_end_before_its_branch_is_purged_and_leaves_no_text(
    tree_stub, db
):
    w = await world(tree_stub, archive=False)
    task = await tasking.start(tree_stub, w.branch_id, goal=f"Research {w.secret}")
    claimed = await tasking.claim(tree_stub, w.tree_id)
    assert claimed.task.id == task.id
    await tasking.progress(tree_stub, task.id, claimed.lease_token, message=f"Read {w.secret}")
    await set_state(tree_stub, w.branch_id, tree_pb2.ARCHIVED, 1)
    failure = await failure_of(preview(tree_stub, w.branch_id))
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert f"delegated task {task.id}" in failure.message and "running" in failure.message

    # The branch is archived: the result stays with the task as evidence, not as a node.
    done = await tasking.complete(tree_stub, task.id, claimed.lease_token, f"Found {w.secret}")
    assert done.task.state == tasks_pb2.TASK_CANCELLED
    shown = await preview(tree_stub, w.branch_id)
    await tree_stub.Purge(purge_request(w, shown.preview_token))

    assert await footprint(db, w.secret) == []
