"""Quota is not opt-in (T20): once a tree's owner keeps a quota, every request that spends —
an answer, a streamed answer, a continuation, a comparison, a delegated task — names the
estimate it is charged against, or is refused `estimate_required` with nothing written. An
owner without a quota keeps no account, and such requests run without one."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import costs_pb2, tasks_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.costs_helpers import estimate, set_quota
from tests.tree_service.helpers import answer, ask, new_tree
from tests.tree_service.tasking import start_request
from tests.tree_service.test_buds import Stream, open_message

FIELDS = {
    "AddAnswer": "content.conditions.estimate_id",
    "StreamAnswer": "content.conditions.estimate_id",
    "AddContinuation": "content.conditions.estimate_id",
    "CompareCandidates": "estimate_id",
    "StartTask": "estimate_id",
}


async def refusal(call) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return describe(caught.value)


async def streamed(
    stub, question_id: str, content: tree_pb2.GeneratedContent | None = None
) -> tree_pb2.StreamAnswerResponse:
    opening = open_message(question_id)
    if content is not None:
        opening.open.content.CopyFrom(content)
    stream = Stream(stub)
    try:
        return await stream.send(opening)
    finally:
        await stream.close()


Calls = dict[str, Callable[[], Awaitable[Any]]]


def spending(stub, question_id: str, first: str, second: str, estimate_id: str = "") -> Calls:
    """Each spending request on the question, naming `estimate_id` (none by default)."""
    content = (
        tree_pb2.GeneratedContent(conditions=tree_pb2.RunConditions(estimate_id=estimate_id))
        if estimate_id
        else None
    )
    return {
        "AddAnswer": lambda: stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=unique("k"), question_id=question_id, text="a", content=content
            )
        ),
        "StreamAnswer": lambda: streamed(stub, question_id, content),
        "AddContinuation": lambda: stub.AddContinuation(
            tree_pb2.AddContinuationRequest(
                idempotency_key=unique("k"),
                answer_id=first,
                kind=tree_pb2.ELABORATION,
                text="more",
                content=content,
            )
        ),
        "CompareCandidates": lambda: stub.CompareCandidates(
            costs_pb2.CompareCandidatesRequest(
                idempotency_key=unique("k"),
                question_id=question_id,
                answer_ids=[first, second],
                criteria=["cost"],
                verdict="the first",
                estimate_id=estimate_id,
            )
        ),
        "StartTask": lambda: stub.StartTask(start_request(question_id, estimate_id=estimate_id)),
    }


async def test_every_spending_request_names_an_estimate_once_the_owner_keeps_a_quota(tree_stub, db):
    tree = await new_tree(tree_stub, owner=unique("owner"))
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id, "one")
    second = await answer(tree_stub, question.id, "two")
    await set_quota(tree_stub, tree.owner, "100")
    nodes = await db.fetchval("SELECT count(*) FROM nodes WHERE tree_id = $1", uuid.UUID(tree.id))

    calls = spending(tree_stub, question.id, first.id, second.id)
    assert set(calls) == set(FIELDS)
    for method, call in calls.items():
        failure = await refusal(call())
        assert (failure.code, failure.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "estimate_required",
        ), method
        assert failure.metadata["field"] == FIELDS[method], method
    after = await db.fetchval("SELECT count(*) FROM nodes WHERE tree_id = $1", uuid.UUID(tree.id))
    tasks = await db.fetchval("SELECT count(*) FROM tasks WHERE tree_id = $1", uuid.UUID(tree.id))
    assert (after, tasks) == (nodes, 0)  # nothing written

    # Naming the right estimate, the same request goes through and is charged.
    named = await estimate(tree_stub, tree.id, question.id)
    made = await tree_stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=unique("k"),
            question_id=question.id,
            text="charged",
            content=tree_pb2.GeneratedContent(
                conditions=tree_pb2.RunConditions(estimate_id=named.id)
            ),
        )
    )
    assert made.node.conditions.estimate_id == named.id


async def test_an_owner_without_a_quota_keeps_no_account(tree_stub):
    tree = await new_tree(tree_stub, owner=unique("owner"))
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id, "one")
    second = await answer(tree_stub, question.id, "two")
    for method, call in spending(tree_stub, question.id, first.id, second.id).items():
        done = await call()
        assert done is not None, method
    tasks = (await tree_stub.ListTasks(tasks_pb2.ListTasksRequest(tree_id=tree.id))).tasks
    assert len(tasks) == 1


@pytest.mark.parametrize(
    "spelled",
    [
        lambda v: v[:-1],
        lambda v: v + "0",
        lambda v: "g" + v[1:],
        lambda v: v.replace("-", "_"),
        lambda v: "estimate-" + v[:8],
    ],
)
async def test_a_malformed_estimate_id_is_invalid_argument_naming_its_field(tree_stub, spelled):
    tree = await new_tree(tree_stub, owner=unique("owner"))
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id, "one")
    second = await answer(tree_stub, question.id, "two")
    await set_quota(tree_stub, tree.owner, "100")
    wrong = spelled(str(uuid.uuid4()))
    for method, call in spending(tree_stub, question.id, first.id, second.id, wrong).items():
        failure = await refusal(call())
        assert failure.code == grpc.StatusCode.INVALID_ARGUMENT, (method, failure)
        assert [v.field for v in failure.violations] == [FIELDS[method]], method
