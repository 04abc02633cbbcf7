"""Comparisons of candidate answers (T23) as nodes of their own, and run conditions — with the
estimate a run was charged to (T20) — on every generated node."""

from __future__ import annotations

import uuid
from typing import Any

import grpc

from mirrortree.v1 import costs_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.costs_helpers import estimate, failure_of, set_quota
from tests.tree_service.helpers import answer, ask, new_tree
from tests.tree_service.test_buds import Req, Stream, chunk


def run(strategy: str = "provider/model@careful", estimate_id: str = "") -> tree_pb2.RunConditions:
    return tree_pb2.RunConditions(
        model_strategy=strategy, parameters={"temperature": "0.2"}, estimate_id=estimate_id
    )


def generated(estimate_id: str = "") -> tree_pb2.GeneratedContent:
    return tree_pb2.GeneratedContent(conditions=run(estimate_id=estimate_id))


async def compare(stub, question_id: str, answer_ids: list[str], **fields):
    return await stub.CompareCandidates(
        costs_pb2.CompareCandidatesRequest(
            idempotency_key=fields.pop("idempotency_key", unique("k")),
            question_id=question_id,
            answer_ids=answer_ids,
            criteria=fields.pop("criteria", ["accuracy", "brevity"]),
            verdict=fields.pop("verdict", "The second is sharper."),
            conditions=costs_pb2.RunConditionsRecord(
                model_strategy="provider/judge", parameters={"seed": "7"}
            ),
            **fields,
        )
    )


async def candidates(stub, owner: str = ""):
    tree = await new_tree(stub, owner=owner or unique("owner"))
    question = await ask(stub, tree.id)
    first = await answer(stub, question.id, "one")
    second = await answer(stub, question.id, "two")
    return tree, question, first, second


async def get(stub, node_id: str) -> tree_pb2.Node:
    found: tree_pb2.Node = (await stub.GetNode(tree_pb2.GetNodeRequest(node_id=node_id))).node
    return found


async def node_count(db, tree_id: str) -> int:
    count: int = await db.fetchval(
        "SELECT count(*) FROM nodes WHERE tree_id = $1", uuid.UUID(tree_id)
    )
    return count


async def test_a_comparison_of_sibling_answers_is_a_node_under_their_question(tree_stub):
    tree, question, first, second = await candidates(tree_stub)
    made = await compare(
        tree_stub, question.id, [first.id, second.id], preferred_answer_id=second.id
    )
    assert list(made.comparison.answer_ids) == [first.id, second.id]
    assert list(made.comparison.criteria) == ["accuracy", "brevity"]
    assert made.comparison.preferred_answer_id == second.id
    node = await get(tree_stub, made.node_id)
    assert (node.kind, node.parent_id, node.tree_id, node.text) == (
        tree_pb2.COMPARISON,
        question.id,
        tree.id,
        "The second is sharper.",
    )
    assert node.comparison == made.comparison
    assert node.comparison.verdict == "The second is sharper."
    assert node.realm == question.realm
    assert node.lifecycle == tree_pb2.ANSWER_LIFECYCLE_UNSPECIFIED
    assert (node.conditions.model_strategy, dict(node.conditions.parameters)) == (
        "provider/judge",
        {"seed": "7"},
    )
    listed = (await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))).nodes
    assert [n.kind for n in listed] == [
        tree_pb2.QUESTION,
        tree_pb2.ANSWER,
        tree_pb2.ANSWER,
        tree_pb2.COMPARISON,
    ]
    assert listed[-1].comparison == made.comparison
    # Comparing changes neither answer: both stay candidates, nothing is adopted.
    assert (await get(tree_stub, question.id)).adopted_answer_id == ""


async def test_a_comparison_refuses_answers_that_are_not_siblings_and_writes_nothing(tree_stub, db):
    tree, question, first, second = await candidates(tree_stub)
    other_question = await ask(tree_stub, tree.id, "another")
    cousin = await answer(tree_stub, other_question.id, "elsewhere")
    _, _, foreign, _ = await candidates(tree_stub)
    before = await node_count(db, tree.id)

    not_sibling = await failure_of(compare(tree_stub, question.id, [first.id, cousin.id]))
    assert not_sibling.code == grpc.StatusCode.FAILED_PRECONDITION
    assert not_sibling.metadata["field"] == "answer_ids[1]"
    assert "sibling" in not_sibling.message

    other_tree = await failure_of(compare(tree_stub, question.id, [foreign.id, second.id]))
    assert other_tree.code == grpc.StatusCode.FAILED_PRECONDITION
    assert other_tree.metadata["field"] == "answer_ids[0]"
    assert "another tree" in other_tree.message

    a_question = await failure_of(compare(tree_stub, question.id, [first.id, other_question.id]))
    assert a_question.metadata["field"] == "answer_ids[1]"

    not_a_question = await failure_of(compare(tree_stub, first.id, [first.id, second.id]))
    assert not_a_question.metadata["field"] == "question_id"

    missing = await failure_of(compare(tree_stub, question.id, [first.id, str(uuid.uuid4())]))
    assert missing.code == grpc.StatusCode.NOT_FOUND
    assert await node_count(db, tree.id) == before


async def test_a_bad_comparison_request_names_each_field(tree_stub, db):
    tree, question, first, second = await candidates(tree_stub)
    before = await node_count(db, tree.id)
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"answer_ids": [first.id]}, ["answer_ids"]),
        ({"answer_ids": [first.id, first.id]}, ["answer_ids[1]"]),
        ({"answer_ids": [first.id, "not-a-uuid!"]}, ["answer_ids[1]"]),
        ({"criteria": []}, ["criteria"]),
        ({"criteria": ["ok", ""]}, ["criteria[1]"]),
        ({"verdict": ""}, ["verdict"]),
        ({"preferred_answer_id": question.id}, ["preferred_answer_id"]),
        ({"estimate_id": "nope nope"}, ["estimate_id"]),
    ]
    for fields, names in cases:
        answer_ids = fields.pop("answer_ids", [first.id, second.id])
        failure = await failure_of(compare(tree_stub, question.id, answer_ids, **fields))
        assert failure.code == grpc.StatusCode.INVALID_ARGUMENT, fields
        assert [v.field for v in failure.violations] == names, fields
    assert await node_count(db, tree.id) == before


async def test_a_comparison_is_costed_like_the_other_generated_nodes(tree_stub, db):
    tree, question, first, second = await candidates(tree_stub)
    await set_quota(tree_stub, tree.owner, "1")
    regenerate = await estimate(tree_stub, tree.id, question.id, input_price="0.25")
    wrong = await failure_of(
        compare(tree_stub, question.id, [first.id, second.id], estimate_id=regenerate.id)
    )
    assert wrong.reason == "estimate_not_applicable"
    costly = await estimate(
        tree_stub, tree.id, question.id, costs_pb2.COMPARE_CANDIDATES, input_price="2"
    )
    before = await node_count(db, tree.id)
    over = await failure_of(
        compare(tree_stub, question.id, [first.id, second.id], estimate_id=costly.id)
    )
    assert over.reason == "quota_exceeded"
    assert await node_count(db, tree.id) == before
    fits = await estimate(
        tree_stub, tree.id, question.id, costs_pb2.COMPARE_CANDIDATES, input_price="0.5"
    )
    made = await compare(tree_stub, question.id, [first.id, second.id], estimate_id=fits.id)
    node = await get(tree_stub, made.node_id)
    assert node.conditions.estimate_id == fits.id
    read = (await tree_stub.GetEstimate(costs_pb2.GetEstimateRequest(estimate_id=fits.id))).estimate
    assert (read.charge_state, list(read.node_ids)) == (costs_pb2.RESERVED, [made.node_id])


async def test_every_generated_node_keeps_its_run_conditions_and_its_estimate(tree_stub):
    tree = await new_tree(tree_stub, owner=unique("owner"))
    await set_quota(tree_stub, tree.owner, "100")
    question = await ask(tree_stub, tree.id)
    two = await estimate(tree_stub, tree.id, question.id, parallelism=2)
    first = await answer(tree_stub, question.id, "one", content=generated(two.id))
    stream = Stream(tree_stub)
    opened = (
        await stream.send(
            Req(
                open=Req.Open(
                    idempotency_key=unique("k"), question_id=question.id, content=generated(two.id)
                )
            )
        )
    ).opened
    await stream.send(chunk(1, "two"))
    sealed = (await stream.send(Req(complete=Req.Complete()))).sealed
    await stream.close()
    onward = await estimate(tree_stub, tree.id, first.id, costs_pb2.CONTINUE)
    continuation = (
        await tree_stub.AddContinuation(
            tree_pb2.AddContinuationRequest(
                idempotency_key=unique("k"),
                answer_id=first.id,
                kind=tree_pb2.VERIFICATION,
                text="checked",
                content=generated(onward.id),
            )
        )
    ).node
    judged = await estimate(tree_stub, tree.id, question.id, costs_pb2.COMPARE_CANDIDATES)
    comparison = await compare(tree_stub, question.id, [first.id, sealed.id], estimate_id=judged.id)
    expected = {
        first.id: two.id,
        opened.id: two.id,
        continuation.id: onward.id,
        comparison.node_id: judged.id,
    }
    for node_id, estimate_id in expected.items():
        node = await get(tree_stub, node_id)
        assert node.conditions.model_strategy, node.kind
        assert node.conditions.estimate_id == estimate_id, node.kind
    listed = (await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))).nodes
    assert {n.id: n.conditions.estimate_id for n in listed if n.id in expected} == expected
    read = (await tree_stub.GetEstimate(costs_pb2.GetEstimateRequest(estimate_id=two.id))).estimate
    assert list(read.node_ids) == [first.id, opened.id]
    # Its two runs are recorded: a third answer needs an estimate of its own.
    third = await failure_of(answer(tree_stub, question.id, "three", content=generated(two.id)))
    assert third.reason == "estimate_not_applicable"
    assert "2 run(s)" in third.message


async def test_an_estimate_is_used_only_by_the_request_it_estimated(tree_stub, db):
    tree = await new_tree(tree_stub, owner=unique("owner"))
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id)  # before the quota: no estimate needed
    await set_quota(tree_stub, tree.owner, "100")
    other = await ask(tree_stub, tree.id, "other")
    for_other = await estimate(tree_stub, tree.id, other.id)
    before = await node_count(db, tree.id)
    elsewhere = await failure_of(
        answer(tree_stub, question.id, "x", content=generated(for_other.id))
    )
    assert elsewhere.reason == "estimate_not_applicable"
    assert elsewhere.metadata["field"] == "content.conditions.estimate_id"
    regenerate = await estimate(tree_stub, tree.id, question.id)
    as_continuation = await failure_of(
        tree_stub.AddContinuation(
            tree_pb2.AddContinuationRequest(
                idempotency_key=unique("k"),
                answer_id=first.id,
                kind=tree_pb2.ELABORATION,
                text="more",
                content=generated(regenerate.id),
            )
        )
    )
    assert as_continuation.reason == "estimate_not_applicable"
    unknown = await failure_of(
        answer(tree_stub, question.id, "x", content=generated(str(uuid.uuid4())))
    )
    assert unknown.code == grpc.StatusCode.NOT_FOUND
    questioned = await failure_of(
        ask(tree_stub, tree.id, "q", conditions=run(estimate_id=regenerate.id))
    )
    assert [v.field for v in questioned.violations] == ["conditions.estimate_id"]
    assert await node_count(db, tree.id) == before


async def test_a_transplanted_comparison_compares_the_copies_of_its_answers(tree_stub):
    _, question, first, second = await candidates(tree_stub)
    await compare(tree_stub, question.id, [first.id, second.id], preferred_answer_id=second.id)
    moved = await tree_stub.TransplantBranch(
        tree_pb2.TransplantBranchRequest(
            idempotency_key=unique("k"),
            node_id=question.id,
            title="moved",
            transplanted_by="user-1",
        )
    )
    copies = (await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=moved.tree.id))).nodes
    copied_first, copied_second, comparison = copies[1], copies[2], copies[3]
    assert comparison.kind == tree_pb2.COMPARISON
    assert list(comparison.comparison.answer_ids) == [copied_first.id, copied_second.id]
    assert comparison.comparison.preferred_answer_id == copied_second.id
    assert list(comparison.comparison.criteria) == ["accuracy", "brevity"]
