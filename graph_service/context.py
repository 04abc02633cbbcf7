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

The current projection is computed, never stored: the description the evidence chooses
(graph_service.current: object revision, then covered period, else the competitors), validity
from evidenced relations only (within the selected evidence range), decisions with their
validity, completion evidence, open conflicts and pending differences with preferences.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from graph_service.context_pages import (
    Linked,
    PlannedPage,
    PlannedPreferences,
    collection_label,
    linked_page,
    snapshots_page,
    sources_page,
)
from graph_service.current import (
    CANDIDATES,
    Choice,
    Period,
    choose,
    description_json,
    unresolved_json,
    work_state_json,
)
from graph_service.documents import (
    applicable_preference_scopes,
    content_text,
    pending_differences,
    preference_content,
    preference_entry,
    preference_row,
    stored_content,
    validity_json,
)
from graph_service.errors import HistoricalVersionUnavailable, NotFound, ScopeMismatch
from graph_service.lookups import (
    object_row,
    relation_touches,
    sources_and_touches,
    sources_by_key,
    touches_by_ref,
)
from graph_service.neighbourhood import (
    EvidenceOrder,
    Member,
    Neighbourhood,
    NeighbourhoodCache,
    NeighbourhoodView,
    PageRequest,
    Ref,
    RowKey,
    Selection,
    StoredNeighbourhood,
)
from graph_service.queries.context import (
    CONTEXT_NEIGHBOURHOOD,
    HISTORY_GAPS_LISTED,
    OBJECT_COPIES,
    OBJECT_COPY,
    OBJECT_RESULTS,
    PREFERENCE_BY_ID,
    PREFERENCES,
    SCOPES_LISTED,
)
from graph_service.views import (
    UNKNOWN_VALIDITY,
    CollectionPage,
    ContextEntry,
    RelationTouch,
    ResolvedScope,
    SearchRow,
    TimeFilter,
    validity_of,
)
from mirrortree.scopes import ScopeValue
from mirrortree.timefmt import format_utc

DECISIONS_SHOWN = 20
VERSIONS_LISTED = 50  # the results named when a read asks for one that holds no copy


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
        self._read_revision = read_revision
        self._members: NeighbourhoodView | None = None
        self._periods: dict[str, Period] = {}  # by result id, of the copies read whole

    # ---- existence and versions ---------------------------------------------------------

    async def require_object(self) -> None:
        """not_found, scope_mismatch, or historical_version_unavailable — each distinct."""
        if self.object_type == "preference":
            row = await self.conn.fetchrow(PREFERENCE_BY_ID, self.object_id)
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
                OBJECT_RESULTS, *self.x, self.result_filter, VERSIONS_LISTED
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
        """X's neighbourhood: read whole (at most once per call, and cached), or for a hub
        paged in SQL (see NeighbourhoodCache); a preference has none."""
        if self._members is None:
            self._members = self._cache.get(self.x, self._read_revision)
        if self._members is None:
            if self.object_type == "preference":
                self._members = Neighbourhood(())
            elif self.opening.is_hub:
                self._members = StoredNeighbourhood(self.conn, self.x)
            else:
                rows = await self.conn.fetch(CONTEXT_NEIGHBOURHOOD, *self.x)
                self._members = Neighbourhood(rows)
                self._cache.put(self.x, self._read_revision, self._members)
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
        # The current description is chosen among X's copies, read whole (at most CANDIDATES).
        candidates = copies_of_x[-CANDIDATES:] if wants_current else []
        decisions = answers.decisions
        keys = {k for p in planned if isinstance(p, PlannedPage) for k in p.keys}
        # A page's items show their sources; the current projection's description and
        # decisions do not (a hub's twenty decisions cite a third of the sources read before).
        with_sources = set(keys)
        keys.update(m.key for m in [*candidates, *decisions[:DECISIONS_SHOWN]])
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
                copies = [(rows[m.key], self._periods[m.result_id]) for m in candidates]
                pages.append(
                    await self._current(choose(copies), len(copies_of_x), decisions, rows, touches)
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
            OBJECT_COPIES,
            [k[0] for k in ordered],
            [k[1] for k in ordered],
            [k[2] for k in ordered],
            self.key,
            [r[0] for r in touched],
            [r[1] for r in touched],
            [k in with_sources for k in ordered],
        )
        for r in rows:
            if r["part"] == "copy":
                self._periods[r["result_id"]] = Period(
                    r["result_coverage_basis"], r["result_covered_from"], r["result_covered_to"]
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
            rows = await self.conn.fetch(PREFERENCES, scopes, after[0] if after else None, size + 1)
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
            row = await self.conn.fetchrow(PREFERENCE_BY_ID, key[1])
            applicable = applicable_preference_scopes(self.scope.resolved)
            if row is None or row["scope_key"] not in applicable:
                return None
            touches = await relation_touches(self.conn, self.key, {("preference", key[1])})
            return preference_entry(preference_row(row), touches)
        row = await self.conn.fetchrow(OBJECT_COPY, self.key, key[0], key[1], key[2])
        if row is None:
            return None
        sources, touches = await sources_and_touches(self.conn, self.key, [row])
        copy = object_row(row, sources)
        return self._entry(copy, collection_label(name), touches)

    # ---- the current projection ---------------------------------------------------------

    async def _current(
        self,
        choice: Choice,
        copies: int,
        decisions: list[Member],
        rows: dict[RowKey, SearchRow],
        touches: dict[Ref, list[RelationTouch]],
    ) -> CollectionPage:
        """The computed current projection of X (one item): its description as the evidence
        chooses it (graph_service.current), and the validity of that version."""
        newest = choice.chosen
        # An event's kind does not depend on which description is current.
        kinded = newest or (choice.competing[0][0] if choice.competing else None)
        version = newest.object_revision if newest is not None else None
        in_range = [
            t for t in touches.get(self.x_ref, []) if t.within(self.tf) and t.applies_to(version)
        ]
        # A preference stands as the user confirmed it: a conflicting graph fact is a pending
        # difference (in its document), never a dispute of its validity.
        preference = self.object_type == "preference"
        validity = UNKNOWN_VALIDITY if preference else validity_of(in_range)
        conflicts = [
            t
            for t in in_range
            if t.link.startswith("contradicts.") and validity.state == "disputed"
        ]
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
                for t in conflicts
            ],
        }
        if preference:
            row = await self.conn.fetchrow(PREFERENCE_BY_ID, self.object_id)
            differences = pending_differences(touches.get(self.x_ref, []))
            document["preference"] = json.loads(
                preference_content(preference_row(row), differences)
            )
        else:
            if choice.by != "none":
                considered = min(copies, CANDIDATES)
                document["description"] = description_json(
                    choice, self._periods, copies, considered
                )
            if kinded is not None and kinded.object_type == "event":
                document["event_kind"] = kinded.kind
            document["work_state"] = work_state_json(kinded, self.opening.completion)
            document["decisions"] = self._decisions_json(decisions, rows, touches)
        document["unresolved"] = unresolved_json(
            choice,
            conflicts,
            pending_differences(touches.get(self.x_ref, []), preference),
            self.history_gaps(),
        )
        return CollectionPage(
            "current",
            (
                ContextEntry(
                    ref_type=self.object_type,
                    ref_id=self.object_id,
                    result_id="",
                    scope_key=self.key,
                    label="current_projection",
                    kind=kinded.kind or "" if kinded else "",
                    content=content_text(document),
                    row=newest,
                    validity=validity,
                ),
            ),
            False,
            1,
            [],
        )

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
