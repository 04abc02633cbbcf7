"""story_graph_get_context: one object's snapshots, current projection, evidence and sources.

Everything is read inside the caller's REPEATABLE READ READ ONLY transaction, so every
collection of one response comes from one snapshot. X's neighbourhood is read once per call
(CONTEXT_NEIGHBOURHOOD: keys, kinds and times of every related copy, no text); every collection
is filtered, ordered, counted and paged from it, and only the copies that land on a page are
then read whole, with their sources and validity, in one statement (OBJECT_COPIES). What
depends only on X and the scope (where X exists, its results' gaps, completion evidence, the
preference fingerprint and first preferences) comes with the scope's state, in the statement
that opens the read (CONTEXT_OPENING, see Opening). The cost of a read follows the size of X's
neighbourhood once, not once per collection. Each collection is its own keyset page:

    current mode   current, snapshots, events, changes, relations, leaves, related, sources,
                   preferences
    timeline mode  timeline (dated evidence in event-time order, the object itself included),
                   undated (evidence whose time is unknown), snapshots, related, sources

The current projection is computed, never stored: the newest stored description, validity
from evidenced relations only (within the selected evidence range), decisions with their
validity, completion evidence, open conflicts and pending differences with preferences.
"""

from __future__ import annotations

import heapq
import json
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import asyncpg

from graph_service import queries
from graph_service.convert import public_fields
from graph_service.errors import HistoricalVersionUnavailable, NotFound, ScopeMismatch
from graph_service.lookups import (
    object_row,
    relation_touches,
    sources_and_touches,
    sources_by_key,
    touches_by_ref,
)
from graph_service.queries import HISTORY_GAPS_LISTED, SCOPES_LISTED
from graph_service.views import (
    UNKNOWN_VALIDITY,
    CollectionPage,
    ContextEntry,
    PreferenceRow,
    RelationTouch,
    ResolvedScope,
    SearchRow,
    TimeFilter,
    ValidityView,
    validity_of,
)
from mirrortree.scopes import ScopeValue
from mirrortree.timefmt import format_utc

EVIDENCE = ("event", "entity_change", "relation", "leaf_fact")
NEIGHBOURS = ("story_line", "entity", "summary")
DECISIONS_SHOWN = 20
VERSIONS_LISTED = 50  # the results named when a read asks for one that holds no copy
# Not datetime.min: asyncpg sends that as -infinity.
UNKNOWN_TIME_STAND_IN = datetime(1, 1, 2, tzinfo=UTC)
# An evidence order before every copy's (no type rank is negative), and a citation order before
# every source's (no id is empty): where a hub's SQL page reads from the first.
BEFORE_ALL = (False, datetime(1, 1, 1, tzinfo=UTC), -1, "", "")
BEFORE_ALL_SOURCES = ("", "")


RowKey = tuple[str, str, str]  # result id, object type, object id
Ref = tuple[str, str]  # object type, object id


class Member(NamedTuple):
    """One stored copy in X's neighbourhood: what filtering, ordering and paging need (the
    columns of CONTEXT_NEIGHBOURHOOD, in order)."""

    role: str  # "self" (a copy of X) | "member" (of a related object) | "cited" (a source)
    object_type: str
    object_id: str
    result_id: str
    type_rank: int
    kind: str | None
    event_time_start: datetime | None
    event_time_end: datetime | None
    event_time_precision: str | None
    review_generated_at: datetime
    recorded_at: datetime
    graph_revision: int  # the revision that recorded it (copies of X only)
    # The source references this copy cites (in its own result). A tuple, not a list: a
    # neighbourhood held in the cache is then all immutable atoms, which Python's garbage
    # collector stops tracking, so a large cache does not lengthen its collections.
    cited_ids: tuple[str, ...]

    @property
    def key(self) -> RowKey:
        return (self.result_id, self.object_type, self.object_id)

    def admitted_by(self, time_filter: TimeFilter) -> bool:
        return time_filter.admits(
            self.event_time_start,
            self.event_time_end,
            self.review_generated_at,
            self.recorded_at,
            self.event_time_precision,
        )


EvidenceOrder = tuple[bool, datetime, int, str, str]


# A copy as the cache holds it: its evidence order and its Member fields, both plain tuples.
Stored = tuple[EvidenceOrder, tuple[Any, ...]]
(
    ROLE,
    OBJECT_TYPE,
    OBJECT_ID,
    RESULT_ID,
    TYPE_RANK,
    KIND,
    EVENT_TIME_START,
    REVIEW_GENERATED_AT,
    RECORDED_AT,
    CITED_IDS,
) = (
    Member._fields.index(name)
    for name in (
        "role",
        "object_type",
        "object_id",
        "result_id",
        "type_rank",
        "kind",
        "event_time_start",
        "review_generated_at",
        "recorded_at",
        "cited_ids",
    )
)


class Neighbourhood:
    """X's neighbourhood as read once: copies grouped by role and type, each group in evidence
    order, so a collection is a merge of a few groups and a keyset page a binary search.

    The copies are kept as plain tuples of atoms, not as Member objects: Python's garbage
    collector stops tracking such tuples, while every NamedTuple stays tracked — and a cache of
    100,000 tracked copies made each full collection pause the service for 100–250 ms
    (measured). Members are made again only for the copies a read selects.
    """

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        """From CONTEXT_NEIGHBOURHOOD's rows (the Member fields, in order)."""
        stored: list[Stored] = []
        cited: dict[tuple[str, str], Stored] = {}
        for row in rows:
            fields = (*row[:CITED_IDS], tuple(row[CITED_IDS]))
            stored.append((evidence_order(fields), fields))
            for source_id in fields[CITED_IDS]:
                key = (source_id, fields[RESULT_ID])
                if key not in cited:
                    cited[key] = citation(source_id, fields)
        stored.sort(key=stored_order)
        groups: dict[tuple[str, str], list[Stored]] = {}
        for entry in stored:
            fields = entry[1]
            groups.setdefault((fields[ROLE], fields[OBJECT_TYPE]), []).append(entry)
        self.size = len(stored)
        self._groups = {key: tuple(group) for key, group in groups.items()}
        # The sources X or a related copy cites, by reference id and result id.
        self._cited = tuple(cited[key] for key in sorted(cited))
        self._decisions: tuple[tuple[Any, ...], ...] | None = None

    def collection(self, roles: Iterable[str], types: Iterable[str]) -> Sequence[Stored]:
        """The copies of these roles and types, in evidence order (one group as it is held)."""
        parts = [p for p in (self._groups.get((r, t), ()) for r in roles for t in types) if p]
        if len(parts) == 1:
            return parts[0]
        return list(heapq.merge(*parts, key=stored_order))

    # The neighbourhood as a context read pages it (StoredNeighbourhood answers the same from
    # SQL, for hubs).

    async def answer(
        self, requests: Sequence[PageRequest], self_copies: bool, decisions: int
    ) -> Answers:
        return Answers(
            [self._cited_page(r) if r.selection is None else self._page(r) for r in requests],
            self._self_copies() if self_copies else [],
            self._newest_decisions(decisions) if decisions else [],
        )

    def _newest_decisions(self, limit: int) -> list[Member]:
        """Related decision events (the newest copy of each: of the latest review, then the
        latest recorded) by stable id, at most `limit`."""
        if self._decisions is None:  # once per neighbourhood: a hub has a thousand events
            newest: dict[str, tuple[Any, ...]] = {}
            for _, fields in self._groups.get(("member", "event"), ()):
                if fields[KIND] == "decision":
                    seen = newest.get(fields[OBJECT_ID])
                    if seen is None or (fields[REVIEW_GENERATED_AT], fields[RECORDED_AT]) > (
                        seen[REVIEW_GENERATED_AT],
                        seen[RECORDED_AT],
                    ):
                        newest[fields[OBJECT_ID]] = fields
            self._decisions = tuple(newest[i] for i in sorted(newest))
        return [Member._make(fields) for fields in self._decisions[:limit]]

    def _page(self, request: PageRequest) -> Page:
        selection = request.selection
        assert selection is not None
        selected = self.collection(selection.roles, selection.types)
        if selection.dated != "any" or selection.time_filter is not None:  # else all admitted
            selected = [stored for stored in selected if selection.admits(stored)]
        return keyset_page(selected, stored_order, request)

    def _cited_page(self, request: PageRequest) -> Page:
        return keyset_page(self._cited, citation_order, request)

    def _self_copies(self) -> list[Member]:
        """X's own copies, in evidence order."""
        return [
            Member._make(fields)
            for (role, _), group in self._groups.items()
            if role == "self"
            for _, fields in group
        ]

    async def undated(self, roles: tuple[str, ...]) -> int:
        return sum(1 for stored in self.collection(roles, EVIDENCE) if is_undated(stored))


@dataclass(frozen=True)
class Selection:
    """The copies of X's neighbourhood one collection holds: of these roles and types, dated,
    undated or either, and admitted by the time filter (None: the filter does not apply)."""

    roles: tuple[str, ...]
    types: tuple[str, ...]
    dated: str  # "any" | "dated" | "undated"
    time_filter: TimeFilter | None

    def admits(self, stored: Stored) -> bool:
        undated = is_undated(stored)
        if (self.dated == "dated" and undated) or (self.dated == "undated" and not undated):
            return False
        return self.time_filter is None or Member._make(stored[1]).admitted_by(self.time_filter)


class PageRequest(NamedTuple):
    """One keyset page a context read asks of X's neighbourhood: of the copies a selection
    holds, after an evidence order, or (selection None) of the sources they cite, after a
    (reference id, result id)."""

    selection: Selection | None
    after: tuple[Any, ...] | None
    size: int
    counted: bool  # whether to count the whole collection


class Page(NamedTuple):
    """One keyset page of a collection: its copies, whether more follow, how many the
    collection holds (None: not counted), and the last copy's evidence order."""

    members: list[Member]
    has_more: bool
    total: int | None
    last: EvidenceOrder | None


class Answers(NamedTuple):
    """What a context read asks of X's neighbourhood at once: the pages asked for, in order,
    X's own copies (when asked for) and its newest related decisions (as many as asked)."""

    pages: list[Page]
    self_copies: list[Member]
    decisions: list[Member]


def keyset_page(
    ordered: Sequence[Stored], key: Callable[[Stored], Any], request: PageRequest
) -> Page:
    """The page `request` asks of copies in `key` order: those after its position."""
    after, size = request.after, request.size
    start = bisect_right(ordered, after, key=key) if after else 0
    page = ordered[start : start + size]
    return Page(
        [Member._make(fields) for _, fields in page],
        start + size < len(ordered),
        len(ordered) if request.counted else None,
        page[-1][0] if page else None,
    )


def newest_copy(copies: list[Member]) -> Member | None:
    """The copy that describes an object now: the one of the most recently generated review,
    then the most recently recorded. Not simply the last recorded: a backfill recorded today
    about last month is not newer than what last week's review said."""
    return max(copies, key=lambda m: (m.review_generated_at, m.graph_revision), default=None)


def evidence_order(fields: tuple[Any, ...]) -> EvidenceOrder:
    """Event time (unknown last, all unknowns equal), type rank, stable id, result id."""
    start = fields[EVENT_TIME_START]
    return (
        start is None,
        start or UNKNOWN_TIME_STAND_IN,
        fields[TYPE_RANK],
        fields[OBJECT_ID],
        fields[RESULT_ID],
    )


def stored_order(stored: Stored) -> EvidenceOrder:
    return stored[0]


def is_undated(stored: Stored) -> bool:
    return stored[0][0]


def citation(source_id: str, citing: tuple[Any, ...]) -> Stored:
    """The source reference a copy cites: recorded in the citing copy's result (RecordReview
    accepts no other citation). Only its key is known here; sources are ordered by it."""
    result_id = citing[RESULT_ID]
    fields = (  # Member's fields, in its order (a plain tuple: built a thousand times a read)
        "cited",
        "source_reference",
        source_id,
        result_id,
        0,
        None,
        None,
        None,
        None,
        citing[REVIEW_GENERATED_AT],
        citing[RECORDED_AT],
        0,
        (),
    )
    return ((True, UNKNOWN_TIME_STAND_IN, 0, source_id, result_id), fields)


def citation_order(stored: Stored) -> tuple[str, str]:
    """Cited sources are ordered by reference id, then result id."""
    return (stored[1][OBJECT_ID], stored[1][RESULT_ID])


class StoredNeighbourhood:
    """A hub's neighbourhood, paged in SQL over its stored members (context_members,
    mirrortree.neighbourhoods) instead of read whole: a hub has about 1,600 copies around it,
    and receiving and ordering them all cost a first read more than the rest of it together.
    Each method answers exactly what Neighbourhood's answers for the same copies: the same
    evidence order (text by code point: COLLATE "C"), filters, keysets and counts —
    tests/tree_service/test_context_hubs.py reads every collection both ways."""

    def __init__(self, conn: asyncpg.Connection, x: tuple[str, str, str]) -> None:
        self._conn = conn
        self._x = x

    async def answer(
        self, requests: Sequence[PageRequest], self_copies: bool, decisions: int
    ) -> Answers:
        """In one statement (queries.hub_read): one part per page asked for, then X's own
        copies and the decisions when asked for."""
        parts: list[str] = []
        arguments: list[Any] = []
        for request in requests:
            selection, after = request.selection, request.after
            if selection is None:
                parts.append(queries.HUB_CITED_PAGE)
                arguments += [*(after or BEFORE_ALL_SOURCES), request.size + 1, request.counted]
                continue
            tf = selection.time_filter
            parts.append(
                queries.HUB_TYPE_PAGE
                if selection.roles == ("member",) and len(selection.types) == 1
                else queries.HUB_PAGE
            )
            arguments += [
                tf.start if tf else None,
                tf.end if tf else None,
                tf.basis if tf else "event_time",
                list(selection.roles),
                list(selection.types),
                selection.dated,
                *(after or BEFORE_ALL),
                request.size + 1,
                request.counted,
            ]
        if self_copies:
            parts.append(queries.HUB_SELF)
        if decisions:
            parts.append(queries.HUB_DECISIONS)
            arguments.append(decisions)
        rows_of: list[list[asyncpg.Record]] = [[] for _ in parts]
        if parts:
            for row in await self._conn.fetch(queries.hub_read(tuple(parts)), *self._x, *arguments):
                rows_of[row["part"]].append(row)
        asked = len(requests)
        return Answers(
            [self._page(rows_of[i], r.size, r.counted) for i, r in enumerate(requests)],
            [stored_member(r) for r in rows_of[asked]] if self_copies else [],
            [stored_member(r) for r in rows_of[-1]] if decisions else [],
        )

    async def undated(self, roles: tuple[str, ...]) -> int:
        return int(await self._conn.fetchval(queries.HUB_UNDATED, *self._x, list(roles)))

    @staticmethod
    def _page(rows: Sequence[asyncpg.Record], size: int, counted: bool) -> Page:
        """A page from its statement's rows, in its order (one more than the page: whether
        more follow), each with the collection's total when it was `counted`."""
        members = [stored_member(r) for r in rows]
        page = members[:size]
        return Page(
            page,
            len(members) > size,
            (rows[0]["total"] if rows else 0) if counted else None,
            evidence_order(tuple(page[-1])) if page else None,
        )


NeighbourhoodView = Neighbourhood | StoredNeighbourhood


def stored_member(row: asyncpg.Record) -> Member:
    """A Member from a row of queries.hub_read: its part and position, Member's columns but the
    cited ids (which only the in-memory neighbourhood needs: it derives the cited sources from
    them), then a total."""
    return Member._make((*tuple(row)[2:-1], ()))


class NeighbourhoodCache:
    """Neighbourhoods read recently, by (scope, read revision, object type, object id).

    Exact, not a guess: a scope's objects and links only ever change by a new review result,
    which raises the scope's read revision, so an entry can never go stale — entries of older
    revisions just age out. A cursor's next page and repeated reads of one object skip the
    neighbourhood walk. Bounded by the number of copies held.

    A hub's neighbourhood is paged in SQL the first time it is read at a revision, and read
    whole and held only when it is read again (`read_before`): a hub's first read costs less
    paged, a repeated read or a cursor's next page less from memory, and a hub read once does
    not push out what is read often.
    """

    SEEN_KEPT = 10_000  # the hub reads remembered as read once

    def __init__(self, max_copies: int = 100_000) -> None:
        self._max = max_copies
        self._held = 0
        self._entries: OrderedDict[tuple[str, int, str, str], Neighbourhood] = OrderedDict()
        self._seen: OrderedDict[tuple[str, int, str, str], None] = OrderedDict()

    def read_before(self, key: tuple[str, int, str, str]) -> bool:
        """Whether `key` was asked about before; remembers that it now has been. Never, when
        nothing is held (max_copies 0): a hub is then always paged in SQL."""
        if self._max == 0:
            return False
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        self._seen[key] = None
        if len(self._seen) > self.SEEN_KEPT:
            self._seen.popitem(last=False)
        return False

    def get(self, key: tuple[str, int, str, str]) -> Neighbourhood | None:
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: tuple[str, int, str, str], value: Neighbourhood) -> None:
        if value.size > self._max or key in self._entries:
            return
        self._entries[key] = value
        self._held += value.size
        while self._held > self._max:
            _, evicted = self._entries.popitem(last=False)
            self._held -= evicted.size


@dataclass(frozen=True)
class PlannedPage:
    """A collection page chosen from the neighbourhood, before its copies are read whole."""

    name: str
    keys: tuple[RowKey, ...]
    label: str
    has_more: bool
    total: int | None
    position: list[Any]


@dataclass(frozen=True)
class PlannedPreferences:
    """The preferences' page, before the relations that give their pending differences are
    read."""

    prefs: tuple[PreferenceRow, ...]
    has_more: bool
    total: int | None
    position: list[Any]


def linked_page(name: str, page: Page) -> PlannedPage:
    last = page.last
    return PlannedPage(
        name,
        tuple(m.key for m in page.members),
        collection_label(name),
        page.has_more,
        page.total,
        [last[0], last[1].isoformat(), *last[2:]] if last else [],
    )


def snapshots_page(
    copies_of_x: list[Member], size: int, after: list[Any] | None, count: bool
) -> PlannedPage:
    """X's own copies in recording order, after a graph revision."""
    rest = [m for m in copies_of_x if after is None or m.graph_revision > int(after[0])]
    page = rest[:size]
    return PlannedPage(
        "snapshots",
        tuple(m.key for m in page),
        collection_label("snapshots"),
        len(rest) > size,
        len(copies_of_x) if count else None,
        [page[-1].graph_revision] if page else [],
    )


def sources_page(page: Page) -> PlannedPage:
    shown = page.members
    return PlannedPage(
        "sources",
        tuple(m.key for m in shown),
        collection_label("sources"),
        page.has_more,
        page.total,
        [shown[-1].object_id, shown[-1].result_id] if shown else [],
    )


@dataclass(frozen=True)
class Linked:
    """A collection of objects related to X, read from graph_objects through the links."""

    name: str
    types: tuple[str, ...]
    include_self: bool = False
    dated_only: bool = False
    undated_only: bool = False
    evidence: bool = True  # the time filter applies (it narrows evidence, not neighbours)


CURRENT_MODE: tuple[str | Linked, ...] = (
    "current",
    "snapshots",
    Linked("events", ("event",)),
    Linked("changes", ("entity_change",)),
    Linked("relations", ("relation",)),
    Linked("leaves", ("leaf_fact",)),
    Linked("related", NEIGHBOURS, evidence=False),
    "sources",
    "preferences",
)
TIMELINE_MODE: tuple[str | Linked, ...] = (
    Linked("timeline", EVIDENCE, include_self=True, dated_only=True),
    Linked("undated", EVIDENCE, include_self=True, undated_only=True),
    "snapshots",
    Linked("related", NEIGHBOURS, evidence=False),
    "sources",
)


# What kind of statement a collection's items are (ContextItem.label); "stored_copy" for the
# others. A content continuation labels its item as the page that held it did.
COLLECTION_LABELS = {
    "snapshots": "stored_snapshot",
    "sources": "source_reference",
    "undated": "undated_evidence",
}


def collection_label(name: str) -> str:
    return COLLECTION_LABELS.get(name, "stored_copy")


def collections_of(mode: str) -> dict[str, str | Linked]:
    specs = CURRENT_MODE if mode == "current" else TIMELINE_MODE
    return {(s if isinstance(s, str) else s.name): s for s in specs}


def stored_content(row: SearchRow) -> str:
    """The JSON document of one stored object copy, with the field names callers know."""
    title_name, body_name = public_fields(row.object_type)
    document: dict[str, Any] = {
        "type": row.object_type,
        "id": row.object_id,
        "result_id": row.result_id,
        title_name: row.title,
        body_name: row.body,
    }
    if row.kind:
        document["kind"] = row.kind
    document.update(row.details)
    return json.dumps(document, ensure_ascii=False)


def preference_content(pref: PreferenceRow, differences: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            "type": "preference",
            "id": pref.preference_id,
            "role": (
                "background: a long-term preference the user confirmed; it is not a graph "
                "fact, and its update time is not when it was first decided"
            ),
            "scope": ScopeValue.from_key(pref.scope_key).describe(),
            "subject": pref.subject,
            "text": pref.text,
            "about": list(pref.about),
            "confirmed_by": pref.confirmed_by,
            "revision": pref.revision,
            "updated_at": format_utc(pref.updated_at),
            "pending_differences": differences,
        },
        ensure_ascii=False,
    )


def validity_json(view: ValidityView) -> dict[str, Any]:
    return {
        "state": view.state,
        "from": format_utc(view.valid_from),
        "to": format_utc(view.valid_to),
        "established_by": list(view.basis),
    }


def applicable_preference_scopes(scope: ScopeValue) -> list[str]:
    """Global preferences apply everywhere; a project's apply to scopes that include it."""
    if scope.is_global:
        return ["global"]
    return ["global", *(ScopeValue.of_projects([p]).key for p in scope.projects)]


@dataclass(frozen=True)
class Opening:
    """What a context read learns in the statement that opens it (CONTEXT_OPENING), besides
    the scope's state: everything that depends only on X and the scope, not on X's
    neighbourhood."""

    # How many preferences apply, and a digest of their ids and revisions.
    preference_fingerprint: tuple[int, str]
    in_scope: bool  # whether X exists in the scope read
    is_hub: bool  # whether X's neighbourhood is stored (mirrortree.neighbourhoods)
    object_scopes: tuple[str, ...]  # where X exists at all (20 scopes at most)
    history_gaps: tuple[str, ...]
    completion: tuple[tuple[str, str], ...]  # (entity change id, result id); current mode only
    # The first preferences, one more than a page (None: not read — not a first current read).
    first_preferences: tuple[tuple[Any, ...], ...] | None

    @staticmethod
    def parameters(
        scope: ScopeValue, object_type: str, mode: str, first_preferences: int
    ) -> tuple[list[str], int, bool]:
        """CONTEXT_OPENING's parameters after X: the preference scopes that apply, how many
        preferences to read from the first, and whether to read completion evidence."""
        current = mode == "current"
        return (
            applicable_preference_scopes(scope),
            first_preferences if current else 0,
            current and object_type != "preference",
        )

    @classmethod
    def of(cls, row: asyncpg.Record, read_first_preferences: bool) -> Opening:
        count, digest = row["preference_fingerprint"]
        return cls(
            preference_fingerprint=(int(count), str(digest)),
            in_scope=row["in_scope"],
            is_hub=row["is_hub"],
            object_scopes=tuple(row["object_scopes"]),
            history_gaps=tuple(row["history_gaps"]),
            completion=tuple(row["completion"]),
            first_preferences=tuple(row["first_preferences"]) if read_first_preferences else None,
        )


class ContextReader:
    """The reads of one GetContext call, on one connection inside its read transaction."""

    def __init__(
        self,
        conn: asyncpg.Connection,
        *,
        scope: ResolvedScope,
        object_type: str,
        object_id: str,
        time_filter: TimeFilter,
        result_filter: str | None,
        read_revision: int,
        opening: Opening,
        cache: NeighbourhoodCache,
    ) -> None:
        self.conn = conn
        self.opening = opening
        self.scope = scope
        self.key = scope.resolved.key
        self.object_type = object_type
        self.object_id = object_id
        self.tf = time_filter
        self.result_filter = result_filter
        self.x = (self.key, object_type, object_id)
        self.x_ref: Ref = (object_type, object_id)
        self._cache = cache
        self._cache_key = (self.key, read_revision, object_type, object_id)
        self._members: NeighbourhoodView | None = None

    # ---- existence and versions ---------------------------------------------------------

    async def require_object(self) -> None:
        """not_found, scope_mismatch, or historical_version_unavailable — each distinct."""
        if self.object_type == "preference":
            row = await self.conn.fetchrow(queries.PREFERENCE_BY_ID, self.object_id)
            if row is None:
                raise NotFound(
                    f"preference {self.object_id!r} does not exist",
                    {"resource": "preference", "id": self.object_id},
                )
            if row["scope_key"] not in applicable_preference_scopes(self.scope.resolved):
                raise self._mismatch([row["scope_key"]])
            return
        scopes = list(self.opening.object_scopes)
        if not scopes:
            raise NotFound(
                f"{self.object_type} {self.object_id!r} does not exist in the story graph",
                {"resource": self.object_type, "id": self.object_id},
            )
        if not self.opening.in_scope:
            raise self._mismatch(scopes)
        if self.result_filter is not None:
            rows = await self.conn.fetch(
                queries.OBJECT_RESULTS, *self.x, self.result_filter, VERSIONS_LISTED
            )
            if rows[0]["result_id"] != self.result_filter:
                results = [r["result_id"] for r in rows]
                held = rows[0]["held"]
                which = f" (the oldest {len(results)} of {held})" if held > len(results) else ""
                raise HistoricalVersionUnavailable(
                    f"result {self.result_filter!r} holds no copy of {self.object_type} "
                    f"{self.object_id!r}; the stored versions are the copies recorded by: "
                    f"{', '.join(results)}{which} (or read without result_id for all of them)",
                    {"available_result_ids": ",".join(results)},
                )

    def _mismatch(self, scopes: list[str]) -> ScopeMismatch:
        return ScopeMismatch(
            f"{self.object_type} {self.object_id!r} is not in "
            f"{self.scope.resolved.describe()}; it belongs to "
            f"{len(scopes)}{' or more' if len(scopes) >= SCOPES_LISTED else ''} other scope(s) — "
            "ask for that scope explicitly if you may read it",
            {"object_type": self.object_type, "object_id": self.object_id},
        )

    def history_gaps(self) -> tuple[str, ...]:
        gaps, bound = self.opening.history_gaps, HISTORY_GAPS_LISTED
        listed = tuple(f"a result holding this object reports: {g}" for g in gaps[:bound])
        if len(gaps) > bound:
            return (*listed, f"the results holding this object report more gaps than these {bound}")
        return listed

    # ---- the neighbourhood --------------------------------------------------------------

    async def members(self) -> NeighbourhoodView:
        """X's neighbourhood: read whole (at most once per call, and cached), or, the first
        time a hub is read at this revision, paged in SQL (see NeighbourhoodCache); a
        preference has none."""
        if self._members is None:
            self._members = self._cache.get(self._cache_key)
        if self._members is None:
            if self.object_type == "preference":
                self._members = Neighbourhood(())
            elif self.opening.is_hub and not self._cache.read_before(self._cache_key):
                self._members = StoredNeighbourhood(self.conn, self.x)
            else:
                rows = await self.conn.fetch(queries.CONTEXT_NEIGHBOURHOOD, *self.x)
                self._members = Neighbourhood(rows)
                self._cache.put(self._cache_key, self._members)
        return self._members

    def _copies_of_x(self, copies: list[Member]) -> list[Member]:
        """X's own copies in recording order (only the named result's, when one is named)."""
        return sorted(
            (m for m in copies if self.result_filter in (None, m.result_id)),
            key=lambda m: m.graph_revision,
        )

    async def unknown_time_excluded(self, include_x: bool) -> int:
        """Evidence an event-time filter leaves out for lacking an event time: related copies,
        and X's own copies when the read lists them as evidence (`include_x`: timeline)."""
        members = await self.members()
        roles = ("member", "self") if include_x else ("member",)
        return await members.undated(roles)

    # ---- collections --------------------------------------------------------------------

    async def pages(
        self,
        specs: Iterable[str | Linked],
        size: int,
        after: list[Any] | None,
        count: bool,
    ) -> list[CollectionPage]:
        """One page of each collection (all continuing after `after` — used with one spec).

        Planning pages needs only the neighbourhood; then the copies on every page (and the
        current projection's newest description and decisions) are read whole, with their
        sources and the relations that give validity, in one statement.
        """
        specs = list(specs)
        # A page of preferences alone (a cursor continuing them) needs no neighbourhood.
        members: NeighbourhoodView = (
            await self.members()
            if any(spec != "preferences" for spec in specs)
            else Neighbourhood(())
        )
        # Everything asked of the neighbourhood, at once (for a hub: one statement).
        requests: dict[str, PageRequest] = {}
        for spec in specs:
            if isinstance(spec, Linked):
                requests[spec.name] = self._linked_request(spec, size, after, count)
            elif spec == "sources":
                cited_after = (str(after[0]), str(after[1])) if after else None
                requests[spec] = PageRequest(None, cited_after, size, count)
        wants_current = "current" in specs
        answers = await members.answer(
            list(requests.values()),
            self_copies=wants_current or "snapshots" in specs,
            # One more than shown: whether the list is complete.
            decisions=DECISIONS_SHOWN + 1 if wants_current else 0,
        )
        answered = dict(zip(requests, answers.pages, strict=True))
        copies_of_x = self._copies_of_x(answers.self_copies)
        planned: list[PlannedPage | PlannedPreferences | str] = []
        for spec in specs:
            if isinstance(spec, Linked):
                planned.append(linked_page(spec.name, answered[spec.name]))
            elif spec == "snapshots":
                planned.append(snapshots_page(copies_of_x, size, after, count))
            elif spec == "sources":
                planned.append(sources_page(answered[spec]))
            elif spec == "preferences":
                planned.append(await self._plan_preferences(size, after, count))
            else:
                planned.append(spec)  # "current": built once the copies are read
        newest = newest_copy(copies_of_x) if wants_current else None
        decisions = answers.decisions
        keys = {k for p in planned if isinstance(p, PlannedPage) for k in p.keys}
        # A page's items show their sources; the current projection's description and
        # decisions do not (a hub's twenty decisions cite a third of the sources read before).
        with_sources = set(keys)
        keys.update(m.key for m in [*([newest] if newest else []), *decisions[:DECISIONS_SHOWN]])
        # Whose validity the pages show: every copy's object, X, the preferences.
        refs: set[Ref] = {(k[1], k[2]) for k in keys}
        if wants_current:
            refs.add(self.x_ref)
        for p in planned:
            if isinstance(p, PlannedPreferences):
                refs.update(("preference", pref.preference_id) for pref in p.prefs)
        rows, touches = await self._read_copies(keys, refs, with_sources)
        pages: list[CollectionPage] = []
        for p in planned:
            if isinstance(p, PlannedPage):
                pages.append(self._built(p, rows, touches))
            elif isinstance(p, PlannedPreferences):
                entries = tuple(preference_entry(pref, touches) for pref in p.prefs)
                pages.append(
                    CollectionPage("preferences", entries, p.has_more, p.total, p.position)
                )
            else:
                pages.append(
                    await self._current(newest, len(copies_of_x), decisions, rows, touches)
                )
        return pages

    def _linked_request(
        self, spec: Linked, size: int, after: list[Any] | None, count: bool
    ) -> PageRequest:
        selection = Selection(
            ("member", "self") if spec.include_self else ("member",),
            spec.types,
            "dated" if spec.dated_only else "undated" if spec.undated_only else "any",
            self.tf if spec.evidence and self.tf.active else None,
        )
        position: EvidenceOrder | None = None
        if after:
            position = (
                bool(after[0]),
                datetime.fromisoformat(after[1]),
                int(after[2]),
                str(after[3]),
                str(after[4]),
            )
        return PageRequest(selection, position, size, count)

    async def _read_copies(
        self, keys: set[RowKey], refs: set[Ref], with_sources: set[RowKey]
    ) -> tuple[dict[RowKey, SearchRow], dict[Ref, list[RelationTouch]]]:
        """Whole stored copies, with the source references cited by those `with_sources`
        (the others' SearchRow.sources are empty), and the evidenced relations touching
        `refs` — one statement."""
        if not keys and not refs:
            return {}, {}
        ordered, touched = sorted(keys), sorted(refs)
        rows = await self.conn.fetch(
            queries.OBJECT_COPIES,
            [k[0] for k in ordered],
            [k[1] for k in ordered],
            [k[2] for k in ordered],
            self.key,
            [r[0] for r in touched],
            [r[1] for r in touched],
            [k in with_sources for k in ordered],
        )
        sources = sources_by_key(r for r in rows if r["part"] == "cited")
        parsed = (object_row(r, sources) for r in rows if r["part"] == "copy")
        copies = {(r.result_id, r.object_type, r.object_id): r for r in parsed}
        return copies, touches_by_ref(r for r in rows if r["part"] == "touch")

    def _built(
        self,
        planned: PlannedPage,
        rows: dict[RowKey, SearchRow],
        touches: dict[Ref, list[RelationTouch]],
    ) -> CollectionPage:
        entries = tuple(
            self._entry(rows[k], planned.label, touches) for k in planned.keys if k in rows
        )
        return CollectionPage(
            planned.name, entries, planned.has_more, planned.total, planned.position
        )

    def _entry(
        self, row: SearchRow, label: str, touches: dict[Ref, list[RelationTouch]]
    ) -> ContextEntry:
        return ContextEntry(
            ref_type=row.object_type,
            ref_id=row.object_id,
            result_id=row.result_id,
            scope_key=row.scope_key,
            label=label,
            kind=row.kind or "",
            content=stored_content(row),
            row=row,
            validity=validity_of(
                touches.get((row.object_type, row.object_id), []), row.object_revision
            ),
        )

    async def _plan_preferences(
        self, size: int, after: list[Any] | None, count: bool
    ) -> PlannedPreferences:
        rows: Sequence[Sequence[Any]] | None = None if after else self.opening.first_preferences
        if rows is None:
            scopes = applicable_preference_scopes(self.scope.resolved)
            rows = await self.conn.fetch(
                queries.PREFERENCES, scopes, after[0] if after else None, size + 1
            )
        prefs = tuple(preference_row(r) for r in rows[:size])
        total = self.opening.preference_fingerprint[0] if count else None
        return PlannedPreferences(
            prefs, len(rows) > size, total, [prefs[-1].preference_id] if prefs else []
        )

    def preferences_version(self) -> str:
        """A fingerprint of the applicable preferences (a cursor goes stale when it changes)."""
        count, digest = self.opening.preference_fingerprint
        return f"{count}.{digest[:16]}"

    async def one_entry(self, name: str, key: list[str]) -> ContextEntry | None:
        """The item a content cursor continues (None when it is gone: the cursor is stale)."""
        if name == "current":
            return (await self.pages(["current"], 1, None, count=False))[0].entries[0]
        if name == "preferences":
            row = await self.conn.fetchrow(queries.PREFERENCE_BY_ID, key[1])
            applicable = applicable_preference_scopes(self.scope.resolved)
            if row is None or row["scope_key"] not in applicable:
                return None
            touches = await relation_touches(self.conn, self.key, {("preference", key[1])})
            return preference_entry(preference_row(row), touches)
        row = await self.conn.fetchrow(queries.OBJECT_COPY, self.key, key[0], key[1], key[2])
        if row is None:
            return None
        sources, touches = await sources_and_touches(self.conn, self.key, [row])
        copy = object_row(row, sources)
        return self._entry(copy, collection_label(name), touches)

    # ---- the current projection ---------------------------------------------------------

    async def _current(
        self,
        newest_member: Member | None,
        copies: int,
        decisions: list[Member],
        rows: dict[RowKey, SearchRow],
        touches: dict[Ref, list[RelationTouch]],
    ) -> CollectionPage:
        """The computed current projection of X (one item): its newest description, and the
        validity of that version."""
        newest = rows[newest_member.key] if newest_member is not None else None
        version = newest.object_revision if newest is not None else None
        in_range = [
            t for t in touches.get(self.x_ref, []) if t.within(self.tf) and t.applies_to(version)
        ]
        # A preference stands as the user confirmed it: a conflicting graph fact is a pending
        # difference (in its document), never a dispute of its validity.
        preference = self.object_type == "preference"
        validity = UNKNOWN_VALIDITY if preference else validity_of(in_range)
        document: dict[str, Any] = {
            "type": self.object_type,
            "id": self.object_id,
            "statement": (
                "the current understanding supported by the stored evidence"
                + (" within the selected evidence range" if self.tf.active else "")
                + "; validity comes only from evidenced replaces/contradicts relations"
            ),
            "validity": validity_json(validity),
            "open_conflicts": [
                {"relation_id": t.relation_id, "with": {"type": t.other[0], "id": t.other[1]}}
                for t in in_range
                if t.link.startswith("contradicts.") and validity.state == "disputed"
            ],
        }
        if preference:
            row = await self.conn.fetchrow(queries.PREFERENCE_BY_ID, self.object_id)
            differences = pending_differences(touches.get(self.x_ref, []))
            document["preference"] = json.loads(
                preference_content(preference_row(row), differences)
            )
        else:
            if newest is not None:
                title_name, body_name = public_fields(newest.object_type)
                document["description"] = {
                    title_name: newest.title,
                    body_name: newest.body,
                    "recorded_by_result": newest.result_id,
                    "recorded_at": format_utc(newest.recorded_at),
                    "note": (
                        f"the newest of {copies} stored description(s) — by when its review "
                        "was generated, not when it was recorded: a late-recorded backfill "
                        "does not replace it; older ones stay in `snapshots` and are not "
                        "hidden by this one"
                    ),
                }
            if newest is not None and newest.object_type == "event":
                document["event_kind"] = newest.kind
            if newest is not None and newest.kind == "decision":
                document["decision_state"] = "decided"
            document["completion"] = self._completion(newest)
            document["decisions"] = self._decisions_json(decisions, rows, touches)
        return CollectionPage(
            "current",
            (
                ContextEntry(
                    ref_type=self.object_type,
                    ref_id=self.object_id,
                    result_id="",
                    scope_key=self.key,
                    label="current_projection",
                    kind=newest.kind or "" if newest else "",
                    content=json.dumps(document, ensure_ascii=False),
                    row=newest,
                    validity=validity,
                ),
            ),
            False,
            1,
            [],
        )

    def _completion(self, newest: SearchRow | None) -> dict[str, Any]:
        if self.opening.completion:
            return {
                "state": "completed",
                "evidence": [
                    {"entity_change": change_id, "result_id": result_id}
                    for change_id, result_id in self.opening.completion
                ],
            }
        why = (
            "a decision is not evidence that it was carried out"
            if newest is not None and newest.kind == "decision"
            else "nothing recorded says this was carried out"
        )
        return {
            "state": "unknown",
            "reason": f"{why}; no 'completed' change or task record is linked",
        }

    @staticmethod
    def _decisions_json(
        decisions: list[Member],
        rows: dict[RowKey, SearchRow],
        touches: dict[Ref, list[RelationTouch]],
    ) -> dict[str, Any]:
        shown = [rows[m.key] for m in decisions[:DECISIONS_SHOWN] if m.key in rows]
        return {
            "items": [
                {
                    "event_id": r.object_id,
                    "title": r.title,
                    "event_time": format_utc(r.event_time_start) or "unknown",
                    "validity": validity_json(
                        validity_of(touches.get(("event", r.object_id), []), r.object_revision)
                    ),
                }
                for r in shown
            ],
            "complete": len(decisions) <= DECISIONS_SHOWN,
            "note": "page the `events` collection for every related event",
        }


def pending_differences(touches: list[RelationTouch]) -> list[dict[str, Any]]:
    """`contradicts` relations in scope against a preference: differences the user has not
    settled. The preference stays as confirmed; nothing overwrites it."""
    return [
        {
            "relation_id": t.relation_id,
            "graph_fact": {"type": t.other[0], "id": t.other[1]},
            "state": "pending: the user has not settled it; the preference stands",
        }
        for t in touches
        if t.link.startswith("contradicts.")
    ]


def preference_entry(pref: PreferenceRow, touches: dict[Ref, list[RelationTouch]]) -> ContextEntry:
    """A preference as background, with its pending differences among `touches`."""
    differences = pending_differences(touches.get(("preference", pref.preference_id), []))
    return ContextEntry(
        ref_type="preference",
        ref_id=pref.preference_id,
        result_id="",
        scope_key=pref.scope_key,
        label="background: confirmed preference",
        kind=pref.subject,
        content=preference_content(pref, differences),
        revision=str(pref.revision),
        recorded_at=pref.updated_at,
    )


def preference_row(row: Sequence[Any]) -> PreferenceRow:
    """A preference from its columns in queries._PREFERENCE_COLUMNS order (a record of
    PREFERENCES or PREFERENCE_BY_ID, or a row of CONTEXT_OPENING's first_preferences)."""
    preference_id, scope_key, subject, text, about, confirmed_by, revision, updated_at = row
    return PreferenceRow(
        preference_id=preference_id,
        scope_key=scope_key,
        subject=subject,
        text=text,
        about=tuple(json.loads(about)),
        confirmed_by=confirmed_by,
        revision=revision,
        updated_at=updated_at,
    )
