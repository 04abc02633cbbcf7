"""Comparisons of sibling candidate answers (T23): a COMPARISON node under their question,
holding the caller's criteria and verdict, charged like any generated node."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg

from mirrortree.v1 import costs_pb2, tree_pb2
from tree_service import convert, gate
from tree_service import rules as tree_rules
from tree_service.costs import charges, queries
from tree_service.costs.rules import NewComparison, Operation
from tree_service.domain import Generated, Node, NodeKind, RealmChoice
from tree_service.errors import PreconditionFailed
from tree_service.nodes.store import NodeStore

MIN_COMPARED = 2
MAX_COMPARED = 20
MAX_CRITERIA = 50
MAX_CRITERION = 2_000
MAX_VERDICT = 20_000
ESTIMATE_FIELD = "estimate_id"


def new_comparison(request: costs_pb2.CompareCandidatesRequest) -> NewComparison:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    answers = tuple(request.answer_ids)
    if len(answers) < MIN_COMPARED:
        check.fail("answer_ids", f"names {len(answers)} answer(s); a comparison needs at least 2")
    elif len(answers) > MAX_COMPARED:
        check.fail("answer_ids", f"names {len(answers)} answers; the limit is {MAX_COMPARED}")
    seen: set[str] = set()
    for i, answer_id in enumerate(answers[:MAX_COMPARED]):
        check.identifier(f"answer_ids[{i}]", answer_id)
        if answer_id in seen:
            check.fail(f"answer_ids[{i}]", f"names {answer_id} a second time")
        seen.add(answer_id)
    criteria = tuple(request.criteria)
    if not criteria:
        check.fail("criteria", "must state at least one criterion")
    elif len(criteria) > MAX_CRITERIA:
        check.fail("criteria", f"holds {len(criteria)}; the limit is {MAX_CRITERIA}")
    for i, criterion in enumerate(criteria[:MAX_CRITERIA]):
        check.text(f"criteria[{i}]", criterion, MAX_CRITERION)
    check.text("verdict", request.verdict, MAX_VERDICT)
    preferred = request.preferred_answer_id or None
    if preferred is not None and preferred not in answers:
        check.fail("preferred_answer_id", "must be one of answer_ids")
    run = convert.conditions(
        check,
        "conditions",
        tree_pb2.RunConditions(
            model_strategy=request.conditions.model_strategy,
            parameters=request.conditions.parameters,
        ),
    )
    check.identifier(ESTIMATE_FIELD, request.estimate_id, required=False)
    check.done()
    if request.estimate_id:
        run["estimate_id"] = request.estimate_id
    return NewComparison(
        question_id=request.question_id,
        answer_ids=answers,
        criteria=criteria,
        verdict=request.verdict,
        preferred_answer_id=preferred,
        conditions=run,
        estimate_id=request.estimate_id or None,
    )


def comparison_json(wanted: NewComparison) -> dict[str, Any]:
    return {
        "answer_ids": list(wanted.answer_ids),
        "criteria": list(wanted.criteria),
        "preferred_answer_id": wanted.preferred_answer_id,
    }


class ComparisonStore:
    """Writes comparison nodes; they are read like every node (GetNode, ListNodes)."""

    async def compare(self, conn: asyncpg.Connection, wanted: NewComparison) -> tuple[Node, int]:
        """Append the comparison under the question, or refuse and write nothing."""
        question = await NodeStore.load(conn, wanted.question_id, "question_id")
        tree_rules.expect_kind(question, "question_id", NodeKind.QUESTION)
        for i, answer_id in enumerate(wanted.answer_ids):
            field = f"answer_ids[{i}]"
            answer = await NodeStore.load(conn, answer_id, field)
            tree_rules.expect_same_tree(answer, question.tree_id, field)
            tree_rules.expect_kind(answer, field, NodeKind.ANSWER)
            if answer.parent_id != question.id:
                raise PreconditionFailed(
                    f"{field} {answer.id} answers another question ({answer.parent_id}): only "
                    f"sibling answers of question {question.id} are compared",
                    {"field": field},
                )
            tree_rules.expect_settled(answer, field)
        node, revision = await NodeStore.append(
            conn,
            tree_id=question.tree_id,
            parent=question,
            kind=NodeKind.COMPARISON,
            text=wanted.verdict,
            realm=RealmChoice(None, None),
            generated=Generated(conditions=dict(wanted.conditions)),
        )
        details = comparison_json(wanted)
        await conn.execute(
            queries.SET_COMPARISON, uuid.UUID(node.id), json.dumps(details, ensure_ascii=False)
        )
        uses = ((Operation.COMPARE_CANDIDATES, question.id),)
        what = f"{Operation.COMPARE_CANDIDATES.value} of {question.id}"
        cost = gate.Cost(wanted.estimate_id, ESTIMATE_FIELD, what)
        await gate.admit_work(conn, node.tree_id, gate.Hold.APPENDED, cost, "new comparisons")
        if wanted.estimate_id is not None:
            await charges.record_node(conn, wanted.estimate_id, ESTIMATE_FIELD, node, uses)
        return await NodeStore.load(conn, node.id, "node_id"), revision
