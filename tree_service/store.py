"""Persistence of the tree service: the only module that touches asyncpg.

Every write runs in one transaction on the primary. Idempotency is settled inside that same
transaction: the key is claimed first (a concurrent retry blocks on the unique index until the
first commits, then replays its stored response), so a retry can never write twice.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import asyncpg

from mirrortree.lsn import commit_point, format_lsn, parse_lsn
from tree_service import queries
from tree_service.domain import (
    IssuedBinding,
    NewQuestion,
    NewTree,
    Node,
    NodeKind,
    Realm,
    RecordedReview,
    ReviewResult,
    Tree,
)
from tree_service.errors import (
    IdempotencyKeyReused,
    InvalidInput,
    NotFound,
    PreconditionFailed,
)

T = TypeVar("T")


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

    def __init__(self, pool: asyncpg.Pool, wal_block_size: int, wal_segment_size: int) -> None:
        self._pool = pool
        self._wal_geometry = (wal_block_size, wal_segment_size)

    @classmethod
    async def connect(cls, dsn: str, min_size: int = 2, max_size: int = 20) -> TreeStore:
        pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size)
        geometry = await pool.fetchrow(queries.WAL_GEOMETRY)
        return cls(pool, geometry["block_size"], geometry["segment_size"])

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
            inserted = parse_lsn(await conn.fetchval(queries.CURRENT_LSN))
        lsn = format_lsn(commit_point(inserted, *self._wal_geometry))
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
        )
        return _tree(row)

    async def get_tree(self, tree_id: str) -> Tree:
        row = await self._pool.fetchrow(queries.SELECT_TREE, _uuid(tree_id, "tree_id"))
        if row is None:
            raise NotFound("tree", tree_id)
        return _tree(row)

    @staticmethod
    async def ask_question(conn: asyncpg.Connection, question: NewQuestion) -> tuple[Node, int]:
        """Append a question node; returns it with the tree's new revision."""
        tree_uuid = _uuid(question.tree_id, "tree_id")
        parent_uuid = (
            _uuid(question.parent_id, "parent_id") if question.parent_id is not None else None
        )
        bumped = await conn.fetchrow(queries.BUMP_TREE_FOR_APPEND, tree_uuid)
        if bumped is None:
            raise NotFound("tree", question.tree_id)
        realm = question.realm or Realm(bumped["default_realm"])
        if parent_uuid is not None:
            parent = await conn.fetchrow(queries.SELECT_NODE_PARENT, parent_uuid)
            if parent is None:
                raise NotFound("node", str(question.parent_id))
            if parent["tree_id"] != str(tree_uuid):
                raise PreconditionFailed(
                    f"parent_id {question.parent_id!r} belongs to another tree",
                    {"field": "parent_id"},
                )
            if question.realm is None:
                realm = Realm(parent["realm"])
        row = await conn.fetchrow(
            queries.INSERT_NODE,
            uuid.uuid4(),
            tree_uuid,
            parent_uuid,
            NodeKind.QUESTION.value,
            realm.value,
            question.text,
            bumped["node_count"],
        )
        return _node(row), bumped["revision"]

    async def list_nodes(self, tree_id: str, after_ordinal: int, limit: int) -> list[Node]:
        tree_uuid = _uuid(tree_id, "tree_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(queries.LIST_NODES, tree_uuid, after_ordinal, limit)
            if not rows and await conn.fetchrow(queries.SELECT_TREE, tree_uuid) is None:
                raise NotFound("tree", tree_id)
        return [_node(r) for r in rows]

    # ---- story graph ingestion ----------------------------------------------------------

    @staticmethod
    async def record_review(
        conn: asyncpg.Connection, review: ReviewResult, request_hash: bytes
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
            )
        except asyncpg.UniqueViolationError:
            # A concurrent ingestion of the same result id committed first.
            raise PreconditionFailed(
                f"result {review.result_id!r} is being recorded concurrently; retry",
                {"field": "result_id"},
            ) from None
        recorded_at = head["recorded_at"]
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
                json.dumps(obj.details, ensure_ascii=False),
            )
            for obj in review.objects
        ]
        await conn.copy_records_to_table(
            "graph_objects", records=records, columns=queries.GRAPH_OBJECT_COLUMNS
        )
        return RecordedReview(review.result_id, recorded_at, head["graph_revision"], len(records))

    # ---- bindings -----------------------------------------------------------------------

    @staticmethod
    async def create_binding(
        conn: asyncpg.Connection, session_id: str, runtime: str
    ) -> IssuedBinding:
        session_uuid = _uuid(session_id, "session_id")
        tree = await conn.fetchrow(queries.SELECT_TREE, session_uuid)
        if tree is None:
            raise NotFound("session", session_id)
        binding_id = uuid.uuid4()
        token = f"mtb_{secrets.token_urlsafe(32)}"
        await conn.execute(
            queries.INSERT_BINDING, binding_id, token_hash(token), session_uuid, runtime
        )
        return IssuedBinding(str(binding_id), token, session_id, runtime, tree["project_id"])
