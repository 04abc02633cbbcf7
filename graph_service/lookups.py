"""Small reads shared by Search and GetContext: bounded counts, cited sources, row mapping."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import asyncpg

from graph_service import queries
from graph_service.views import RelationTouch, SearchRow, SourceView


async def cited_sources(
    conn: asyncpg.Connection, rows: list[asyncpg.Record]
) -> dict[tuple[str, str], dict[str, Any]]:
    """The source references the rows cite, by (result id, reference id)."""
    wanted: list[tuple[str, str]] = []
    for row in rows:
        details = json.loads(row["details"])
        wanted.extend((row["result_id"], s) for s in details.get("source_reference_ids", []))
    if not wanted:
        return {}
    found = await conn.fetch(queries.SOURCES_OF, [w[0] for w in wanted], [w[1] for w in wanted])
    return sources_by_key(found)


def sources_by_key(rows: Iterable[asyncpg.Record]) -> dict[tuple[str, str], dict[str, Any]]:
    """Source reference rows' details, by (result id, reference id), as object_row takes them."""
    return {(r["result_id"], r["object_id"]): json.loads(r["details"]) for r in rows}


def object_row(
    row: asyncpg.Record, sources: dict[tuple[str, str], dict[str, Any]], score: int = 0
) -> SearchRow:
    """A stored object copy with the sources it cites."""
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


async def relation_touches(
    conn: asyncpg.Connection, scope_key: str, refs: set[tuple[str, str]]
) -> dict[tuple[str, str], list[RelationTouch]]:
    """The evidenced relations (`replaces`, `contradicts`) in scope touching each ref, with
    the other end of each and the relation's own times."""
    if not refs:
        return {}
    ordered = sorted(refs)
    rows = await conn.fetch(
        queries.VALIDITY_RELATIONS, scope_key, [r[0] for r in ordered], [r[1] for r in ordered]
    )
    found: dict[tuple[str, str], list[RelationTouch]] = {}
    for row in rows:
        details = json.loads(row["details"])
        other = details.get("to" if row["link"].endswith(".from") else "from", {})
        found.setdefault((row["to_type"], row["to_id"]), []).append(
            RelationTouch(
                row["link"],
                row["relation_id"],
                row["effective_at"],
                (str(other.get("type", "")), str(other.get("id", ""))),
                row["effective_to"],
                row["review_generated_at"],
                row["recorded_at"],
            )
        )
    return found
