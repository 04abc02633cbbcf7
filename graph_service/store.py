"""Reads of the graph service: the only module that touches asyncpg.

Each query runs in one REPEATABLE READ READ ONLY transaction on a replica (the `begin` of
ReplicaRouter.run), so a page, its counts, its coverage and its read revision all come from
one snapshot.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from typing import Any

import asyncpg

from graph_service import leaf_reads
from graph_service.context import ContextReader, Opening
from graph_service.context_pages import collections_of
from graph_service.documents import applicable_preference_scopes, preference_row
from graph_service.errors import (
    HistoricalVersionUnavailable,
    NotFound,
    ScopeMismatch,
    SourceUnavailable,
    StaleCursor,
    Unauthenticated,
)
from graph_service.lookups import object_row, sources_and_touches
from graph_service.neighbourhood import NeighbourhoodCache
from graph_service.queries import access, replica, sources
from graph_service.queries.context import CONTEXT_OPENING
from graph_service.queries.search import SEARCH_OPENING
from graph_service.replicas import ReplicaRouter
from graph_service.scope_state import COVERAGE_LIMIT, read_scope_state, scope_state
from graph_service.search import budget_exceeded, count_matches, needs_counting, read_hits
from graph_service.source_times import source_times
from graph_service.views import (
    Caller,
    CollectionPage,
    ContextContinuation,
    ContextRead,
    CurrentSource,
    MatchCounts,
    ResolvedScope,
    SearchPage,
    SourceRead,
    TimeFilter,
    validity_of,
)


def like_pattern(query: str) -> str:
    """A contiguous-substring LIKE pattern with the user's %, _ and \\ escaped."""
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class GraphStore:
    """Read-only queries over the replicas."""

    def __init__(
        self, router: ReplicaRouter, consistency_wait_s: float, cache_mb: int = 64
    ) -> None:
        self._router = router
        self._wait = consistency_wait_s
        self.neighbourhoods = NeighbourhoodCache(cache_mb << 20)

    async def resolve_binding(self, token: str, min_lsn: str = "") -> Caller:
        """The caller a binding token names, read where the write at `min_lsn` (a binding's
        own consistency token, say) is visible."""
        digest = hashlib.sha256(token.encode()).digest()

        async def read(conn: asyncpg.Connection) -> Caller:
            row = await conn.fetchrow(access.BINDING_BY_TOKEN_HASH, digest)
            if row is None:
                raise Unauthenticated("the binding token is unknown or revoked")
            return Caller(
                row["session_id"],
                row["project_id"],
                row["runtime"],
                row["binding_id"],
                tuple(row["allowed_scopes"]),
            )

        return await self._router.run(read, min_lsn=min_lsn, wait_s=self._wait)

    async def session_project(self, session_id: uuid.UUID, min_lsn: str) -> tuple[bool, str | None]:
        """(session exists, its current project)."""

        async def read(conn: asyncpg.Connection) -> tuple[bool, str | None]:
            row = await conn.fetchrow(access.SESSION_PROJECT, session_id)
            return (row is not None, row["project_id"] if row else None)

        return await self._router.run(read, min_lsn=min_lsn, wait_s=self._wait)

    async def search_leaves(
        self,
        scope: ResolvedScope,
        *,
        query: str,
        source: tuple[str, str],
        last_leaf: int,
        page_size: int,
        min_lsn: str,
    ) -> list[asyncpg.Record]:
        """A page of the shared leaves the scope may read (leaf_reads), plus one row."""
        pattern = like_pattern(query.lower()) if query else None

        async def read(conn: asyncpg.Connection) -> list[asyncpg.Record]:
            return await leaf_reads.read(
                conn,
                scope,
                pattern=pattern,
                source=source,
                last_leaf=last_leaf,
                page_size=page_size,
            )

        return await self._router.run(
            read, min_lsn=min_lsn, wait_s=self._wait, begin=replica.BEGIN_READ
        )

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
        """One page of search hits after `position` (None = first page); the first page also
        holds the background: the preferences that apply whose text matches.

        Counts are taken on the first page only, after its hits in the same snapshot (unless
        the read says they would be unknown: search.worth_counting), and carried by the cursor
        afterwards: the cursor pins the read revision, so they cannot change while paging.
        """
        scope_key = scope.resolved.key
        excludes_unknown = time_filter.excludes_unknown_times
        # The first page's background comes with the opening, from the page's own snapshot.
        preference_scopes = applicable_preference_scopes(scope.resolved)
        background_limit = page_size if position is None else 0

        # The walks, the opening and the lookups by key have one good plan whatever their
        # values, so each is planned once (the transaction's `begin`, below), not on every
        # call, where planning cost a noticeable share of a search. The reads and counts
        # through the trigram, event-time and range indexes (graph_service.search chooses
        # which, not the planner) ask for plans made with their values themselves.
        async def read(conn: asyncpg.Connection) -> SearchPage:
            opening = await conn.fetchrow(
                SEARCH_OPENING,
                scope_key,
                COVERAGE_LIMIT,
                like_pattern(query),
                time_filter.start,
                time_filter.end,
                time_filter.basis,
                preference_scopes,
                background_limit,
            )
            state = scope_state(opening)
            revision, coverage, read_at = state.revision, state.coverage, state.read_at
            filters = (scope_key, object_types, opening["folded_pattern"])
            search_args = (*filters, time_filter.start, time_filter.end, time_filter.basis)
            if expected_revision is not None and revision != expected_revision:
                raise StaleCursor(
                    "the story graph in this scope changed since the first page; "
                    "run the search again from the first page",
                    {"cursor_revision": str(expected_revision), "current": str(revision)},
                )
            try:
                found = await read_hits(
                    conn,
                    search_args,
                    object_types,
                    position,
                    page_size + 1,
                    scope_copies=state.copies,
                    range_copies=opening["range_copies"],
                )
            except TimeoutError:
                raise budget_exceeded(query, scope.resolved.describe()) from None
            rows = found.hits
            page_rows = rows[:page_size]
            sources, touches = await sources_and_touches(conn, scope_key, [r for _, r in page_rows])
            linked = []
            if position is None and "leaf_fact" in object_types and opening["links_leaves"]:
                linked = await leaf_reads.linked(
                    conn, scope, query, opening, tf=time_filter, limit=page_size
                )
            counts = carried_counts
            if counts is None:
                # A first page that is not full holds every hit: its total is known.
                known = len(rows) if position is None and len(rows) <= page_size else None
                total, unknown_time = None, None
                if (known is None or excludes_unknown) and needs_counting(found, state.copies):
                    # Last: a count that runs out of its budget aborts the transaction.
                    total, unknown_time = await count_matches(
                        conn, search_args, excludes_unknown, found, state.copies
                    )
                counts = MatchCounts(
                    known if known is not None else total,
                    unknown_time if excludes_unknown else None,
                    excludes_unknown,
                )
            hits = tuple(
                object_row(
                    r,
                    sources,
                    score,
                    validity=validity_of(
                        touches.get((r["object_type"], r["object_id"]), []), r["object_revision"]
                    ),
                )
                for score, r in page_rows
            )
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
                linked=tuple(linked),
                background=tuple(preference_row(r) for r in opening["background"]),
            )

        return await self._router.run(
            read, min_lsn=min_lsn, wait_s=self._wait, begin=replica.BEGIN_READ_WITH_GENERIC_PLANS
        )

    async def get_context(
        self,
        *,
        object_type: str,
        object_id: str,
        scope: ResolvedScope,
        mode: str,
        time_filter: TimeFilter,
        result_filter: str | None,
        page_size: int,
        continuation: ContextContinuation | None,
        expected_revision: int | None,
        expected_preferences: str | None,
        min_lsn: str,
    ) -> ContextRead:
        """Every collection's first page, or the one page or content a cursor continues."""
        scope_key = scope.resolved.key

        # The first preferences are read with the scope's state when a first current-mode read
        # will show them: one more than a page, to know whether the list goes on.
        preference_scopes, first_preferences, completion = Opening.parameters(
            scope.resolved, object_type, mode, page_size + 1 if continuation is None else 0
        )

        async def read(conn: asyncpg.Connection) -> ContextRead:
            opening = await conn.fetchrow(
                CONTEXT_OPENING,
                scope_key,
                COVERAGE_LIMIT,
                object_type,
                object_id,
                preference_scopes,
                first_preferences,
                completion,
            )
            revision, coverage, read_at, _ = scope_state(opening)
            reader = ContextReader(
                conn,
                scope=scope,
                object_type=object_type,
                object_id=object_id,
                time_filter=time_filter,
                result_filter=result_filter,
                read_revision=revision,
                opening=Opening.of(opening, read_first_preferences=first_preferences > 0),
                cache=self.neighbourhoods,
            )
            preferences = reader.preferences_version()
            if expected_revision is not None and revision != expected_revision:
                raise StaleCursor(
                    "the story graph in this scope changed since the first page; read the "
                    "context again without a cursor",
                    {"cursor_revision": str(expected_revision), "current": str(revision)},
                )
            if expected_preferences is not None and preferences != expected_preferences:
                raise StaleCursor(
                    "the preferences that apply in this scope changed since the first page; "
                    "read the context again without a cursor",
                    {"changed": "preferences"},
                )
            await reader.require_object()
            specs = collections_of(mode)
            pages: list[CollectionPage] = []
            # A cursor's page reports what the first page counted.
            excluded = continuation.unknown_time_excluded if continuation else 0
            filtered = time_filter.excludes_unknown_times
            linked = []
            if continuation is None:
                pages.extend(await reader.pages(specs.values(), page_size, None, count=True))
                if mode == "current" and opening["links_leaves"]:
                    ref = (object_type, object_id)
                    linked = await leaf_reads.linked_about(conn, scope, ref, time_filter, page_size)
                if filtered:
                    excluded = await reader.unknown_time_excluded(include_x=mode == "timeline")
            elif continuation.kind == "collection":
                (page,) = await reader.pages(
                    [specs[continuation.collection]],
                    page_size,
                    continuation.position,
                    count=False,
                )
                pages.append(dataclasses.replace(page, total=continuation.total))
            else:
                entry = await reader.one_entry(continuation.collection, continuation.position)
                if entry is None:
                    raise StaleCursor(
                        "the item this cursor continues is gone; read the context again",
                        {"collection": continuation.collection},
                    )
                pages.append(
                    CollectionPage(continuation.collection, (entry,), False, continuation.total, [])
                )
            gaps = reader.history_gaps()
            return ContextRead(
                object_type=object_type,
                object_id=object_id,
                collections=tuple(pages),
                coverage=coverage,
                unknown_time_excluded=excluded,
                event_time_filtered=filtered,
                history_gaps=gaps,
                read_revision=revision,
                read_at=read_at,
                preferences_version=preferences,
                linked=tuple(linked),
            )

        # A context read's statements are key lookups whose best plan does not depend on their
        # values, and planning them costs more than running them; PostgreSQL's own choice
        # (auto) kept planning them on every call, so each is planned once.
        return await self._router.run(
            read, min_lsn=min_lsn, wait_s=self._wait, begin=replica.BEGIN_READ_WITH_GENERIC_PLANS
        )

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
            rows = await conn.fetch(sources.SOURCE_REFERENCE, reference_id)
            if not rows:
                raise NotFound(
                    f"source reference {reference_id!r} does not exist",
                    {"resource": "source_reference", "id": reference_id},
                )
            mismatch = ScopeMismatch(
                f"source reference {reference_id!r} is not in "
                f"{scope.resolved.describe()}; read it in the scope it belongs to",
                {"source_reference_id": reference_id},
            )
            owned = [r for r in rows if r["scope_key"] == scope_key] or (
                await leaf_reads.linked_reference(conn, scope_key, reference_id, rows)
            )
            if not owned:
                raise mismatch
            reference = owned[0]
            details = json.loads(reference["details"])
            saved_version = str(details.get("source_version", ""))
            current = await self._current_source(conn, details)
            availability = self._availability(current, scope)
            if reference["scope_key"] != scope_key and availability != "available":
                raise mismatch  # a linked leaf's evidence, while its source is the scope's own
            available = (
                ("snapshot", "version", "current") if availability == "available" else ("snapshot",)
            )
            # snapshot: exactly the fragment saved as evidence, at the version it was saved
            content, content_kind = reference["fragment"], "saved_fragment"
            returned = saved_version
            differs = False
            whole: CurrentSource | None = None  # the whole source the range refers to
            if kind == "current":
                whole = self._require_current(current, scope, reference_id, available)
                content, content_kind = whole.text, "whole_source"
                returned = whole.revision
                differs = returned != saved_version
            elif kind == "version":
                whole = await self._source_version(conn, current, version)
                if whole is None:
                    raise self._no_version(reference_id, version, available)
                self._require_in_scope(whole.project_id, scope, reference_id)
                content, content_kind, returned = whole.text, "whole_source", version
            elif availability == "available" and saved_version:
                whole = await self._source_version(conn, current, saved_version)
            revision, coverage, read_at, _ = await read_scope_state(conn, scope_key)
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
                availability=availability,
                available_kinds=available,
                differs_from_reference=differs,
                source_length=len(whole.text) if whole is not None else None,
                coverage=coverage,
                read_revision=revision,
                read_at=read_at,
                times=source_times(
                    current if availability == "available" else None,
                    whole,
                    availability,
                    reference["result_id"],
                    reference["result_recorded_at"],
                ),
            )

        return await self._router.run(
            read, min_lsn=min_lsn, wait_s=self._wait, begin=replica.BEGIN_READ
        )

    @staticmethod
    async def _current_source(
        conn: asyncpg.Connection, details: dict[str, Any]
    ) -> CurrentSource | None:
        """The source behind a reference as it is now: a message (tree node lineage) or a
        recorded source; None when there is no such source to read."""
        source_type = details.get("source_type")
        source_id = str(details.get("source_id", ""))
        if source_type == "message":
            try:
                node_id = uuid.UUID(source_id)
            except ValueError:
                return None
            row = await conn.fetchrow(sources.CURRENT_MESSAGE_SOURCE, node_id)
            if row is None:
                return None
            return CurrentSource(
                row["text"],
                str(row["revision"]),
                row["project_id"],
                node_id,
                row["purged"],
                written_at=row["created_at"],
                first_written_at=row["first_created_at"],
            )
        row = await conn.fetchrow(sources.CURRENT_RECORDED_SOURCE, source_id, source_type)
        if row is None:
            return None
        return CurrentSource(
            row["text"] or "",
            str(row["revision"]),
            row["project_id"],
            None,
            row["deleted"],
            written_at=row["updated_at"],
        )

    @staticmethod
    async def _source_version(
        conn: asyncpg.Connection, current: CurrentSource | None, version: str
    ) -> CurrentSource | None:
        """A named revision's text: every revision of a message is kept; a recorded source
        keeps only its current revision, so any other one is unavailable."""
        if current is None or current.deleted:
            return None
        if current.node_id is None:
            return current if current.revision == version else None
        if not version.isdigit():  # a message's revisions are numbered; nothing else is kept
            return None
        old = await conn.fetchrow(sources.MESSAGE_SOURCE_REVISION, current.node_id, int(version))
        if old is None:
            return None
        return CurrentSource(
            old["text"],
            version,
            old["project_id"],
            current.node_id,
            written_at=old["created_at"],
            first_written_at=current.first_written_at,
        )

    @staticmethod
    def _availability(current: CurrentSource | None, scope: ResolvedScope) -> str:
        """Whether the source behind a reference can be read beyond its saved fragment here:
        "available", "deleted", "inaccessible" (no such source is known) or
        "moved_out_of_scope"."""
        if current is None:
            return "inaccessible"
        if current.deleted:
            return "deleted"
        if not (scope.resolved.is_global or current.project_id in scope.resolved.projects):
            return "moved_out_of_scope"
        return "available"

    @classmethod
    def _require_current(
        cls,
        current: CurrentSource | None,
        scope: ResolvedScope,
        reference_id: str,
        available: tuple[str, ...],
    ) -> CurrentSource:
        if current is None or current.deleted:
            state = "deleted" if current is not None else "inaccessible"
            raise SourceUnavailable(
                f"the source behind {reference_id!r} cannot be read as it is now ({state}); "
                f"it can be read as: {', '.join(available)}",
                {"availability": state, "available_read_kinds": ",".join(available)},
            )
        cls._require_in_scope(current.project_id, scope, reference_id)
        return current

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
