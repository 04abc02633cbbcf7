"""Reads of the graph service: the only module that touches asyncpg.

Each query runs in one REPEATABLE READ READ ONLY transaction on a replica, so a page, its
counts, its coverage and its read revision all come from one snapshot.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import asyncpg

from graph_service import queries
from graph_service.errors import (
    HistoricalVersionUnavailable,
    NotFound,
    ScopeMismatch,
    SourceUnavailable,
    StaleCursor,
    Unauthenticated,
)
from graph_service.replicas import ReplicaRouter
from graph_service.views import (
    COUNT_BUDGET_MS,
    COUNT_CAP,
    Caller,
    CoverageView,
    CoveredResult,
    MatchCounts,
    ResolvedScope,
    SearchPage,
    SearchRow,
    SourceRead,
    SourceView,
    TimeFilter,
)

COVERAGE_LIMIT = 20


def like_pattern(query: str) -> str:
    """A contiguous-substring ILIKE pattern with the user's %, _ and \\ escaped."""
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class GraphStore:
    """Read-only queries over the replicas."""

    def __init__(self, router: ReplicaRouter, consistency_wait_s: float) -> None:
        self._router = router
        self._wait = consistency_wait_s

    async def resolve_binding(self, token: str) -> Caller:
        digest = hashlib.sha256(token.encode()).digest()

        async def read(conn: asyncpg.Connection) -> Caller:
            row = await conn.fetchrow(queries.BINDING_BY_TOKEN_HASH, digest)
            if row is None:
                raise Unauthenticated("the binding token is unknown or revoked")
            return Caller(row["session_id"], row["project_id"], row["runtime"], row["binding_id"])

        return await self._router.run(read)

    async def session_project(self, session_id: str, min_lsn: str) -> tuple[bool, str | None]:
        """(session exists, its current project)."""
        try:
            session_uuid = uuid.UUID(session_id)
        except ValueError:
            return False, None

        async def read(conn: asyncpg.Connection) -> tuple[bool, str | None]:
            row = await conn.fetchrow(queries.SESSION_PROJECT, session_uuid)
            return (row is not None, row["project_id"] if row else None)

        return await self._router.run(read, min_lsn=min_lsn, wait_s=self._wait)

    async def search(
        self,
        *,
        query: str,
        scope: ResolvedScope,
        object_types: list[str],
        time_filter: TimeFilter,
        page_size: int,
        position: list[Any] | None,
        expected_revision: int | None,
        carried_counts: MatchCounts | None,
        min_lsn: str,
    ) -> SearchPage:
        """One page of search hits after `position` (None = first page).

        Counts are taken on the first page only and carried by the cursor afterwards: the
        cursor pins the read revision, so they cannot change while paging.
        """
        scope_key = scope.resolved.key
        filters = (scope_key, object_types, like_pattern(query))
        time_args = (time_filter.start, time_filter.end, time_filter.basis)

        async def read(conn: asyncpg.Connection) -> SearchPage:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                revision = await conn.fetchval(queries.READ_REVISION, scope_key)
                if expected_revision is not None and revision != expected_revision:
                    raise StaleCursor(
                        "the story graph in this scope changed since the first page; "
                        "run the search again from the first page",
                        {"cursor_revision": str(expected_revision), "current": str(revision)},
                    )
                rows = await self._search_tiers(
                    conn, (*filters, *time_args), position, page_size + 1
                )
                counts = carried_counts or await self._count_matches(
                    conn, filters, time_args, time_filter
                )
                page_rows = rows[:page_size]
                sources = await self._sources(conn, page_rows)
                coverage = await self._coverage(conn, scope_key)
                read_at = await conn.fetchval("SELECT clock_timestamp()")
            hits = tuple(_search_row(score, r, sources) for score, r in page_rows)
            last = hits[-1] if hits else None
            return SearchPage(
                rows=hits,
                has_more=len(rows) > page_size,
                counts=counts,
                coverage=coverage,
                read_revision=revision,
                read_at=read_at,
                scope=scope,
                position=(
                    [last.score, last.type_rank, last.object_id, last.result_id] if last else []
                ),
            )

        return await self._router.run(read, min_lsn=min_lsn, wait_s=self._wait)

    async def read_source(
        self,
        *,
        reference_id: str,
        scope: ResolvedScope,
        kind: str,
        version: str,
        min_lsn: str,
    ) -> SourceRead:
        """Read a source reference's saved fragment, a named version, or the current source.

        Ownership is checked on every read: a reference that exists only in another scope is
        refused, and so is a current source that has moved out of the resolved scope.
        """
        scope_key = scope.resolved.key

        async def read(conn: asyncpg.Connection) -> SourceRead:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                rows = await conn.fetch(queries.SOURCE_REFERENCE, reference_id)
                if not rows:
                    raise NotFound(
                        f"source reference {reference_id!r} does not exist",
                        {"resource": "source_reference", "id": reference_id},
                    )
                owned = [r for r in rows if r["scope_key"] == scope_key]
                if not owned:
                    raise ScopeMismatch(
                        f"source reference {reference_id!r} is not in "
                        f"{scope.resolved.describe()}; read it in the scope it belongs to",
                        {"source_reference_id": reference_id},
                    )
                reference = owned[0]
                details = json.loads(reference["details"])
                message = await self._message_source(conn, details)
                available = ("snapshot", "version", "current") if message else ("snapshot",)
                # snapshot: exactly the fragment saved as evidence, at the version it was saved
                content, content_kind = reference["fragment"], "saved_fragment"
                returned = str(details.get("source_version", ""))
                differs = False
                if kind == "current":
                    current = self._require_current(message, scope, reference_id, available)
                    content, content_kind = current["text"], "whole_source"
                    returned = str(current["revision"])
                    differs = returned != str(details.get("source_version", ""))
                elif kind == "version":
                    if message is None:
                        raise self._no_version(reference_id, version, available)
                    old = await conn.fetchrow(
                        queries.MESSAGE_SOURCE_REVISION,
                        uuid.UUID(message["node_id"]),
                        int(version),
                    )
                    if old is None:
                        raise self._no_version(reference_id, version, available)
                    self._require_in_scope(old["project_id"], scope, reference_id)
                    content, content_kind, returned = old["text"], "whole_source", version
                coverage = await self._coverage(conn, scope_key)
                revision = await conn.fetchval(queries.READ_REVISION, scope_key)
                read_at = await conn.fetchval("SELECT clock_timestamp()")
            return SourceRead(
                reference_id=reference_id,
                result_id=reference["result_id"],
                scope_key=scope_key,
                source_type=str(details.get("source_type", "")),
                source_id=str(details.get("source_id", "")),
                reference_version=str(details.get("source_version", "")),
                fragment_start=int(details.get("fragment_start", 0)),
                fragment_end=int(details.get("fragment_end", 0)),
                locator=details.get("locator", {}),
                content=content,
                content_kind=content_kind,
                returned_version=returned,
                available_kinds=available,
                differs_from_reference=differs,
                source_length=len(message["text"]) if message else None,
                coverage=coverage,
                read_revision=revision,
                read_at=read_at,
            )

        return await self._router.run(read, min_lsn=min_lsn, wait_s=self._wait)

    @staticmethod
    async def _message_source(
        conn: asyncpg.Connection, details: dict[str, Any]
    ) -> asyncpg.Record | None:
        """The current state of a message source (a tree node), or None when there is none."""
        if details.get("source_type") != "message":
            return None
        try:
            node_id = uuid.UUID(str(details.get("source_id", "")))
        except ValueError:
            return None
        row: asyncpg.Record | None = await conn.fetchrow(queries.CURRENT_MESSAGE_SOURCE, node_id)
        return row

    @classmethod
    def _require_current(
        cls,
        message: asyncpg.Record | None,
        scope: ResolvedScope,
        reference_id: str,
        available: tuple[str, ...],
    ) -> asyncpg.Record:
        if message is None:
            raise SourceUnavailable(
                f"the source behind {reference_id!r} cannot be read as it is now (deleted, or "
                f"not a readable message); it can be read as: {', '.join(available)}",
                {"availability": "inaccessible", "available_read_kinds": ",".join(available)},
            )
        cls._require_in_scope(message["project_id"], scope, reference_id)
        return message

    @staticmethod
    def _require_in_scope(project_id: str | None, scope: ResolvedScope, reference_id: str) -> None:
        if scope.resolved.is_global or project_id in scope.resolved.projects:
            return
        raise SourceUnavailable(
            f"the source behind {reference_id!r} has moved out of "
            f"{scope.resolved.describe()}; only its saved snapshot can be read here",
            {"availability": "moved_out_of_scope", "available_read_kinds": "snapshot"},
        )

    @staticmethod
    def _no_version(
        reference_id: str, version: str, available: tuple[str, ...]
    ) -> HistoricalVersionUnavailable:
        return HistoricalVersionUnavailable(
            f"version {version!r} of the source behind {reference_id!r} is not kept; it can be "
            f"read as: {', '.join(k for k in available if k != 'version') or 'snapshot'}",
            {
                "source_reference_id": reference_id,
                "available_read_kinds": ",".join(k for k in available if k != "version"),
            },
        )

    @classmethod
    async def _count_matches(
        cls,
        conn: asyncpg.Connection,
        filters: tuple[Any, ...],
        time_args: tuple[Any, ...],
        time_filter: TimeFilter,
    ) -> MatchCounts:
        total = await cls._bounded_count(conn, queries.SEARCH_TOTAL, *filters, *time_args)
        applies = time_filter.active and time_filter.basis == "event_time"
        unknown_time = (
            await cls._bounded_count(conn, queries.SEARCH_UNKNOWN_TIME, *filters)
            if applies
            else None
        )
        return MatchCounts(total, unknown_time, applies)

    @staticmethod
    async def _bounded_count(conn: asyncpg.Connection, sql: str, *args: Any) -> int | None:
        """Count up to COUNT_CAP within COUNT_BUDGET_MS; None (unknown) beyond either.

        The count runs in a savepoint with a local statement timeout, so a count that would take
        too long is abandoned without aborting the page's read transaction.
        """
        savepoint = conn.transaction()
        await savepoint.start()
        try:
            await conn.execute(queries.SET_LOCAL_STATEMENT_TIMEOUT, str(COUNT_BUDGET_MS))
            value: int = await conn.fetchval(sql, *args, COUNT_CAP + 1)
        except asyncpg.QueryCanceledError:
            return None
        finally:
            # Rolling the savepoint back also drops the timeout again; a count writes nothing.
            await savepoint.rollback()
        return value if value <= COUNT_CAP else None

    @staticmethod
    async def _search_tiers(
        conn: asyncpg.Connection,
        filters: tuple[Any, ...],
        position: list[Any] | None,
        limit: int,
    ) -> list[tuple[int, asyncpg.Record]]:
        """Up to `limit` (score, row) pairs after `position`, walking the tiers 3 → 2 → 1."""
        found: list[tuple[int, asyncpg.Record]] = []
        start_score = position[0] if position else 3
        for score in (3, 2, 1):
            if score > start_score:
                continue
            after = position[1:] if position and score == start_score else [None, None, None]
            rows = await conn.fetch(
                queries.SEARCH_TIERS[score], *filters, *after, limit - len(found)
            )
            found.extend((score, row) for row in rows)
            if len(found) >= limit:
                break
        return found

    @staticmethod
    async def _sources(
        conn: asyncpg.Connection, rows: list[tuple[int, asyncpg.Record]]
    ) -> dict[tuple[str, str], dict[str, Any]]:
        wanted: list[tuple[str, str]] = []
        for _, row in rows:
            details = json.loads(row["details"])
            wanted.extend((row["result_id"], s) for s in details.get("source_reference_ids", []))
        if not wanted:
            return {}
        found = await conn.fetch(queries.SOURCES_OF, [w[0] for w in wanted], [w[1] for w in wanted])
        return {(r["result_id"], r["object_id"]): json.loads(r["details"]) for r in found}

    @staticmethod
    async def _coverage(conn: asyncpg.Connection, scope_key: str) -> CoverageView:
        count = await conn.fetchval(queries.RESULT_COUNT, scope_key)
        rows = await conn.fetch(queries.COVERAGE, scope_key, COVERAGE_LIMIT)
        return CoverageView(
            results_in_scope=count,
            processed=tuple(
                CoveredResult(
                    r["result_id"],
                    r["phase"],
                    r["covered_from"],
                    r["covered_to"],
                    r["review_generated_at"],
                    tuple(r["excluded_source_types"]),
                )
                for r in rows
            ),
        )


def _search_row(
    score: int, row: asyncpg.Record, sources: dict[tuple[str, str], dict[str, Any]]
) -> SearchRow:
    details = json.loads(row["details"])
    refs = details.get("source_reference_ids", [])
    return SearchRow(
        result_id=row["result_id"],
        object_type=row["object_type"],
        object_id=row["object_id"],
        type_rank=row["type_rank"],
        scope_key=row["scope_key"],
        title=row["title"],
        body=row["body"],
        kind=row["kind"],
        object_revision=row["object_revision"],
        confirmation_state=row["confirmation_state"],
        event_time_start=row["event_time_start"],
        event_time_end=row["event_time_end"],
        event_time_precision=row["event_time_precision"],
        event_time_basis=row["event_time_basis"],
        review_generated_at=row["review_generated_at"],
        recorded_at=row["recorded_at"],
        details=details,
        score=score,
        sources=tuple(
            SourceView(ref, sources[(row["result_id"], ref)])
            for ref in refs
            if (row["result_id"], ref) in sources
        ),
    )
