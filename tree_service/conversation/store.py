"""The conversation tree: trees, questions (and their edits), answers, continuations, adoption,
and the reads of nodes and paths. Main lines are in conversation.main_line."""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

import asyncpg

from tree_service import rules
from tree_service.citations import anchors
from tree_service.citations.grants import grant_for_citation, link_authorized
from tree_service.context_assembly.versions import node_of_version
from tree_service.conversation import queries
from tree_service.conversation.rows import generated_json, node_from_row, tree_from_row
from tree_service.costs import charges
from tree_service.costs.rules import Operation
from tree_service.domain import (
    AnswerState,
    Attachment,
    CitationRequest,
    ContinuationKind,
    Generated,
    NewAnswer,
    NewContinuation,
    NewQuestion,
    NewTree,
    Node,
    NodeKind,
    QuestionEdit,
    RealmChoice,
    Tree,
)
from tree_service.errors import InvalidInput, NotFound, RevisionConflict
from tree_service.lifecycle.purge_guard import expect_not_purged
from tree_service.store import TreeStore


async def _charge(
    node: Node, uses: tuple[tuple[Operation, str], ...], conn: asyncpg.Connection
) -> None:
    """A generated node naming an estimate in its run conditions is charged to it (T20)."""
    estimate_id = node.conditions.get("estimate_id")
    if estimate_id:
        await charges.record_node(conn, estimate_id, "content.conditions.estimate_id", node, uses)


class ConversationStore:
    """Reads and writes of trees and their nodes on the primary."""

    def __init__(self, core: TreeStore) -> None:
        self._pool = core.pool

    @staticmethod
    async def create_tree(conn: asyncpg.Connection, new: NewTree) -> Tree:
        row = await conn.fetchrow(
            queries.INSERT_TREE,
            uuid.uuid4(),
            new.title,
            new.owner,
            new.project_id,
            new.default_realm.value,
            new.default_world,
        )
        return tree_from_row(row)

    async def get_tree(self, tree_id: str) -> Tree:
        row = await self._pool.fetchrow(queries.SELECT_TREE, rules.parse_id(tree_id, "tree_id"))
        if row is None:
            raise NotFound("tree", tree_id)
        return tree_from_row(row)

    @staticmethod
    async def load(conn: asyncpg.Connection, node_id: str, field: str) -> Node:
        """The node `field` names; NotFound when there is none."""
        row = await conn.fetchrow(queries.SELECT_NODE, rules.parse_id(node_id, field))
        if row is None:
            raise NotFound("node", node_id)
        return node_from_row(row)

    @staticmethod
    async def _append(
        conn: asyncpg.Connection,
        *,
        tree_id: str,
        parent: Node | None,
        kind: NodeKind,
        text: str,
        realm: RealmChoice,
        conditions: dict[str, Any] | None = None,
        attachments: tuple[Attachment, ...] = (),
        citations: tuple[dict[str, Any], ...] = (),
        lineage: tuple[uuid.UUID, str | None, int] | None = None,
        answer_state: AnswerState | None = None,
        extends_answer_id: str | None = None,
        continuation_kind: ContinuationKind | None = None,
        generated: Generated | None = None,
        context_version_id: str | None = None,
    ) -> tuple[Node, int]:
        """Insert one node under `parent` (already validated); returns it and the tree revision.

        A node is also recorded as a story-graph message source unless it is a bud still
        streaming (its text is not final until it ends).
        """
        tree_uuid = rules.parse_id(tree_id, "tree_id")
        # Known here unless the node takes the tree's default realm (None: the statement does).
        node_realm: str | None = None
        world: str | None = None
        if realm.realm is not None or parent is not None:
            chosen, world = rules.node_realm(realm, parent, RealmChoice(None, None))
            node_realm = chosen.value
        node_id = uuid.uuid4()
        lineage_id, version_of, version = lineage or (
            (node_id, None, 1) if kind is NodeKind.QUESTION else (None, None, 1)
        )
        made = generated or Generated(conditions=conditions or {})
        conditions_json, summary, evidence, tool_trace = generated_json(made)
        is_question = kind is NodeKind.QUESTION
        row = await conn.fetchrow(
            queries.APPEND_NODE,
            node_id,
            tree_uuid,
            rules.parse_id(parent.id, "parent_id") if parent else None,
            kind.value,
            node_realm,
            world,
            text,
            conditions_json,
            json.dumps([dataclasses.asdict(a) for a in attachments], ensure_ascii=False),
            json.dumps(list(citations), ensure_ascii=False),
            lineage_id,
            rules.parse_id(version_of, "question_id") if version_of else None,
            version,
            answer_state.value if answer_state else None,
            rules.parse_id(extends_answer_id, "extends_answer_id") if extends_answer_id else None,
            continuation_kind.value if continuation_kind else None,
            summary,
            evidence,
            tool_trace,
            uuid.UUID(context_version_id) if context_version_id else None,
            lineage_id if is_question and lineage_id else node_id,
            version if is_question else 1,
            "user" if is_question else "assistant",
        )
        if row is None:
            raise NotFound("tree", tree_id)
        if parent is not None:  # checked once the statement holds the tree, as a purge does
            await expect_not_purged(conn, parent.id, "parent")
        return node_from_row(row), row["tree_revision"]

    async def _citations(
        self, conn: asyncpg.Connection, requested: tuple[CitationRequest, ...], owner_tree: str
    ) -> tuple[dict[str, Any], ...]:
        """Snapshot each cited range as it is now; the snapshot never changes afterwards."""
        if not requested:
            return ()
        tree = await conn.fetchrow(queries.SELECT_TREE, rules.parse_id(owner_tree, "tree_id"))
        if tree is None:
            raise NotFound("tree", owner_tree)
        owners = {tree["id"]: tree["owner"]}  # most citations stay in one or two trees
        snapshots: list[dict[str, Any]] = []
        cited_length = 0
        for i, citation in enumerate(requested):
            cited = await self.load(conn, citation.node_id, f"citations[{i}].node_id")
            await expect_not_purged(conn, cited.id, f"citations[{i}].node_id")
            if cited.tree_id not in owners:
                cited_tree = await conn.fetchrow(queries.SELECT_TREE, uuid.UUID(cited.tree_id))
                owners[cited.tree_id] = cited_tree["owner"]
            same_owner = owners[cited.tree_id] == tree["owner"]
            redactions = None
            if citation.authorization_id:
                field = f"citations[{i}].authorization_id"
                if same_owner:
                    raise InvalidInput.one(field, "is only for citing another person's tree")
                grant = await grant_for_citation(conn, citation.authorization_id, field)
                redactions = anchors.expect_grant(
                    grant,
                    citation.authorization_id,
                    cited_tree=cited.tree_id,
                    cited_owner=owners[cited.tree_id],
                    citing_owner=tree["owner"],
                    field=field,
                ).redactions
            snapshot = rules.citation_snapshot(
                i, citation, cited, same_owner, cited_length, redactions=redactions
            )
            cited_length += len(snapshot["snapshot"])
            snapshots.append(snapshot)
        return tuple(snapshots)

    async def ask_question(
        self, conn: asyncpg.Connection, question: NewQuestion
    ) -> tuple[Node, int]:
        """Append a question: a root, or a follow-up bound to the answer/continuation it
        continues from."""
        parent = None
        if question.parent_id is not None:
            # An unknown tree is NOT_FOUND before the parent is compared with it.
            tree_uuid = rules.parse_id(question.tree_id, "tree_id")
            if await conn.fetchrow(queries.SELECT_TREE, tree_uuid) is None:
                raise NotFound("tree", question.tree_id)
            parent = await self.load(conn, question.parent_id, "parent_id")
            rules.expect_kind(parent, "parent_id", NodeKind.ANSWER, NodeKind.CONTINUATION)
            rules.expect_same_tree(parent, question.tree_id, "parent_id")
            rules.expect_settled(parent, "parent_id")
        citations = await self._citations(conn, question.citations, question.tree_id)
        appended = await self._append(
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

    async def edit_question(self, conn: asyncpg.Connection, edit: QuestionEdit) -> tuple[Node, int]:
        """A new version beside the edited question; the old version stays as it was."""
        old = await self.load(conn, edit.question_id, "question_id")
        rules.expect_kind(old, "question_id", NodeKind.QUESTION)
        if old.revision != edit.expected_revision:
            raise RevisionConflict("question", old.id, edit.expected_revision, old.revision)
        parent = await self.load(conn, old.parent_id, "parent_id") if old.parent_id else None
        lineage_id: uuid.UUID = await conn.fetchval(queries.LOCK_LINEAGE, uuid.UUID(old.id))
        version = await conn.fetchval(queries.NEXT_LINEAGE_VERSION, lineage_id)
        citations = await self._citations(conn, edit.citations, old.tree_id)
        appended = await self._append(
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

    async def add_answer(self, conn: asyncpg.Connection, answer: NewAnswer) -> tuple[Node, int]:
        """A candidate answer (complete, or a bud opened for streaming) under a question."""
        question = await self.load(conn, answer.question_id, "question_id")
        rules.expect_kind(question, "question_id", NodeKind.QUESTION)
        realm = answer.realm
        if answer.extends_answer_id is not None:
            extended = await self.load(conn, answer.extends_answer_id, "extends_answer_id")
            realm = rules.extension_realm(question, extended, realm)
        if answer.context_version_id is not None:
            field = "context_version_id"
            assembled_for = await node_of_version(conn, answer.context_version_id, field)
            if assembled_for is None:
                raise NotFound("context version", answer.context_version_id)
            rules.expect_context_of(question, assembled_for, answer.context_version_id)
        appended = await self._append(
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

    async def add_continuation(
        self, conn: asyncpg.Connection, continuation: NewContinuation
    ) -> tuple[Node, int]:
        answer = await self.load(conn, continuation.answer_id, "answer_id")
        rules.expect_kind(answer, "answer_id", NodeKind.ANSWER)
        rules.expect_settled(answer, "answer_id")
        appended = await self._append(
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

    async def adopt(
        self, conn: asyncpg.Connection, question_id: str, answer_id: str, expected: int
    ) -> Node:
        """Set the question's working entry; optimistic on the question's revision."""
        question = await self.load(conn, question_id, "question_id")
        rules.expect_kind(question, "question_id", NodeKind.QUESTION)
        answer = await self.load(conn, answer_id, "answer_id")
        rules.expect_adoptable(question, answer)
        row = await conn.fetchrow(
            queries.ADOPT_ANSWER,
            rules.parse_id(question_id, "question_id"),
            uuid.UUID(answer_id),
            expected,
        )
        if row is None:
            current = await self.load(conn, question_id, "question_id")
            raise RevisionConflict("question", question_id, expected, current.revision)
        return node_from_row(row)

    # ---- reads ----------------------------------------------------------------------------

    async def get_node(self, node_id: str) -> Node:
        async with self._pool.acquire() as conn:
            return await self.load(conn, node_id, "node_id")

    async def get_path(self, node_id: str, offset: int, limit: int) -> tuple[list[Node], int]:
        """One page of the path root → node, and the path's length."""
        node_uuid = rules.parse_id(node_id, "node_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(queries.SELECT_PATH, node_uuid, offset, limit)
            if not rows:  # past the end, or no such node
                first = await conn.fetchrow(queries.SELECT_PATH, node_uuid, 0, 1)
                if first is None:
                    raise NotFound("node", node_id)
                return [], first["path_length"]
        return [node_from_row(r) for r in rows], rows[0]["path_length"]
