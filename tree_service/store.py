"""Persistence of the tree service: the only module that touches asyncpg.

Every write runs in one transaction on the primary. Idempotency is settled inside that same
transaction: the key is claimed first (a concurrent retry blocks on the unique index until the
first commits, then replays its stored response), so a retry can never write twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import asyncpg

from mirrortree import neighbourhoods
from mirrortree.lsn import commit_point, format_lsn, parse_lsn
from mirrortree.rpcstatus import FieldViolation
from mirrortree.scopes import ScopeValue
from tree_service import canon_projection, queries
from tree_service.domain import (
    CANON_POLICIES,
    AnswerState,
    Attachment,
    CanonCandidate,
    Canonicalization,
    CanonicalScope,
    CitationRequest,
    ContinuationKind,
    Generated,
    IssuedBinding,
    MainLineVersion,
    NewAnswer,
    NewContinuation,
    NewPreference,
    NewQuestion,
    NewSourceRevision,
    NewTree,
    Node,
    NodeKind,
    ObjectType,
    PreferenceRecord,
    QuestionEdit,
    Realm,
    RealmChoice,
    RealmPolicyError,
    RecordedReview,
    ReviewResult,
    SourceRecord,
    StopReason,
    StoryObject,
    Tree,
    rule_canonical_scope,
)
from tree_service.errors import (
    Contention,
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
    PreconditionFailed,
    RevisionConflict,
)

T = TypeVar("T")
MAX_CANON_NODES = 1000
# The cited ranges of one question together, in code points: as long as the longest answer, so
# a question with its snapshots fits in one response as an answer does.
MAX_CITED = 1_000_000
# A live stream renews its bud's lease every BUD_LEASE_S / 3 seconds; a bud whose lease ran
# out lost its stream (the serving process died) and is frozen by whichever instance sweeps.
BUD_LEASE_S = 30.0


@dataclass(frozen=True)
class WriteOutcome(Generic[T]):
    """A write's result: either fresh (`value`) or a replay (`replayed` response bytes)."""

    value: T | None
    replayed: bytes | None
    lsn: str


def _tree(row: asyncpg.Record) -> Tree:
    return Tree(
        id=row["id"],
        title=row["title"],
        owner=row["owner"],
        project_id=row["project_id"],
        default_realm=Realm(row["default_realm"]),
        revision=row["revision"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        default_world=row["default_world"],
    )


def _node(row: asyncpg.Record) -> Node:
    return Node(
        id=row["id"],
        tree_id=row["tree_id"],
        parent_id=row["parent_id"],
        kind=NodeKind(row["kind"]),
        realm=Realm(row["realm"]),
        text=row["text"],
        revision=row["revision"],
        ordinal=row["ordinal"],
        created_at=row["created_at"],
        world=row["world"],
        conditions=json.loads(row["conditions"]),
        attachments=tuple(json.loads(row["attachments"])),
        citations=tuple(json.loads(row["citations"])),
        version_of=row["version_of"],
        version=row["version"],
        adopted_answer_id=row["adopted_answer_id"],
        answer_state=AnswerState(row["answer_state"]) if row["answer_state"] else None,
        stop_reason=row["stop_reason"],
        acked_chunks=row["acked_chunks"],
        extends_answer_id=row["extends_answer_id"],
        continuation_kind=(
            ContinuationKind(row["continuation_kind"]) if row["continuation_kind"] else None
        ),
        reasoning_summary=row["reasoning_summary"],
        evidence=tuple(json.loads(row["evidence"])),
        tool_trace=tuple(json.loads(row["tool_trace"])),
    )


def _node_json(node: Node) -> dict[str, Any]:
    """A node as stored in a main-line snapshot (JSON-safe)."""
    data = dataclasses.asdict(node)
    data["created_at"] = node.created_at.isoformat()
    return data


def _node_from_json(data: dict[str, Any]) -> Node:
    values = dict(data)
    values["created_at"] = datetime.fromisoformat(values["created_at"])
    values["kind"] = NodeKind(values["kind"])
    values["realm"] = Realm(values["realm"])
    values["answer_state"] = AnswerState(values["answer_state"]) if values["answer_state"] else None
    kind = values["continuation_kind"]
    values["continuation_kind"] = ContinuationKind(kind) if kind else None
    for key in ("attachments", "citations", "evidence", "tool_trace"):
        values[key] = tuple(values[key])
    return Node(**values)


@dataclass(frozen=True)
class ListedVersion:
    """A main-line version as listed: without its snapshot (MainLineVersion.snapshot is
    empty until TreeStore.with_snapshots reads it), and the size that snapshot is stored in."""

    version: MainLineVersion
    snapshot_stored_bytes: int


def _listed_version(row: asyncpg.Record) -> ListedVersion:
    version = MainLineVersion(
        id=row["id"],
        tree_id=row["tree_id"],
        scope=CanonicalScope(row["scope"]),
        world=row["world"],
        version=row["version"],
        node_ids=tuple(row["node_ids"]),
        snapshot=(),
        confirmed_by=row["confirmed_by"],
        created_at=row["created_at"],
        candidates=tuple(CanonCandidate(**c) for c in json.loads(row["candidates"])),
        replaces_version_id=row["replaces_version_id"],
    )
    return ListedVersion(version, row["snapshot_stored_bytes"])


def _generated_json(generated: Generated) -> tuple[str, str, str, str]:
    return (
        json.dumps(generated.conditions, ensure_ascii=False),
        generated.reasoning_summary,
        json.dumps(list(generated.evidence), ensure_ascii=False),
        json.dumps([dataclasses.asdict(t) for t in generated.tool_trace], ensure_ascii=False),
    )


def _uuid(value: str, field: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise InvalidInput.one(field, f"{value!r} is not a valid id (a UUID)") from None


def token_hash(token: str) -> bytes:
    """Binding tokens are stored and looked up by SHA-256 only."""
    return hashlib.sha256(token.encode()).digest()


class TreeStore:
    """All reads and writes of the tree service against the primary."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        wal_block_size: int,
        wal_segment_size: int,
        hub_links: int = neighbourhoods.DEFAULT_HUB_LINKS,
    ) -> None:
        self._pool = pool
        self._wal_geometry = (wal_block_size, wal_segment_size)
        self.hub_links = hub_links

    @classmethod
    async def connect(
        cls,
        dsn: str,
        min_size: int = 2,
        max_size: int = 20,
        hub_links: int = neighbourhoods.DEFAULT_HUB_LINKS,
    ) -> TreeStore:
        pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size)
        geometry = await pool.fetchrow(queries.WAL_GEOMETRY)
        return cls(pool, geometry["block_size"], geometry["segment_size"], hub_links)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def close(self) -> None:
        await self._pool.close()

    async def is_replica(self) -> bool:
        return bool(await self._pool.fetchval("SELECT pg_is_in_recovery()"))

    # ---- idempotent write frame ---------------------------------------------------------

    async def write(
        self,
        *,
        key: str,
        method: str,
        request_hash: bytes,
        action: Callable[[asyncpg.Connection], Awaitable[T]],
        encode: Callable[[T], bytes],
    ) -> WriteOutcome[T]:
        """Run `action` in a transaction guarded by an idempotency key.

        The first request with `key` runs `action` and stores `encode(result)`; a later one with
        the same key and the same request hash gets those bytes back without writing; a
        different request under the same key fails with IdempotencyKeyReused.
        """
        try:
            return await self._write(key, method, request_hash, action, encode)
        except (asyncpg.DeadlockDetectedError, asyncpg.SerializationError):
            raise Contention() from None

    async def _write(
        self,
        key: str,
        method: str,
        request_hash: bytes,
        action: Callable[[asyncpg.Connection], Awaitable[T]],
        encode: Callable[[T], bytes],
    ) -> WriteOutcome[T]:
        async with self._pool.acquire() as conn:
            value: T | None = None
            replayed: bytes | None = None
            async with conn.transaction():
                claimed = await conn.fetchval(
                    queries.CLAIM_IDEMPOTENCY_KEY, key, method, request_hash
                )
                if claimed is None:
                    row = await conn.fetchrow(queries.READ_IDEMPOTENCY_KEY, key)
                    if row["method"] != method or row["request_hash"] != request_hash:
                        raise IdempotencyKeyReused(key, row["method"])
                    replayed = bytes(row["response"])
                else:
                    value = await action(conn)
                    await conn.execute(queries.STORE_IDEMPOTENT_RESPONSE, key, encode(value))
            lsn = await self.commit_lsn(conn)
        return WriteOutcome(value, replayed, lsn)

    # ---- trees and nodes ----------------------------------------------------------------

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
        return _tree(row)

    async def get_tree(self, tree_id: str) -> Tree:
        row = await self._pool.fetchrow(queries.SELECT_TREE, _uuid(tree_id, "tree_id"))
        if row is None:
            raise NotFound("tree", tree_id)
        return _tree(row)

    @staticmethod
    async def _load(conn: asyncpg.Connection, node_id: str, field: str) -> Node:
        row = await conn.fetchrow(queries.SELECT_NODE, _uuid(node_id, field))
        if row is None:
            raise NotFound("node", node_id)
        return _node(row)

    @staticmethod
    def _expect_kind(node: Node, field: str, *kinds: NodeKind) -> None:
        if node.kind not in kinds:
            wanted = " or ".join(k.value for k in kinds)
            raise PreconditionFailed(
                f"{field} {node.id!r} is a {node.kind.value} node; it must be: {wanted}",
                {"field": field, "kind": node.kind.value},
            )

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
    ) -> tuple[Node, int]:
        """Insert one node under `parent` (already validated); returns it and the tree revision.

        The realm is the explicit choice, else the parent's, else the tree default; a node is
        also recorded as a story-graph source revision unless it is a bud still streaming.
        """
        tree_uuid = _uuid(tree_id, "tree_id")
        bumped = await conn.fetchrow(queries.BUMP_TREE_FOR_APPEND, tree_uuid)
        if bumped is None:
            raise NotFound("tree", tree_id)
        if realm.realm is not None:
            node_realm, world = realm.realm, realm.world
        elif parent is not None:
            node_realm, world = parent.realm, parent.world
        else:
            node_realm, world = Realm(bumped["default_realm"]), bumped["default_world"]
        node_id = uuid.uuid4()
        lineage_id, version_of, version = lineage or (
            (node_id, None, 1) if kind is NodeKind.QUESTION else (None, None, 1)
        )
        made = generated or Generated(conditions=conditions or {})
        conditions_json, summary, evidence, tool_trace = _generated_json(made)
        row = await conn.fetchrow(
            queries.INSERT_NODE,
            node_id,
            tree_uuid,
            _uuid(parent.id, "parent_id") if parent else None,
            kind.value,
            node_realm.value,
            world if node_realm is Realm.WORLD else None,
            text,
            bumped["node_count"],
            conditions_json,
            json.dumps([dataclasses.asdict(a) for a in attachments], ensure_ascii=False),
            json.dumps(list(citations), ensure_ascii=False),
            lineage_id,
            _uuid(version_of, "question_id") if version_of else None,
            version,
            answer_state.value if answer_state else None,
            _uuid(extends_answer_id, "extends_answer_id") if extends_answer_id else None,
            continuation_kind.value if continuation_kind else None,
            summary,
            evidence,
            tool_trace,
        )
        node = _node(row)
        if answer_state is not AnswerState.STREAMING:
            await TreeStore._record_source(conn, node, bumped["project_id"], lineage_id)
        return node, bumped["revision"]

    @staticmethod
    async def _record_source(
        conn: asyncpg.Connection,
        node: Node,
        project_id: str | None,
        lineage_id: uuid.UUID | None = None,
    ) -> None:
        """W2: every node is a message source; a question edit is a new revision of its
        lineage's source, anything else is revision 1 of its own."""
        is_question = node.kind is NodeKind.QUESTION
        source_id = lineage_id if is_question and lineage_id else uuid.UUID(node.id)
        await conn.execute(
            queries.INSERT_SOURCE_REVISION,
            source_id,
            node.version if is_question else 1,
            uuid.UUID(node.id),
            "user" if is_question else "assistant",
            node.text,
            project_id,
            uuid.UUID(node.tree_id),
            node.ordinal,
        )

    async def _citations(
        self, conn: asyncpg.Connection, requested: tuple[CitationRequest, ...], owner_tree: str
    ) -> tuple[dict[str, Any], ...]:
        """Snapshot each cited range as it is now; the snapshot never changes afterwards."""
        if not requested:
            return ()
        tree = await conn.fetchrow(queries.SELECT_TREE, _uuid(owner_tree, "tree_id"))
        if tree is None:
            raise NotFound("tree", owner_tree)
        owners = {tree["id"]: tree["owner"]}  # most citations stay in one or two trees
        snapshots = []
        cited_length = 0
        for i, citation in enumerate(requested):
            cited = await self._load(conn, citation.node_id, f"citations[{i}].node_id")
            self._expect_settled(cited, f"citations[{i}].node_id")
            if cited.tree_id not in owners:
                cited_tree = await conn.fetchrow(queries.SELECT_TREE, uuid.UUID(cited.tree_id))
                owners[cited.tree_id] = cited_tree["owner"]
            if owners[cited.tree_id] != tree["owner"]:
                raise PreconditionFailed(
                    f"citations[{i}] cites another person's conversation; cross-person "
                    "citations need an authorization, which is not offered yet",
                    {"field": f"citations[{i}].node_id"},
                )
            start, end = citation.start, citation.end or len(cited.text)
            if not 0 <= start <= end <= len(cited.text):
                raise InvalidInput.one(
                    f"citations[{i}].end",
                    f"range [{start}, {end}) is outside the cited text "
                    f"(length {len(cited.text)} code points)",
                )
            cited_length += end - start
            if cited_length > MAX_CITED:
                raise InvalidInput.one(
                    f"citations[{i}].end",
                    f"the cited ranges together pass {MAX_CITED:,} code points (the length of "
                    "the longest answer); cite narrower ranges",
                )
            snapshots.append(
                {
                    "node_id": cited.id,
                    "start": start,
                    "end": end,
                    "note": citation.note,
                    "snapshot": cited.text[start:end],
                }
            )
        return tuple(snapshots)

    async def ask_question(
        self, conn: asyncpg.Connection, question: NewQuestion
    ) -> tuple[Node, int]:
        """Append a question: a root, or a follow-up bound to the answer/continuation it
        continues from."""
        parent = None
        if question.parent_id is not None:
            # An unknown tree is NOT_FOUND before the parent is compared with it.
            tree_uuid = _uuid(question.tree_id, "tree_id")
            if await conn.fetchrow(queries.SELECT_TREE, tree_uuid) is None:
                raise NotFound("tree", question.tree_id)
            parent = await self._load(conn, question.parent_id, "parent_id")
            self._expect_kind(parent, "parent_id", NodeKind.ANSWER, NodeKind.CONTINUATION)
            self._same_tree(parent, question.tree_id, "parent_id")
            self._expect_settled(parent, "parent_id")
        citations = await self._citations(conn, question.citations, question.tree_id)
        return await self._append(
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

    @staticmethod
    def _expect_settled(node: Node, field: str) -> None:
        """Nothing builds on a bud that is still streaming: its text is not final yet."""
        if node.answer_state is AnswerState.STREAMING:
            raise PreconditionFailed(
                f"{field} {node.id!r} is still streaming; use it once it is sealed or frozen",
                {"field": field},
            )

    @staticmethod
    def _same_tree(node: Node, tree_id: str, field: str) -> None:
        if node.tree_id != str(_uuid(tree_id, "tree_id")):
            raise PreconditionFailed(
                f"{field} {node.id!r} belongs to another tree", {"field": field}
            )

    async def edit_question(self, conn: asyncpg.Connection, edit: QuestionEdit) -> tuple[Node, int]:
        """A new version beside the edited question; the old version stays as it was."""
        old = await self._load(conn, edit.question_id, "question_id")
        self._expect_kind(old, "question_id", NodeKind.QUESTION)
        if old.revision != edit.expected_revision:
            raise RevisionConflict("question", old.id, edit.expected_revision, old.revision)
        parent = await self._load(conn, old.parent_id, "parent_id") if old.parent_id else None
        lineage_id: uuid.UUID = await conn.fetchval(queries.LOCK_LINEAGE, uuid.UUID(old.id))
        version = await conn.fetchval(queries.NEXT_LINEAGE_VERSION, lineage_id)
        citations = await self._citations(conn, edit.citations, old.tree_id)
        return await self._append(
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

    async def add_answer(self, conn: asyncpg.Connection, answer: NewAnswer) -> tuple[Node, int]:
        """A candidate answer (complete, or a bud opened for streaming) under a question."""
        question = await self._load(conn, answer.question_id, "question_id")
        self._expect_kind(question, "question_id", NodeKind.QUESTION)
        realm = answer.realm
        if answer.extends_answer_id is not None:
            extended = await self._load(conn, answer.extends_answer_id, "extends_answer_id")
            if extended.parent_id != question.id or extended.kind is not NodeKind.ANSWER:
                raise PreconditionFailed(
                    f"extends_answer_id {extended.id!r} is not an answer of question "
                    f"{question.id!r}",
                    {"field": "extends_answer_id"},
                )
            if extended.answer_state is not AnswerState.FROZEN:
                raise PreconditionFailed(
                    f"extends_answer_id {extended.id!r} is {extended.answer_state}; only a "
                    "frozen (interrupted) answer is continued",
                    {"field": "extends_answer_id"},
                )
            # An extension continues the extended answer's text, so it stays in that answer's
            # realm and world (not the question's); another explicit realm is refused.
            inherited = RealmChoice(extended.realm, extended.world)
            if realm.realm is None:
                realm = inherited
            elif (realm.realm, realm.world) != (extended.realm, extended.world):
                raise PreconditionFailed(
                    f"extends_answer_id {extended.id!r} is in realm {extended.realm.value}"
                    f"{'/' + extended.world if extended.world else ''}; its extension must "
                    "stay there (leave open.realm unset to inherit it)",
                    {"field": "open.realm"},
                )
        node, revision = await self._append(
            conn,
            tree_id=question.tree_id,
            parent=question,
            kind=NodeKind.ANSWER,
            text=answer.text,
            realm=realm,
            answer_state=answer.state,
            extends_answer_id=answer.extends_answer_id,
            generated=answer.generated,
        )
        if answer.state is AnswerState.STREAMING:
            await conn.execute(queries.RENEW_BUD_LEASE, uuid.UUID(node.id), BUD_LEASE_S)
        return node, revision

    async def add_continuation(
        self, conn: asyncpg.Connection, continuation: NewContinuation
    ) -> tuple[Node, int]:
        answer = await self._load(conn, continuation.answer_id, "answer_id")
        self._expect_kind(answer, "answer_id", NodeKind.ANSWER)
        self._expect_settled(answer, "answer_id")
        return await self._append(
            conn,
            tree_id=answer.tree_id,
            parent=answer,
            kind=NodeKind.CONTINUATION,
            text=continuation.text,
            realm=continuation.realm,
            continuation_kind=continuation.kind,
            generated=continuation.generated,
        )

    async def adopt(
        self, conn: asyncpg.Connection, question_id: str, answer_id: str, expected: int
    ) -> Node:
        """Set the question's working entry; optimistic on the question's revision."""
        question = await self._load(conn, question_id, "question_id")
        self._expect_kind(question, "question_id", NodeKind.QUESTION)
        answer = await self._load(conn, answer_id, "answer_id")
        self._expect_kind(answer, "answer_id", NodeKind.ANSWER)
        if answer.parent_id != question.id:
            raise PreconditionFailed(
                f"answer_id {answer_id!r} answers another question", {"field": "answer_id"}
            )
        self._expect_settled(answer, "answer_id")
        if not answer.text:
            raise PreconditionFailed(
                f"answer_id {answer_id!r} holds no text: it froze before its first chunk was "
                "acknowledged; continue it or adopt another answer",
                {"field": "answer_id"},
            )
        row = await conn.fetchrow(
            queries.ADOPT_ANSWER, _uuid(question_id, "question_id"), uuid.UUID(answer_id), expected
        )
        if row is None:
            current = await self._load(conn, question_id, "question_id")
            raise RevisionConflict("question", question_id, expected, current.revision)
        return _node(row)

    async def canonicalize(
        self, conn: asyncpg.Connection, request: Canonicalization
    ) -> MainLineVersion:
        """Append a main-line version for the selection's scope; nothing earlier changes."""
        tree_uuid = _uuid(request.tree_id, "tree_id")
        tree = await conn.fetchrow(queries.SELECT_TREE, tree_uuid)
        if tree is None:
            raise NotFound("tree", request.tree_id)
        extended: dict[str, list[Node]] = {}  # the frozen parts of each node, loaded once
        if request.leaf_node_id is not None:
            leaf = await self._load(conn, request.leaf_node_id, "leaf_node_id")
            self._same_tree(leaf, request.tree_id, "leaf_node_id")
            rows = await conn.fetch(queries.SELECT_PATH, uuid.UUID(leaf.id), 0, MAX_CANON_NODES + 1)
            if len(rows) > MAX_CANON_NODES:
                raise PreconditionFailed(
                    f"the path to {leaf.id!r} is longer than {MAX_CANON_NODES} nodes; select "
                    "the nodes to canonicalize instead",
                    {"field": "leaf_node_id"},
                )
            nodes = [_node(r) for r in rows]
        else:
            ids = [_uuid(n, f"nodes.node_ids[{i}]") for i, n in enumerate(request.node_ids)]
            found = {r["id"]: _node(r) for r in await conn.fetch(queries.SELECT_NODES, ids)}
            for i, node_id in enumerate(request.node_ids):
                if str(uuid.UUID(node_id)) not in found:
                    raise NotFound("node", node_id)
                self._same_tree(
                    found[str(uuid.UUID(node_id))], request.tree_id, f"nodes.node_ids[{i}]"
                )
            # Selected parts of a selected extension's answer join the main line through it.
            for node in found.values():
                extended[node.id] = await self._extended_parts(conn, node)
            selected_parts = {p.id for chain in extended.values() for p in chain}
            nodes = sorted(
                (n for n in found.values() if n.id not in selected_parts), key=lambda n: n.ordinal
            )
            # A main line is one line of the conversation: every selected node must be an
            # ancestor of the last one (gaps allowed), never a competing sibling branch. A
            # parent is always older, so the last in tree order is the deepest.
            leaf = nodes[-1]
            on_path = selected_parts | {
                r["id"] for r in await conn.fetch(queries.ON_PATH_TO, uuid.UUID(leaf.id), ids)
            }
            for i, node_id in enumerate(request.node_ids):
                if str(uuid.UUID(node_id)) not in on_path:
                    raise InvalidInput.one(
                        f"nodes.node_ids[{i}]",
                        f"is not on the path from the root to {leaf.id!r}; selected nodes "
                        "must lie on one path (each an ancestor of the next), not on "
                        "competing branches",
                    )
        # An extension completes the frozen answer it continues: the main line holds the
        # whole answer, its frozen parts (oldest first) right before the extension.
        whole: list[Node] = []
        parts: set[str] = set()
        for node in nodes:
            if node.id not in extended:
                extended[node.id] = await self._extended_parts(conn, node)
            parts.update(p.id for p in extended[node.id])
            whole += [*extended[node.id], node]
        nodes = whole
        for node in nodes:
            if node.id in parts:
                continue
            if node.answer_state in (AnswerState.STREAMING, AnswerState.FROZEN):
                raise PreconditionFailed(
                    f"node {node.id!r} is a {node.answer_state.value} answer; only complete "
                    "answers are canonicalized (continue generating, or select another)",
                    {"node_id": node.id},
                )
        try:
            scope, world = rule_canonical_scope([(n.realm, n.world) for n in nodes])
        except RealmPolicyError as exc:
            raise PreconditionFailed(str(exc), {"reason": "realm_policy"}) from None
        key = (tree_uuid, scope.value, world)
        if request.expected_version == 0:
            version = await conn.fetchval(queries.START_MAIN_LINE, *key)
        else:
            version = await conn.fetchval(queries.ADVANCE_MAIN_LINE, *key, request.expected_version)
        if version is None:
            current = await conn.fetchval(queries.MAIN_LINE_HEAD, *key) or 0
            raise RevisionConflict(
                f"main line {scope.value}{'/' + world if world else ''}",
                request.tree_id,
                request.expected_version,
                current,
            )
        previous = await conn.fetchval(queries.MAIN_LINE_VERSION_ID, *key, version - 1)
        version_id = uuid.uuid4()
        created_at = await conn.fetchval(
            queries.INSERT_MAIN_LINE_VERSION,
            version_id,
            tree_uuid,
            scope.value,
            world,
            version,
            [uuid.UUID(n.id) for n in nodes],
            json.dumps([_node_json(n) for n in nodes], ensure_ascii=False),
            request.confirmed_by,
            request.invitation_id,
            previous,
        )
        candidates = []
        for kind, detail in CANON_POLICIES[scope].candidates:
            candidate_id = uuid.uuid4()
            await conn.execute(queries.INSERT_CANDIDATE, candidate_id, version_id, kind, detail)
            candidates.append(CanonCandidate(str(candidate_id), kind, detail, "pending"))
        created = MainLineVersion(
            id=str(version_id),
            tree_id=request.tree_id,
            scope=scope,
            world=world,
            version=version,
            node_ids=tuple(n.id for n in nodes),
            snapshot=tuple(nodes),
            confirmed_by=request.confirmed_by,
            created_at=created_at,
            candidates=tuple(candidates),
            replaces_version_id=str(previous) if previous else None,
        )
        await self._project_canonicalization(conn, created, tree)
        return created

    async def _extended_parts(self, conn: asyncpg.Connection, node: Node) -> list[Node]:
        """The frozen answers `node` continues, oldest first (empty unless it extends one)."""
        parts: list[Node] = []
        while node.extends_answer_id is not None:
            node = await self._load(conn, node.extends_answer_id, "extends_answer_id")
            parts.insert(0, node)
        return parts

    async def _project_canonicalization(
        self, conn: asyncpg.Connection, version: MainLineVersion, tree: asyncpg.Record
    ) -> None:
        """W3, in the canonicalization's own transaction: the version appears in the story
        graph as a confirmed decision, replacing the previous version's decision when that
        one is in the same scope (a tree that changed project, or a version older than the
        projection, gets a coverage gap instead of an unevidenced link)."""
        project_id = tree["project_id"]
        scope_key = (
            ScopeValue.of_projects([project_id]) if project_id else ScopeValue.global_scope()
        ).key
        previous_in_scope = None
        gaps: tuple[str, ...] = ()
        if version.replaces_version_id:
            found = await conn.fetchval(
                queries.OBJECT_IN_SCOPE,
                scope_key,
                "event",
                canon_projection.event_id(version.replaces_version_id),
            )
            if found:
                previous_in_scope = version.replaces_version_id
            else:
                gaps = (
                    f"version {version.version - 1} of this main line has no decision event in "
                    "this scope, so no replaces relation is recorded for it",
                )
        review = canon_projection.projection(version, tree["title"], project_id, previous_in_scope)
        review = dataclasses.replace(review, coverage_gaps=gaps)
        await self.record_review(conn, review, hashlib.sha256(review.result_id.encode()).digest())

    # ---- reads ----------------------------------------------------------------------------

    async def get_node(self, node_id: str) -> Node:
        async with self._pool.acquire() as conn:
            return await self._load(conn, node_id, "node_id")

    async def get_path(self, node_id: str, offset: int, limit: int) -> tuple[list[Node], int]:
        """One page of the path root → node, and the path's length."""
        node_uuid = _uuid(node_id, "node_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(queries.SELECT_PATH, node_uuid, offset, limit)
            if not rows:  # past the end, or no such node
                first = await conn.fetchrow(queries.SELECT_PATH, node_uuid, 0, 1)
                if first is None:
                    raise NotFound("node", node_id)
                return [], first["path_length"]
        return [_node(r) for r in rows], rows[0]["path_length"]

    async def list_nodes(self, tree_id: str, after_ordinal: int, limit: int) -> list[Node]:
        tree_uuid = _uuid(tree_id, "tree_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(queries.LIST_NODES, tree_uuid, after_ordinal, limit)
            if not rows and await conn.fetchrow(queries.SELECT_TREE, tree_uuid) is None:
                raise NotFound("tree", tree_id)
        return [_node(r) for r in rows]

    async def list_main_line_versions(
        self,
        tree_id: str,
        scope: CanonicalScope | None,
        world: str,
        after_version_id: str | None,
        limit: int,
    ) -> list[ListedVersion]:
        """Versions newest first, those after `after_version_id` (a page token: the last
        version of the previous page), at most `limit`; without their snapshots."""
        tree_uuid = _uuid(tree_id, "tree_id")
        foreign = InvalidInput.one(
            "page_token", "is not a page token of this tree's main-line versions"
        )
        try:
            after = uuid.UUID(after_version_id) if after_version_id else None
        except ValueError:
            raise foreign from None
        async with self._pool.acquire() as conn:
            if await conn.fetchrow(queries.SELECT_TREE, tree_uuid) is None:
                raise NotFound("tree", tree_id)
            if after is not None and not await conn.fetchval(
                queries.MAIN_LINE_VERSION_OF_TREE, after, tree_uuid
            ):
                raise foreign
            rows = await conn.fetch(
                queries.LIST_MAIN_LINE_VERSIONS,
                tree_uuid,
                scope.value if scope else None,
                world,
                after,
                limit,
            )
        return [_listed_version(r) for r in rows]

    async def with_snapshots(self, versions: list[MainLineVersion]) -> list[MainLineVersion]:
        """The versions, in their order, with their snapshots read."""
        rows = await self._pool.fetch(queries.MAIN_LINE_SNAPSHOTS, [v.id for v in versions])
        snapshots = {r["id"]: json.loads(r["snapshot"]) for r in rows}
        return [
            dataclasses.replace(v, snapshot=tuple(_node_from_json(n) for n in snapshots[v.id]))
            for v in versions
        ]

    async def main_line_snapshot(
        self, version_id: str, offset: int, limit: int
    ) -> tuple[list[Node], int]:
        """One page of a version's snapshot from zero-based `offset`, and its length."""
        version_uuid = _uuid(version_id, "version_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(queries.MAIN_LINE_SNAPSHOT_PAGE, version_uuid, offset, limit)
            if not rows:  # past the end, or no such version
                length = await conn.fetchval(queries.MAIN_LINE_SNAPSHOT_LENGTH, version_uuid)
                if length is None:
                    raise NotFound("main-line version", version_id)
                return [], length
        return [_node_from_json(json.loads(r["node"])) for r in rows], rows[0]["snapshot_length"]

    # ---- buds -------------------------------------------------------------------------------

    async def renew_bud_lease(self, node_id: str) -> bool:
        """Extend the lease of a streaming bud; False once it has ended."""
        status = await self._pool.execute(queries.RENEW_BUD_LEASE, uuid.UUID(node_id), BUD_LEASE_S)
        return bool(status == "UPDATE 1")

    async def freeze_expired_buds(self, limit: int = 100) -> list[str]:
        """Freeze buds whose stream stopped renewing its lease; returns their ids."""
        expired = [r["id"] for r in await self._pool.fetch(queries.EXPIRED_BUDS, limit)]
        frozen = []
        for node_id in expired:
            try:
                await self.end_bud(node_id, AnswerState.FROZEN, StopReason.SERVER_LOST, Generated())
            except PreconditionFailed:
                continue  # it ended another way meanwhile
            frozen.append(node_id)
        return frozen

    async def end_bud(
        self, node_id: str, state: AnswerState, stop_reason: str | None, generated: Generated
    ) -> tuple[Node, str]:
        """Seal or freeze a streaming bud with its acknowledged chunks; returns it and the LSN."""
        _, summary, evidence, tool_trace = _generated_json(generated)
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute(queries.LOCK_STREAMING_BUD, uuid.UUID(node_id))
                row = await conn.fetchrow(
                    queries.END_BUD,
                    uuid.UUID(node_id),
                    state.value,
                    stop_reason,
                    summary,
                    evidence,
                    tool_trace,
                )
                if row is None:
                    current = await self._load(conn, node_id, "answer_id")
                    raise PreconditionFailed(
                        f"bud {node_id!r} is already {current.answer_state}; it cannot end twice",
                        {"answer_state": str(current.answer_state)},
                    )
                node = _node(row)
                tree = await conn.fetchrow(queries.SELECT_TREE, uuid.UUID(node.tree_id))
                await self._record_source(conn, node, tree["project_id"])
            return node, await self.commit_lsn(conn)

    async def commit_lsn(self, conn: asyncpg.Connection) -> str:
        inserted = parse_lsn(await conn.fetchval(queries.CURRENT_LSN))
        return format_lsn(commit_point(inserted, *self._wal_geometry))

    # ---- story graph ingestion ----------------------------------------------------------

    async def record_review(
        self, conn: asyncpg.Connection, review: ReviewResult, request_hash: bytes
    ) -> RecordedReview:
        """Insert a review result and all its objects, or return the identical earlier one."""
        existing = await conn.fetchval(queries.SELECT_REVIEW_HASH, review.result_id)
        if existing is not None:
            if bytes(existing) != request_hash:
                raise IdempotencyKeyReused(review.result_id, "RecordReview (result_id)")
            row = await conn.fetchrow(queries.SELECT_REVIEW_RESULT, review.result_id)
            return RecordedReview(
                review.result_id, row["recorded_at"], row["graph_revision"], row["object_count"]
            )
        # Everything checked against earlier results is checked under the scope's lock, so a
        # result committing concurrently in the same scope is either seen or waits.
        await conn.execute(queries.LOCK_SCOPE_REVISIONS, review.scope.key)
        pinned, missing = await TreeStore._resolve_external(conn, review)
        refused = missing + await TreeStore._source_reference_conflicts(conn, review)
        if refused:
            raise InvalidInput(refused)
        try:
            head = await conn.fetchrow(
                queries.INSERT_REVIEW_RESULT,
                review.result_id,
                review.scope.key,
                list(review.scope.projects),
                review.phase,
                review.covered_from,
                review.covered_to,
                review.review_generated_at,
                list(review.excluded_source_types),
                request_hash,
                list(review.coverage_gaps),
                len(review.objects),
            )
        except asyncpg.UniqueViolationError:
            # A concurrent ingestion of the same result id committed first.
            raise PreconditionFailed(
                f"result {review.result_id!r} is being recorded concurrently; retry",
                {"field": "result_id"},
            ) from None
        recorded_at = head["recorded_at"]
        local = {
            (o.object_type.value, o.object_id): {
                "recorded_in": review.result_id,
                "object_revision": o.object_revision,
            }
            for o in review.objects
        }
        records: list[tuple[Any, ...]] = [
            (
                review.result_id,
                obj.object_type.value,
                obj.object_id,
                obj.object_type.rank,
                review.scope.key,
                obj.title,
                obj.body,
                obj.kind,
                obj.object_revision,
                obj.confirmation_state,
                obj.event_time.start,
                obj.event_time.end,
                obj.event_time.precision or None,
                obj.event_time.basis or None,
                review.review_generated_at,
                recorded_at,
                json.dumps(_pin_ends(obj.details, local | pinned), ensure_ascii=False),
                sorted({to_id for link, _, to_id in obj.links if link == "cites"}),
            )
            for obj in review.objects
        ]
        await conn.copy_records_to_table(
            "graph_objects", records=records, columns=queries.GRAPH_OBJECT_COLUMNS
        )
        links = {
            (review.scope.key, review.result_id, o.object_type.value, o.object_id, *link)
            for o in review.objects
            for link in o.links
        }
        if links:
            await conn.copy_records_to_table(
                "graph_links", records=sorted(links), columns=queries.GRAPH_LINK_COLUMNS
            )
        await self._keep_hubs(conn, review, links)
        return RecordedReview(review.result_id, recorded_at, head["graph_revision"], len(records))

    async def _keep_hubs(
        self,
        conn: asyncpg.Connection,
        review: ReviewResult,
        links: set[tuple[str, str, str, str, str, str, str]],
    ) -> None:
        """Add what a result just written brings to the hubs' stored members, then make hubs of
        the objects its links bring to the threshold (mirrortree.neighbourhoods). `links` are
        its graph_links rows (scope, result, from type, from id, link, to type, to id)."""
        scope_key, result_id = review.scope.key, review.result_id
        # Planned for these arrays' sizes every time, never as a generic plan (see
        # MAINTAIN_HUB_MEMBERS); the setting ends with the transaction.
        await conn.execute(queries.FORCE_CUSTOM_PLANS)
        await conn.execute(
            neighbourhoods.MAINTAIN_HUB_MEMBERS,
            scope_key,
            result_id,
            [link[2] for link in links],
            [link[3] for link in links],
            [link[5] for link in links],
            [link[6] for link in links],
            [o.object_type.value for o in review.objects],
            [o.object_id for o in review.objects],
        )
        for row in await conn.fetch(neighbourhoods.NEW_HUBS, scope_key, result_id, self.hub_links):
            await conn.execute(neighbourhoods.FILL_HUB_MEMBERS, scope_key, row["t"], row["id"])

    async def apply_hub_threshold(self) -> int:
        """Make hubs of every object with `hub_links` links or more that is not one yet, when
        no lower threshold was applied before; returns how many were made. Each hub is filled
        in its own transaction under its scope's lock, so ingestions are not held for long."""
        applied = await self._pool.fetchval(queries.HUB_THRESHOLD_APPLIED)
        if applied is not None and applied <= self.hub_links:
            return 0
        made = 0
        for row in await self._pool.fetch(neighbourhoods.OBJECTS_OVER_THRESHOLD, self.hub_links):
            async with self._pool.acquire() as conn, conn.transaction():
                await conn.execute(queries.LOCK_SCOPE_REVISIONS, row["scope_key"])
                await conn.execute(
                    neighbourhoods.FILL_HUB_MEMBERS, row["scope_key"], row["t"], row["id"]
                )
            made += 1
        await self._pool.execute(queries.RECORD_HUB_THRESHOLD, self.hub_links)
        return made

    @staticmethod
    async def _resolve_external(
        conn: asyncpg.Connection, review: ReviewResult
    ) -> tuple[dict[tuple[str, str], dict[str, Any]], list[FieldViolation]]:
        """Find every end this result names outside itself, in earlier results of the same
        scope (or, for preferences, among the preferences that apply to the scope). Found ones
        are returned with the version that was recorded, so relation ends are pinned to a
        version; each field naming a missing one is a violation that refuses the result."""
        # Many fields may name one object (every event of a result involving one entity):
        # each object is looked up once.
        wanted = {(r.object_type, r.object_id) for r in review.external_references}
        graph_refs = sorted(key for key in wanted if key[0] != "preference")
        preference_ids = sorted(object_id for kind, object_id in wanted if kind == "preference")
        found: dict[tuple[str, str], dict[str, Any]] = {}
        if graph_refs:
            for row in await conn.fetch(
                queries.NEWEST_COPIES_IN_SCOPE,
                review.scope.key,
                [object_type for object_type, _ in graph_refs],
                [object_id for _, object_id in graph_refs],
            ):
                found[(row["object_type"], row["object_id"])] = {
                    "recorded_in": row["result_id"],
                    "object_revision": row["object_revision"],
                }
        if preference_ids:
            for row in await conn.fetch(queries.SELECT_PREFERENCES_BY_ID, preference_ids):
                if review.scope.is_global or row["scope_key"] in (
                    "global",
                    *(ScopeValue.of_projects([p]).key for p in review.scope.projects),
                ):
                    found[("preference", row["id"])] = {"preference_revision": str(row["revision"])}
        missing = [
            FieldViolation(
                r.field,
                f"names preference {r.object_id!r}, which does not exist or does not apply to "
                f"{review.scope.describe()}"
                if r.object_type == "preference"
                else f"names {r.object_type} {r.object_id!r}, which is neither in this result "
                f"nor in an earlier result of {review.scope.describe()}",
            )
            for r in review.external_references
            if (r.object_type, r.object_id) not in found
        ]
        return found, missing

    @staticmethod
    async def _source_reference_conflicts(
        conn: asyncpg.Connection, review: ReviewResult
    ) -> list[FieldViolation]:
        """Source reference ids that an earlier result of the same scope recorded with other
        content. Readers resolve a reference id to one saved fragment, so a second content
        under the same id would silently change the evidence of every earlier citation;
        citing it again with the same content is fine."""
        references = [o for o in review.objects if o.object_type is ObjectType.SOURCE_REFERENCE]
        if not references:
            return []
        mine = {o.object_id: o for o in references}
        rows = await conn.fetch(
            queries.SOURCE_REFERENCE_CONFLICTS,
            review.scope.key,
            [o.object_id for o in references],
            [o.body for o in references],
            [json.dumps(o.details, ensure_ascii=False) for o in references],
        )
        violations = []
        for row in rows:
            obj = mine[row["object_id"]]
            differs = _source_reference_differences(row["body"], json.loads(row["details"]), obj)
            field = review.fields.get(
                (obj.object_type.value, obj.object_id), f"source_reference {obj.object_id}"
            )
            violations.append(
                FieldViolation(
                    f"{field}.id",
                    f"source reference {obj.object_id!r} was recorded by earlier result "
                    f"{row['result_id']!r} of {review.scope.describe()} with another "
                    f"{'; '.join(differs)}. A reference id keeps the content it was first "
                    "recorded with: cite it with that same content, or record this fragment "
                    "under a new id",
                )
            )
        return violations

    # ---- sources and preferences --------------------------------------------------------

    @staticmethod
    async def record_source(conn: asyncpg.Connection, new: NewSourceRevision) -> SourceRecord:
        """Create (expected revision 0) or replace a source's current text; older text is
        not kept, so references to an older revision read as unavailable."""
        current = await conn.fetchrow(queries.SELECT_SOURCE_FOR_UPDATE, new.source_id)
        if current is None:
            if new.expected_revision != 0:
                raise RevisionConflict("source", new.source_id, new.expected_revision, 0)
            row = await conn.fetchrow(
                queries.INSERT_SOURCE,
                new.source_id,
                new.source_type,
                new.project_id,
                new.title,
                new.text,
            )
            if row is None:  # a concurrent create of the same id won
                raise RevisionConflict("source", new.source_id, 0, 1)
        else:
            if current["source_type"] != new.source_type:
                raise InvalidInput.one(
                    "source_type",
                    f"source {new.source_id!r} is a {current['source_type']}; a source keeps "
                    "its type",
                )
            if new.expected_revision != current["revision"]:
                raise RevisionConflict(
                    "source", new.source_id, new.expected_revision, current["revision"]
                )
            row = await conn.fetchrow(
                queries.UPDATE_SOURCE, new.source_id, new.project_id, new.title, new.text
            )
        return SourceRecord(new.source_id, row["revision"], row["updated_at"])

    @staticmethod
    async def set_preference(conn: asyncpg.Connection, new: NewPreference) -> PreferenceRecord:
        about = json.dumps(list(new.about))
        args = (new.scope.key, new.subject, new.text, about, new.confirmed_by)
        current = await conn.fetchval(queries.SELECT_PREFERENCE_FOR_UPDATE, new.preference_id)
        if current is None:
            if new.expected_revision != 0:
                raise RevisionConflict("preference", new.preference_id, new.expected_revision, 0)
            row = await conn.fetchrow(queries.INSERT_PREFERENCE, new.preference_id, *args)
            if row is None:
                raise RevisionConflict("preference", new.preference_id, 0, 1)
        else:
            if new.expected_revision != current:
                raise RevisionConflict(
                    "preference", new.preference_id, new.expected_revision, current
                )
            row = await conn.fetchrow(queries.UPDATE_PREFERENCE, new.preference_id, *args)
        return PreferenceRecord(
            new.preference_id,
            new.scope,
            new.subject,
            new.text,
            new.about,
            new.confirmed_by,
            row["revision"],
            row["updated_at"],
        )

    # ---- bindings -----------------------------------------------------------------------

    @staticmethod
    async def create_binding(
        conn: asyncpg.Connection, session_id: str, runtime: str, allowed_scopes: list[str]
    ) -> IssuedBinding:
        session_uuid = _uuid(session_id, "session_id")
        tree = await conn.fetchrow(queries.SELECT_TREE, session_uuid)
        if tree is None:
            raise NotFound("session", session_id)
        binding_id = uuid.uuid4()
        token = f"mtb_{secrets.token_urlsafe(32)}"
        await conn.execute(
            queries.INSERT_BINDING,
            binding_id,
            token_hash(token),
            session_uuid,
            runtime,
            allowed_scopes,
        )
        return IssuedBinding(str(binding_id), token, session_id, runtime, tree["project_id"])


def _source_reference_differences(
    body: str, details: dict[str, Any], obj: StoryObject
) -> list[str]:
    """What of a source reference differs between an earlier stored copy and `obj`, in the
    request's field names, with short values shown as (earlier, now)."""
    new = obj.details
    differs = []
    if body != obj.body:
        differs.append("fragment")
    for name in ("source_type", "source_id", "source_version"):
        if details.get(name) != new.get(name):
            differs.append(f"{name} ({details.get(name)!r} there, {new.get(name)!r} here)")
    earlier = (details.get("fragment_start"), details.get("fragment_end"))
    now = (new.get("fragment_start"), new.get("fragment_end"))
    if earlier != now:
        differs.append(
            f"fragment range ([{earlier[0]}, {earlier[1]}) there, [{now[0]}, {now[1]}) here)"
        )
    locator_then, locator_now = details.get("locator") or {}, new.get("locator") or {}
    differs.extend(
        f"locator.{name} ({locator_then.get(name)!r} there, {locator_now.get(name)!r} here)"
        for name in sorted(set(locator_then) | set(locator_now))
        if locator_then.get(name) != locator_now.get(name)
    )
    # An older copy may hold details this version no longer writes: then only "content".
    return differs or ["content"]


def _pin_ends(
    details: dict[str, Any], recorded: dict[tuple[str, str], dict[str, Any]]
) -> dict[str, Any]:
    """A relation's details with each end pinned to a version: the revision the review gave,
    else the copy recorded by the newest result holding that end (never a guess)."""
    if "relation_kind" not in details:
        return details
    pinned = dict(details)
    for name in ("from", "to"):
        end = dict(details[name])
        if end.get("type"):
            end["version"] = (
                {"revision": end["revision"], "given_by": "review"}
                if end.get("revision")
                else {**recorded.get((end["type"], end["id"]), {}), "given_by": "recorded_copy"}
            )
        pinned[name] = end
    return pinned


@dataclass
class _PendingChunk:
    node_id: uuid.UUID
    seq: int
    text: str
    done: asyncio.Future[str]  # resolves to the commit LSN once durable


class ChunkCommitter:
    """Group commit for bud chunks.

    Every open bud hands its chunks here; one writer task commits whatever has accumulated in
    one transaction, so a hundred buds streaming at once cost a handful of commits, not a
    hundred. A chunk's future resolves only after its transaction committed (its
    acknowledgement is then safe to send); a chunk for a bud that is no longer streaming fails
    instead of being stored.
    """

    def __init__(self, store: TreeStore, max_batch: int = 2000) -> None:
        self._store = store
        self._queue: asyncio.Queue[_PendingChunk] = asyncio.Queue()
        self._max_batch = max_batch
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="chunk-committer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        while not self._queue.empty():
            pending = self._queue.get_nowait()
            if not pending.done.done():
                pending.done.set_exception(PreconditionFailed("the service is shutting down"))

    async def submit(self, node_id: str, seq: int, text: str) -> str:
        """Store one chunk durably; returns the commit LSN. Idempotent per (bud, seq)."""
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self._queue.put(_PendingChunk(uuid.UUID(node_id), seq, text, done))
        return await done

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < self._max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                await self._commit(batch)
            except Exception as exc:  # the whole batch failed: report it to every waiter
                for pending in batch:
                    if not pending.done.done():
                        pending.done.set_exception(exc)

    async def _commit(self, batch: list[_PendingChunk]) -> None:
        texts: dict[tuple[uuid.UUID, int], str] = {}
        async with self._store.pool.acquire() as conn:
            async with conn.transaction():
                ids = list({p.node_id for p in batch})
                live = {r["id"] for r in await conn.fetch(queries.LOCK_STREAMING_BUDS, ids)}
                accepted = [p for p in batch if p.node_id in live]
                if accepted:
                    await conn.execute(
                        queries.INSERT_CHUNKS,
                        [p.node_id for p in accepted],
                        [p.seq for p in accepted],
                        [p.text for p in accepted],
                    )
                    stored = await conn.fetch(
                        queries.SELECT_CHUNKS,
                        [p.node_id for p in accepted],
                        [p.seq for p in accepted],
                    )
                    texts = {(r["node_id"], r["seq"]): r["text"] for r in stored}
                    await conn.execute(
                        queries.RECORD_ACKED_CHUNKS,
                        [p.node_id for p in accepted],
                        [p.seq for p in accepted],
                    )
            lsn = await self._store.commit_lsn(conn)
        for pending in batch:
            if pending.done.done():
                continue
            if pending.node_id not in live:
                pending.done.set_exception(
                    PreconditionFailed(
                        f"bud {pending.node_id} is no longer streaming; chunk {pending.seq} "
                        "was refused",
                        {"seq": str(pending.seq)},
                    )
                )
            elif texts.get((pending.node_id, pending.seq)) != pending.text:
                pending.done.set_exception(
                    InvalidInput.one(
                        "chunk.text",
                        f"chunk {pending.seq} was already stored with different text; a "
                        "re-sent chunk must repeat the original exactly",
                    )
                )
            else:
                pending.done.set_result(lsn)
