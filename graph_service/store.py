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
from graph_service.errors import StaleCursor, Unauthenticated
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
