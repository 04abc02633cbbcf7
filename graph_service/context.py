"""story_graph_get_context: one object's snapshots, current projection, evidence and sources.

Everything is read inside the caller's REPEATABLE READ READ ONLY transaction, so every
collection of one response comes from one snapshot. Each collection is its own keyset page:

    current mode   current, snapshots, events, changes, relations, leaves, related, sources,
                   preferences
    timeline mode  timeline (dated evidence in event-time order, the object itself included),
                   undated (evidence whose time is unknown), snapshots, related, sources

The current projection is computed, never stored: the newest stored description, validity
from evidenced relations only (within the selected evidence range), decisions with their
validity, completion evidence, open conflicts and pending differences with preferences.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg

from graph_service import queries
from graph_service.convert import public_fields
from graph_service.errors import HistoricalVersionUnavailable, NotFound, ScopeMismatch
from graph_service.lookups import bounded_count, cited_sources, object_row, relation_touches
from graph_service.views import (
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
# Not datetime.min: asyncpg sends that as -infinity.
UNKNOWN_TIME_STAND_IN = datetime(1, 1, 2, tzinfo=UTC)


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
    ) -> None:
        self.conn = conn
        self.scope = scope
        self.key = scope.resolved.key
        self.object_type = object_type
        self.object_id = object_id
        self.tf = time_filter
        self.result_filter = result_filter
        self.x = (self.key, object_type, object_id)
        self.time_args = (time_filter.start, time_filter.end, time_filter.basis)
        self.no_time = (None, None, time_filter.basis)

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
        scopes = [r["scope_key"] for r in await self.conn.fetch(queries.OBJECT_SCOPES, *self.x[1:])]
        if not scopes:
            raise NotFound(
                f"{self.object_type} {self.object_id!r} does not exist in the story graph",
                {"resource": self.object_type, "id": self.object_id},
            )
        if self.key not in scopes:
            raise self._mismatch(scopes)
        if self.result_filter is not None:
            results = [
                r["result_id"] for r in await self.conn.fetch(queries.OBJECT_RESULTS, *self.x, 50)
            ]
            if self.result_filter not in results:
                raise HistoricalVersionUnavailable(
                    f"result {self.result_filter!r} holds no copy of {self.object_type} "
                    f"{self.object_id!r}; the stored versions are the copies recorded by: "
                    f"{', '.join(results)} (or read without result_id for all of them)",
                    {"available_result_ids": ",".join(results)},
                )

    def _mismatch(self, scopes: list[str]) -> ScopeMismatch:
        return ScopeMismatch(
            f"{self.object_type} {self.object_id!r} is not in "
            f"{self.scope.resolved.describe()}; it belongs to "
            f"{len(scopes)} other scope(s) — ask for that scope explicitly if you may read it",
            {"object_type": self.object_type, "object_id": self.object_id},
        )

    async def history_gaps(self) -> tuple[str, ...]:
        gaps = [r["gap"] for r in await self.conn.fetch(queries.RESULT_GAPS, *self.x)]
        return tuple(f"a result holding this object reports: {g}" for g in gaps)

    # ---- collections --------------------------------------------------------------------

    async def page(
        self, spec: str | Linked, size: int, after: list[Any] | None, count: bool
    ) -> CollectionPage:
        if isinstance(spec, Linked):
            return await self._linked(spec, size, after, count)
        if spec == "snapshots":
            return await self._snapshots(size, after, count)
        if spec == "sources":
            return await self._sources(size, after, count)
        if spec == "preferences":
            return await self._preferences(size, after, count)
        return await self._current()

    async def _rows_to_entries(
        self, rows: list[asyncpg.Record], label: str
    ) -> tuple[ContextEntry, ...]:
        sources = await cited_sources(self.conn, rows)
        parsed = [object_row(r, sources) for r in rows]
        validity = await self.validity({(r.object_type, r.object_id) for r in parsed})
        return tuple(
            ContextEntry(
                ref_type=r.object_type,
                ref_id=r.object_id,
                result_id=r.result_id,
                scope_key=r.scope_key,
                label=label,
                kind=r.kind or "",
                content=stored_content(r),
                row=r,
                validity=validity.get((r.object_type, r.object_id), ValidityView("unknown")),
            )
            for r in parsed
        )

    async def _linked(
        self, spec: Linked, size: int, after: list[Any] | None, count: bool
    ) -> CollectionPage:
        time_args = self.time_args if spec.evidence else self.no_time
        common = (
            *self.x,
            *time_args,
            list(spec.types),
            spec.include_self,
            spec.dated_only,
            spec.undated_only,
        )
        keyset: tuple[Any, ...] = (None, None, None, None, None)
        if after:
            keyset = (bool(after[0]), datetime.fromisoformat(after[1]), *after[2:5])
        rows = await self.conn.fetch(queries.CONTEXT_COLLECTION, *common, *keyset, size + 1)
        total = (
            await bounded_count(self.conn, queries.CONTEXT_COLLECTION_COUNT, *common)
            if count
            else None
        )
        page = rows[:size]
        position: list[Any] = []
        if page:
            last = page[-1]
            start = last["event_time_start"]
            position = [
                start is None,
                (start or UNKNOWN_TIME_STAND_IN).isoformat(),
                last["type_rank"],
                last["object_id"],
                last["result_id"],
            ]
        label = "undated_evidence" if spec.undated_only else "stored_copy"
        return CollectionPage(
            spec.name, await self._rows_to_entries(page, label), len(rows) > size, total, position
        )

    async def _snapshots(self, size: int, after: list[Any] | None, count: bool) -> CollectionPage:
        rows = await self.conn.fetch(
            queries.CONTEXT_SNAPSHOTS,
            *self.x,
            self.result_filter,
            int(after[0]) if after else None,
            size + 1,
        )
        total = (
            await bounded_count(
                self.conn, queries.CONTEXT_SNAPSHOT_COUNT, *self.x, self.result_filter
            )
            if count
            else None
        )
        page = rows[:size]
        return CollectionPage(
            "snapshots",
            await self._rows_to_entries(page, "stored_snapshot"),
            len(rows) > size,
            total,
            [page[-1]["graph_revision"]] if page else [],
        )

    async def _sources(self, size: int, after: list[Any] | None, count: bool) -> CollectionPage:
        keyset = (after[0], after[1]) if after else (None, None)
        rows = await self.conn.fetch(queries.CONTEXT_SOURCES, *self.x, *keyset, size + 1)
        total = (
            await bounded_count(self.conn, queries.CONTEXT_SOURCES_COUNT, *self.x)
            if count
            else None
        )
        page = rows[:size]
        return CollectionPage(
            "sources",
            await self._rows_to_entries(page, "source_reference"),
            len(rows) > size,
            total,
            [page[-1]["object_id"], page[-1]["result_id"]] if page else [],
        )

    async def _preferences(self, size: int, after: list[Any] | None, count: bool) -> CollectionPage:
        scopes = applicable_preference_scopes(self.scope.resolved)
        rows = await self.conn.fetch(
            queries.PREFERENCES, scopes, after[0] if after else None, size + 1
        )
        prefs = [preference_row(r) for r in rows[:size]]
        entries = await self._preference_entries(prefs)
        total = None
        if count:
            version = await self.conn.fetchrow(queries.PREFERENCES_VERSION, scopes)
            total = int(version["n"])
        return CollectionPage(
            "preferences",
            entries,
            len(rows) > size,
            total,
            [prefs[-1].preference_id] if prefs else [],
        )

    async def _preference_entries(self, prefs: list[PreferenceRow]) -> tuple[ContextEntry, ...]:
        differences = await self.pending_differences([p.preference_id for p in prefs])
        return tuple(
            ContextEntry(
                ref_type="preference",
                ref_id=p.preference_id,
                result_id="",
                scope_key=p.scope_key,
                label="background: confirmed preference",
                kind=p.subject,
                content=preference_content(p, differences.get(p.preference_id, [])),
                revision=str(p.revision),
                recorded_at=p.updated_at,
            )
            for p in prefs
        )

    async def preferences_version(self) -> str:
        row = await self.conn.fetchrow(
            queries.PREFERENCES_VERSION, applicable_preference_scopes(self.scope.resolved)
        )
        return f"{row['n']}.{row['revisions']}"

    async def one_entry(self, name: str, key: list[str]) -> ContextEntry | None:
        """The item a content cursor continues (None when it is gone: the cursor is stale)."""
        if name == "current":
            return (await self._current()).entries[0]
        if name == "preferences":
            row = await self.conn.fetchrow(queries.PREFERENCE_BY_ID, key[1])
            applicable = applicable_preference_scopes(self.scope.resolved)
            if row is None or row["scope_key"] not in applicable:
                return None
            return (await self._preference_entries([preference_row(row)]))[0]
        row = await self.conn.fetchrow(queries.OBJECT_COPY, self.key, key[0], key[1], key[2])
        if row is None:
            return None
        entries = await self._rows_to_entries([row], "stored_copy")
        return entries[0]

    # ---- evidence-derived facts ---------------------------------------------------------

    async def touches(
        self, refs: set[tuple[str, str]], filtered: bool = False
    ) -> dict[tuple[str, str], list[RelationTouch]]:
        """Evidenced relations touching each ref (only those in the evidence range when
        `filtered`)."""
        return await relation_touches(
            self.conn, self.key, refs, self.time_args if filtered else self.no_time
        )

    async def validity(
        self, refs: set[tuple[str, str]], filtered: bool = False
    ) -> dict[tuple[str, str], ValidityView]:
        touches = await self.touches(refs, filtered)
        return {ref: validity_of(touches.get(ref, [])) for ref in refs}

    async def pending_differences(self, preference_ids: list[str]) -> dict[str, list[Any]]:
        """`contradicts` relations in scope against each preference: differences the user has
        not settled. The preference stays as confirmed; nothing overwrites it."""
        touches = await self.touches({("preference", p) for p in preference_ids})
        return {
            ref[1]: [
                {
                    "relation_id": t.relation_id,
                    "graph_fact": {"type": t.other[0], "id": t.other[1]},
                    "state": "pending: the user has not settled it; the preference stands",
                }
                for t in found
                if t.link.startswith("contradicts.")
            ]
            for ref, found in touches.items()
        }

    async def _current(self) -> CollectionPage:
        """The computed current projection of X (one item)."""
        x_ref = (self.object_type, self.object_id)
        touches = (await self.touches({x_ref}, filtered=self.tf.active)).get(x_ref, [])
        validity = validity_of(touches)
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
                for t in touches
                if t.link.startswith("contradicts.") and validity.state == "disputed"
            ],
        }
        newest: SearchRow | None = None
        if self.object_type == "preference":
            row = await self.conn.fetchrow(queries.PREFERENCE_BY_ID, self.object_id)
            pref = preference_row(row)
            differences = await self.pending_differences([self.object_id])
            document["preference"] = json.loads(
                preference_content(pref, differences.get(self.object_id, []))
            )
        else:
            rows = await self.conn.fetch(
                queries.CONTEXT_SNAPSHOTS, *self.x, self.result_filter, None, 1_000
            )
            if rows:
                newest = object_row(rows[-1], {})
                title_name, body_name = public_fields(newest.object_type)
                document["description"] = {
                    title_name: newest.title,
                    body_name: newest.body,
                    "recorded_by_result": newest.result_id,
                    "recorded_at": format_utc(newest.recorded_at),
                    "note": (
                        f"the newest of {len(rows)} stored description(s); older ones stay in "
                        "`snapshots` and are not hidden by this one"
                    ),
                }
            if newest is not None and newest.object_type == "event":
                document["event_kind"] = newest.kind
            if newest is not None and newest.kind == "decision":
                document["decision_state"] = "decided"
            document["completion"] = await self._completion(newest)
            document["decisions"] = await self._decisions()
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

    async def _completion(self, newest: SearchRow | None) -> dict[str, Any]:
        evidence = await self.conn.fetch(queries.COMPLETION_EVIDENCE, *self.x)
        if evidence:
            return {
                "state": "completed",
                "evidence": [
                    {"entity_change": r["object_id"], "result_id": r["result_id"]} for r in evidence
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

    async def _decisions(self) -> dict[str, Any]:
        rows = await self.conn.fetch(queries.RELATED_DECISIONS, *self.x, DECISIONS_SHOWN + 1)
        shown = rows[:DECISIONS_SHOWN]
        validity = await self.validity({("event", r["object_id"]) for r in shown})
        return {
            "items": [
                {
                    "event_id": r["object_id"],
                    "title": r["title"],
                    "event_time": format_utc(r["event_time_start"]) or "unknown",
                    "validity": validity_json(validity[("event", r["object_id"])]),
                }
                for r in shown
            ],
            "complete": len(rows) <= DECISIONS_SHOWN,
            "note": "page the `events` collection for every related event",
        }

    async def unknown_time_excluded(self) -> int | None:
        return await bounded_count(self.conn, queries.CONTEXT_UNKNOWN_TIME, *self.x, list(EVIDENCE))

    # ---- helpers ------------------------------------------------------------------------


def preference_row(row: asyncpg.Record) -> PreferenceRow:
    return PreferenceRow(
        preference_id=row["id"],
        scope_key=row["scope_key"],
        subject=row["subject"],
        text=row["text"],
        about=tuple(json.loads(row["about"])),
        confirmed_by=row["confirmed_by"],
        revision=row["revision"],
        updated_at=row["updated_at"],
    )
