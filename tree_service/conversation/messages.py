"""Conversation requests checked field by field into domain values (trees, questions and their
edits, answers, continuations, adoption)."""

from __future__ import annotations

from mirrortree.v1 import tree_pb2
from tree_service import canon_projection, convert
from tree_service.citations import messages as citations
from tree_service.domain import (
    MAX_OWNER,
    MAX_QUESTION,
    MAX_TITLE,
    AnswerLifecycle,
    NewAnswer,
    NewContinuation,
    NewQuestion,
    NewTree,
    QuestionEdit,
    Realm,
)


def new_tree(request: tree_pb2.CreateTreeRequest) -> NewTree:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.text("title", request.title, MAX_TITLE)
    check.text("owner", request.owner, MAX_OWNER)
    check.identifier("project_id", request.project_id, required=False)
    if canon_projection.is_reserved_project(request.project_id):
        check.fail("project_id", canon_projection.RESERVED_PROJECT_ADVICE)
    choice = convert.realm_choice(check, request.default_realm, request.default_world, "default_")
    check.done()
    return NewTree(
        request.title,
        request.owner,
        request.project_id or None,
        choice.realm or Realm.REAL,
        choice.world,
    )


def new_question(request: tree_pb2.AskQuestionRequest) -> NewQuestion:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("tree_id", request.tree_id)
    check.identifier("parent_id", request.parent_id, required=False)
    check.text("text", request.text, MAX_QUESTION)
    choice = convert.realm_choice(check, request.realm, request.world)
    run = convert.conditions(check, "conditions", request.conditions)
    convert.ungenerated(check, "conditions", request.conditions)
    attached = convert.attachments(check, list(request.attachments))
    cited = citations.citations(check, list(request.citations))
    check.done()
    return NewQuestion(
        request.tree_id,
        request.parent_id or None,
        request.text,
        choice,
        run,
        attached,
        cited,
    )


def question_edit(request: tree_pb2.EditQuestionRequest) -> QuestionEdit:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the question's current revision")
    check.text("text", request.text, MAX_QUESTION)
    run = convert.conditions(check, "conditions", request.conditions)
    convert.ungenerated(check, "conditions", request.conditions)
    attached = convert.attachments(check, list(request.attachments))
    cited = citations.citations(check, list(request.citations))
    check.done()
    return QuestionEdit(
        request.question_id, request.expected_revision, request.text, run, attached, cited
    )


def new_answer(request: tree_pb2.AddAnswerRequest) -> NewAnswer:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    check.text("text", request.text, convert.MAX_ANSWER)
    made = convert.generated(check, "content", request.content)
    choice = convert.realm_choice(check, request.realm, request.world)
    check.identifier("context_version_id", request.context_version_id, required=False)
    check.done()
    return NewAnswer(
        request.question_id,
        request.text,
        made,
        choice,
        context_version_id=request.context_version_id or None,
    )


def new_continuation(request: tree_pb2.AddContinuationRequest) -> NewContinuation:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("answer_id", request.answer_id)
    kind = convert.CONTINUATION_FROM_PROTO.get(request.kind)
    if kind is None:
        check.fail("kind", "is required: elaboration, verification, tool_work or deeper_reasoning")
    check.text("text", request.text, convert.MAX_ANSWER)
    made = convert.generated(check, "content", request.content)
    choice = convert.realm_choice(check, request.realm, request.world)
    check.done()
    assert kind is not None
    return NewContinuation(request.answer_id, kind, request.text, made, choice)


def adoption(request: tree_pb2.AdoptAnswerRequest) -> tuple[str, str, int]:
    check = convert.Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("question_id", request.question_id)
    check.identifier("answer_id", request.answer_id)
    if request.expected_revision < 1:
        check.fail("expected_revision", "is required: the question's current revision")
    check.done()
    return request.question_id, request.answer_id, request.expected_revision


def lifecycle_filter(check: convert.Checker, values: list[int]) -> tuple[AnswerLifecycle, ...]:
    found = []
    for i, value in enumerate(values):
        if value not in convert.LIFECYCLE_FROM_PROTO:
            check.fail(
                f"lifecycles[{i}]", "must be CANDIDATE, ADOPTED, IN_EXPLORATION or CANONICALIZED"
            )
        else:
            found.append(convert.LIFECYCLE_FROM_PROTO[value])
    return tuple(found)
