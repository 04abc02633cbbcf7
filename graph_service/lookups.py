"""Small reads shared by Search and GetContext: bounded counts, cited sources, row mapping."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import asyncpg

from graph_service.queries.sources import SOURCES_AND_TOUCHES, VALIDITY_RELATIONS
from graph_service.views import (
    UNKNOWN_VALIDITY,
    RelationTouch,
    SearchRow,
    SourceView,
    ValidityView,
)


async def sources_and_touches(
    conn: asyncpg.Connection, scope_key: str, rows: list[asyncpg.Record]
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[tuple[str, str], list[RelationTouch]]]:
    """The source references the rows cite, by (result id, reference id), and the evidenced
    relations in scope touching the rows' objects (relation_touches), in one statement."""
    if not rows:
        return {}, {}
    wanted: list[tuple[str, str]] = []
    for row in rows:
        details = json.loads(row["details"])
        wanted.extend((row["result_id"], s) for s in details.get("source_reference_ids", []))
    refs = sorted({(r["object_type"], r["object_id"]) for r in rows})
    found = await conn.fetch(
        SOURCES_AND_TOUCHES,
        [w[0] for w in wanted],
        [w[1] for w in wanted],
        scope_key,
        [r[0] for r in refs],
        [r[1] for r in refs],
    )
    return sources_by_key(r for r in found if r["part"] == "cited"), touches_by_ref(
        r for r in found if r["part"] == "touch"
    )


def sources_by_key(rows: Iterable[asyncpg.Record]) -> dict[tuple[str, str], dict[str, Any]]:
    """Source reference rows' details, by (result id, reference id), as object_row takes them."""
    return {(r["result_id"], r["object_id"]): json.loads(r["details"]) for r in rows}


def object_row(
    row: asyncpg.Record,
    sources: dict[tuple[str, str], dict[str, Any]],
    score: int = 0,
    *,
    validity: ValidityView = UNKNOWN_VALIDITY,
) -> SearchRow:
    """A stored object copy with the sources it cites (those in `sources`)."""
    details_text = row["details"]
    details = json.loads(details_text)
    result_id = row["result_id"]
    cited: tuple[SourceView, ...] = ()
    if sources:
        refs = details.get("source_reference_ids", ())
        cited = tuple(
            SourceView(ref, sources[key]) for ref in refs if (key := (result_id, ref)) in sources
        )
    return SearchRow(
        result_id=result_id,
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
        sources=cited,
        validity=validity,
        details_text=details_text,
    )


async def relation_touches(
    conn: asyncpg.Connection, scope_key: str, refs: set[tuple[str, str]]
) -> dict[tuple[str, str], list[RelationTouch]]:
    """The evidenced relations (`replaces`, `contradicts`) in scope touching each ref."""
    if not refs:
        return {}
    ordered = sorted(refs)
    rows = await conn.fetch(
        VALIDITY_RELATIONS, scope_key, [r[0] for r in ordered], [r[1] for r in ordered]
    )
    return touches_by_ref(rows)


def touches_by_ref(rows: Iterable[asyncpg.Record]) -> dict[tuple[str, str], list[RelationTouch]]:
    """Touch rows (queries/sql/validity_relations.sql) by the object touched, each with the other
    end of its relation and the relation's own times, by relation id and result id."""
    found: dict[tuple[str, str], list[RelationTouch]] = {}
    for row in sorted(rows, key=lambda r: (r["object_id"], r["result_id"])):
        details = json.loads(row["details"])
        touched_end = details.get("from" if row["link"].endswith(".from") else "to", {})
        other = details.get("to" if row["link"].endswith(".from") else "from", {})
        pinned = touched_end.get("version", {})
        revision = pinned.get("revision") or pinned.get("object_revision")
        found.setdefault((row["touched_type"], row["touched_id"]), []).append(
            RelationTouch(
                row["link"],
                row["object_id"],
                row["event_time_start"],
                (str(other.get("type", "")), str(other.get("id", ""))),
                row["event_time_end"],
                row["review_generated_at"],
                row["recorded_at"],
                str(revision) if revision else None,
            )
        )
    return found
