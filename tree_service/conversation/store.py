"""The conversation (T2-T8): questions and their edits, candidate answers, continuations and
adoption. Trees and node reads are the node core's (tree_service.nodes); main lines are
tree_service.canon's."""

from __future__ import annotations

import uuid

import asyncpg

from tree_service import gate, rules
from tree_service.citations.grants import link_authorized, snapshot_citations
from tree_service.context_assembly.versions import node_of_version
from tree_service.conversation import queries
from tree_service.costs import charges
from tree_service.costs.rules import Operation
from tree_service.domain import (
    NewAnswer,
    NewContinuation,
    NewQuestion,
    Node,
    NodeKind,
    QuestionEdit,
    RealmChoice,
)
from tree_service.errors import NotFound, RevisionConflict
from tree_service.nodes.rows import node_from_row
from tree_service.nodes.store import NodeStore


async def _charge(
    node: Node, uses: tuple[tuple[Operation, str], ...], conn: asyncpg.Connection
) -> None:
    """A generated node the write just appended passes the gate (no safety stop; an estimate
    named when the owner keeps a quota), under the tree's row its append locked, and is
    charged to the estimate its run conditions name (T20)."""
    field = "content.conditions.estimate_id"
    estimate_id = node.conditions.get("estimate_id")
    wanted = " or ".join(f"{op.value} of {target}" for op, target in uses)
    cost = gate.Cost(estimate_id, field, wanted)
    await gate.admit_work(conn, node.tree_id, gate.Hold.APPENDED, cost, "new generated nodes")
    if estimate_id:
        await charges.record_node(conn, estimate_id, field, node, uses)


class ConversationStore:
    """Questions, answers, continuations and adoption, written inside the caller's
    transaction through the node store."""

    @staticmethod
    async def ask_question(conn: asyncpg.Connection, question: NewQuestion) -> tuple[Node, int]:
        """Append a question: a root, or a follow-up bound to the answer/continuation it
        continues from."""
        parent = None
        if question.parent_id is not None:
            # An unknown tree is NOT_FOUND before the parent is compared with it.
            await NodeStore.expect_tree(conn, question.tree_id)
            parent = await NodeStore.load(conn, question.parent_id, "parent_id")
            rules.expect_kind(parent, "parent_id", NodeKind.ANSWER, NodeKind.CONTINUATION)
            rules.expect_same_tree(parent, question.tree_id, "parent_id")
            rules.expect_settled(parent, "parent_id")
        citations = await snapshot_citations(conn, question.citations, question.tree_id)
        appended = await NodeStore.append(
            conn,
            tree_id=question.tree_id,
            parent=parent,
            kind=NodeKind.QUESTION,
            text=question.text,
            realm=question.realm,
            conditions=question.conditions,
            attachments=question.attachments,
            citations=citations,
        )
        await link_authorized(conn, appended[0].id, citations)
        return appended

    @staticmethod
    async def edit_question(conn: asyncpg.Connection, edit: QuestionEdit) -> tuple[Node, int]:
        """A new version beside the edited question; the old version stays as it was."""
        old = await NodeStore.load(conn, edit.question_id, "question_id")
        rules.expect_kind(old, "question_id", NodeKind.QUESTION)
        if old.revision != edit.expected_revision:
            raise RevisionConflict("question", old.id, edit.expected_revision, old.revision)
        parent = await NodeStore.load(conn, old.parent_id, "parent_id") if old.parent_id else None
        lineage_id: uuid.UUID = await conn.fetchval(queries.LOCK_LINEAGE, uuid.UUID(old.id))
        version = await conn.fetchval(queries.NEXT_LINEAGE_VERSION, lineage_id)
        citations = await snapshot_citations(conn, edit.citations, old.tree_id)
        appended = await NodeStore.append(
            conn,
            tree_id=old.tree_id,
            parent=parent,
            kind=NodeKind.QUESTION,
            text=edit.text,
            realm=RealmChoice(old.realm, old.world),
            conditions=edit.conditions,
            attachments=edit.attachments,
            citations=citations,
            lineage=(lineage_id, old.id, version),
        )
        await link_authorized(conn, appended[0].id, citations)
        return appended

    @staticmethod
    async def add_answer(conn: asyncpg.Connection, answer: NewAnswer) -> tuple[Node, int]:
        """A candidate answer (complete, or a bud opened for streaming) under a question."""
        question = await NodeStore.load(conn, answer.question_id, "question_id")
        rules.expect_kind(question, "question_id", NodeKind.QUESTION)
        realm = answer.realm
        if answer.extends_answer_id is not None:
            extended = await NodeStore.load(conn, answer.extends_answer_id, "extends_answer_id")
            realm = rules.extension_realm(question, extended, realm)
        if answer.context_version_id is not None:
            field = "context_version_id"
            assembled_for = await node_of_version(conn, answer.context_version_id, field)
            if assembled_for is None:
                raise NotFound("context version", answer.context_version_id)
            rules.expect_context_of(question, assembled_for, answer.context_version_id)
        appended = await NodeStore.append(
            conn,
            tree_id=question.tree_id,
            parent=question,
            kind=NodeKind.ANSWER,
            text=answer.text,
            realm=realm,
            answer_state=answer.state,
            extends_answer_id=answer.extends_answer_id,
            generated=answer.generated,
            context_version_id=answer.context_version_id,
        )
        uses = [(Operation.REGENERATE, question.id)]
        if answer.extends_answer_id is not None:
            uses.append((Operation.CONTINUE, answer.extends_answer_id))
        await _charge(appended[0], tuple(uses), conn)
        return appended

    @staticmethod
    async def add_continuation(
        conn: asyncpg.Connection, continuation: NewContinuation
    ) -> tuple[Node, int]:
        answer = await NodeStore.load(conn, continuation.answer_id, "answer_id")
        rules.expect_kind(answer, "answer_id", NodeKind.ANSWER)
        rules.expect_settled(answer, "answer_id")
        appended = await NodeStore.append(
            conn,
            tree_id=answer.tree_id,
            parent=answer,
            kind=NodeKind.CONTINUATION,
            text=continuation.text,
            realm=continuation.realm,
            continuation_kind=continuation.kind,
            generated=continuation.generated,
        )
        await _charge(appended[0], ((Operation.CONTINUE, answer.id),), conn)
        return appended

    @staticmethod
    async def adopt(
        conn: asyncpg.Connection, question_id: str, answer_id: str, expected: int
    ) -> Node:
        """Set the question's working entry; optimistic on the question's revision."""
        question = await NodeStore.load(conn, question_id, "question_id")
        rules.expect_kind(question, "question_id", NodeKind.QUESTION)
        answer = await NodeStore.load(conn, answer_id, "answer_id")
        rules.expect_adoptable(question, answer)
        row = await conn.fetchrow(
            queries.ADOPT_ANSWER,
            rules.parse_id(question_id, "question_id"),
            uuid.UUID(answer_id),
            expected,
        )
        if row is None:
            current = await NodeStore.load(conn, question_id, "question_id")
            raise RevisionConflict("question", question_id, expected, current.revision)
        return node_from_row(row)
