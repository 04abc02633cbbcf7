"""X's neighbourhood as a context read pages it: read whole and held in memory
(Neighbourhood, cached by NeighbourhoodCache), or for a hub paged in SQL over its stored
members (StoredNeighbourhood). Both answer the same PageRequests with the same Pages."""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import asyncpg

from graph_service.queries.hubs import HUB_READS, HUB_UNDATED
from graph_service.views import TimeFilter

EVIDENCE = ("event", "entity_change", "relation", "leaf_fact")
# Not datetime.min: asyncpg sends that as -infinity.
UNKNOWN_TIME_STAND_IN = datetime(1, 1, 2, tzinfo=UTC)
# An evidence order before every copy's (no type rank is negative), and a citation order before
# every source's (no id is empty): where a hub's SQL page reads from the first.
BEFORE_ALL = (False, datetime(1, 1, 1, tzinfo=UTC), -1, "", "")
BEFORE_ALL_SOURCES = ("", "")


# What a cached neighbourhood takes in memory, as tracemalloc measured it: about 1 KB a copy
# (its fields, order and citation) and 0.7 KB for the entry's own structures and key, so that
# the cache is bounded by the memory it takes, not by copies alone (one-copy entries cost nearly
# twice as much each).
COPY_BYTES = 1100
ENTRY_BYTES = 800

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
    collector stops tracking such tuples, while every NamedTuple stays tracked, and a large
    cache of tracked copies makes each full collection pause the service. Members are made
    again only for the copies a read selects.
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
        self.weight = ENTRY_BYTES + COPY_BYTES * self.size
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
    mirrortree.neighbourhoods) instead of read whole, because receiving and ordering all of a
    hub's copies cost a first read more than the rest of it together.
    Each method answers exactly what Neighbourhood's answers for the same copies: the same
    evidence order (text by code point: COLLATE "C"), filters, keysets and counts —
    tests/tree_service/test_context_hubs.py reads every collection both ways."""

    def __init__(self, conn: asyncpg.Connection, x: tuple[str, str, str]) -> None:
        self._conn = conn
        self._x = x

    async def answer(
        self, requests: Sequence[PageRequest], self_copies: bool, decisions: int
    ) -> Answers:
        """In one statement (queries.hubs.HUB_READS): one part per page asked for, then X's own
        copies and the decisions when asked for."""
        parts: list[str] = []
        arguments: list[Any] = []
        for request in requests:
            selection, after = request.selection, request.after
            if selection is None:
                parts.append("cited")
                arguments += [*(after or BEFORE_ALL_SOURCES), request.size + 1, request.counted]
                continue
            tf = selection.time_filter
            parts.append(
                "type_page"
                if selection.roles == ("member",) and len(selection.types) == 1
                else "page"
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
            parts.append("self")
        if decisions:
            parts.append("decisions")
            arguments.append(decisions)
        rows_of: list[list[asyncpg.Record]] = [[] for _ in parts]
        if parts:
            for row in await self._conn.fetch(HUB_READS[tuple(parts)], *self._x, *arguments):
                rows_of[row["part"]].append(row)
        asked = len(requests)
        return Answers(
            [self._page(rows_of[i], r.size, r.counted) for i, r in enumerate(requests)],
            [stored_member(r) for r in rows_of[asked]] if self_copies else [],
            [stored_member(r) for r in rows_of[-1]] if decisions else [],
        )

    async def undated(self, roles: tuple[str, ...]) -> int:
        return int(await self._conn.fetchval(HUB_UNDATED, *self._x, list(roles)))

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
    """A Member from a row of a hub read (queries.hubs): its part and position, Member's columns
    but the cited ids (which only the in-memory neighbourhood needs: it derives the cited
    sources from them), then a total."""
    return Member._make((*tuple(row)[2:-1], ()))


ObjectKey = tuple[str, str, str]  # scope key, object type, object id


class NeighbourhoodCache:
    """Neighbourhoods read recently, by object (scope, type, id), each at the scope's read
    revision it was read at.

    Exact, not a guess: a scope's objects and links only ever change by a new review result,
    which raises the scope's read revision, so an entry is only used at its own revision. A
    read at a newer revision replaces an object's entry, and one at an older revision (on a
    replica further behind) neither uses nor replaces it, so an object is held once. A
    cursor's next page and repeated reads of one object skip the neighbourhood walk. Bounded
    by the memory its entries take (Neighbourhood.weight), least recently used first out.

    A hub's neighbourhood is never held: it is always paged in SQL (StoredNeighbourhood). A
    paged read costs about what a read from memory does, while reading a hub whole to hold
    it cost about twice a paged read (docs/performance.md).
    """

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self._max = max_bytes
        self._held = 0
        self._entries: OrderedDict[ObjectKey, tuple[int, Neighbourhood]] = OrderedDict()

    @property
    def held_bytes(self) -> int:
        return self._held

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: ObjectKey, revision: int) -> Neighbourhood | None:
        found = self._entries.get(key)
        if found is None or found[0] != revision:
            return None
        self._entries.move_to_end(key)
        return found[1]

    def put(self, key: ObjectKey, revision: int, value: Neighbourhood) -> None:
        if value.weight > self._max:
            return
        held = self._entries.get(key)
        if held is not None:
            if held[0] >= revision:  # read on a replica further behind: keep the newer one
                return
            del self._entries[key]
            self._held -= held[1].weight
        self._entries[key] = (revision, value)
        self._held += value.weight
        while self._held > self._max:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._held -= evicted.weight
