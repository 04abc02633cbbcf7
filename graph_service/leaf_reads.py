"""SearchLeaves: the shared leaf facts a scope may read, wherever they were first extracted
(G9), always filtered by the source's real project, each labelled with where it was extracted."""

from __future__ import annotations

import json
import uuid
from typing import Any

import asyncpg

from graph_service import convert
from graph_service.errors import InvalidInput
from graph_service.queries import replica
from graph_service.queries.leaves import (
    FORCE_CUSTOM_PLANS,
    GLOBAL_LEAVES,
    LINKED_LEAVES,
    LINKED_LEAVES_ABOUT,
    LINKED_REFERENCE,
    MESSAGE_LINEAGE,
    PROJECT_LEAVES,
)
from graph_service.search import SCAN_BUDGET_S, budget_exceeded
from graph_service.views import ResolvedScope, TimeFilter
from mirrortree.protoscope import scope_to_proto
from mirrortree.scopes import ScopeValue
from mirrortree.timefmt import format_utc
from mirrortree.v1 import common_pb2, leaves_pb2
from mirrortree.vocabulary import PRECISION_VALUES


def filters(
    request: leaves_pb2.SearchLeavesRequest,
) -> tuple[ScopeValue | None, str, str, str, int]:
    """(scope asked for, query, source type, source id, page size), refused field by field."""
    check = convert.Checker()
    requested = check.scope("scope", request.scope, required=False)
    query = check.text("query", request.query, convert.MAX_QUERY, required=False)
    if bool(request.source_type) != bool(request.source_id):
        check.fail("source_id", "source_type and source_id are given together or not at all")
    check.identifier("source_type", request.source_type, required=False)
    check.identifier("source_id", request.source_id, required=False)
    size = check.page_size(request.page_size, convert.DEFAULT_PAGE, convert.MAX_PAGE)
    check.done()
    return requested, query, request.source_type, request.source_id, size


def after(position: list[Any] | None) -> int:
    if not position:
        return 0
    if not isinstance(position[0], int):
        raise InvalidInput.one("cursor", "is not a SearchLeaves cursor")
    return position[0]


async def read(
    conn: asyncpg.Connection,
    scope: ResolvedScope,
    *,
    pattern: str | None,
    source: tuple[str, str],
    last_leaf: int,
    page_size: int,
) -> list[asyncpg.Record]:
    """One page plus one row (to tell whether more follow)."""
    source_type, source_id = source
    if source_type == "message":
        try:
            lineage = await conn.fetchval(MESSAGE_LINEAGE, uuid.UUID(source_id))
        except ValueError:
            lineage = None
        source_id = lineage or source_id
    args = (
        scope.resolved.key,
        pattern,
        source_type or None,
        source_id or None,
        last_leaf,
        page_size + 1,
    )
    await conn.execute(FORCE_CUSTOM_PLANS)
    if scope.resolved.is_global:
        return list(await conn.fetch(GLOBAL_LEAVES, *args))
    return list(await conn.fetch(PROJECT_LEAVES, *args, list(scope.resolved.projects)))


def leaf(row: asyncpg.Record) -> leaves_pb2.SharedLeaf:
    item = leaves_pb2.SharedLeaf(
        leaf_id=str(row["leaf_id"]),
        text=row["text"],
        source_type=row["source_type"],
        source_id=row["source_id"],
        source_version=row["source_version"],
        range=leaves_pb2.CodePointRange(start=row["start"], end=row["end"]),
        contract_version=row["contract_version"],
        analysis=row["analysis"],
        source_project=row["source_project"] or "",
        extracted_in=scope_to_proto(ScopeValue.from_key(row["scope_key"])),
        extracted_in_result_id=row["result_id"],
        extracted_object_id=row["object_id"],
        confirmation_state=row["confirmation_state"] or "",
        recorded_at=format_utc(row["recorded_at"]),
        recorded_in_scope=row["recorded_in_scope"],
    )
    if row["event_time_start"] is not None:
        item.event_time.start = format_utc(row["event_time_start"])
        item.event_time.known = True
    if row["event_time_end"] is not None:
        item.event_time.end = format_utc(row["event_time_end"])
    item.event_time.precision = PRECISION_VALUES.get(row["event_time_precision"] or "", 0)  # type: ignore[assignment]
    if row["event_time_basis"]:
        item.event_time.basis = row["event_time_basis"]
    return item


def page(rows: list[asyncpg.Record], page_size: int, next_cursor: str) -> common_pb2.PageInfo:
    more = len(rows) > page_size
    return common_pb2.PageInfo(
        returned_count=min(len(rows), page_size),
        has_more=more,
        next_cursor=next_cursor,
        complete=not more,
        limit_reason="page_size" if more else "",
        total=convert.count(None, "not counted: page through the leaves"),
    )


async def linked(
    conn: asyncpg.Connection,
    scope: ResolvedScope,
    query: str,
    opening: asyncpg.Record,
    *,
    tf: TimeFilter,
    limit: int,
) -> list[asyncpg.Record]:
    """The leaf facts of Search's text (the opening's lowered pattern) that the scope linked
    (LINKED_LEAVES), at most `limit`, within Search's budget: a text too short for the trigram
    index may walk every use of the scope."""
    projects = None if scope.resolved.is_global else list(scope.resolved.projects)
    # Planned with its values: the scope's uses or the trigram index, whichever is fewer.
    await conn.execute(replica.PLAN_WITH_VALUES)
    try:
        rows = await conn.fetch(
            LINKED_LEAVES,
            scope.resolved.key,
            projects,
            opening["folded_pattern"],
            tf.start,
            tf.end,
            tf.basis,
            limit,
            timeout=SCAN_BUDGET_S,
        )
    except TimeoutError:
        raise budget_exceeded(query, scope.resolved.describe()) from None
    await conn.execute(replica.PLAN_GENERICALLY)
    return list(rows)


async def linked_about(
    conn: asyncpg.Connection,
    scope: ResolvedScope,
    ref: tuple[str, str],
    time_filter: TimeFilter,
    limit: int,
) -> list[asyncpg.Record]:
    """The leaf facts the scope linked that its reviews said are about `ref` (type, id)."""
    projects = None if scope.resolved.is_global else list(scope.resolved.projects)
    about = json.dumps({"type": ref[0], "id": ref[1]})
    rows = await conn.fetch(
        LINKED_LEAVES_ABOUT,
        scope.resolved.key,
        projects,
        about,
        time_filter.start,
        time_filter.end,
        time_filter.basis,
        limit,
    )
    return list(rows)


async def linked_reference(
    conn: asyncpg.Connection, scope_key: str, reference_id: str, rows: list[asyncpg.Record]
) -> list[asyncpg.Record]:
    """The copies of a source reference that cite the evidence of a leaf the scope linked."""
    for source in {_source_of(r) for r in rows}:
        source_type, canonical = source
        if source_type == "message":
            try:
                canonical = await conn.fetchval(MESSAGE_LINEAGE, uuid.UUID(canonical)) or ""
            except ValueError:
                continue
        results = [r["result_id"] for r in rows if _source_of(r) == source]
        found = await conn.fetchval(
            LINKED_REFERENCE, scope_key, results, reference_id, source_type, canonical
        )
        if found is not None:
            return [r for r in rows if r["result_id"] == found]
    return []


def _source_of(row: asyncpg.Record) -> tuple[str, str]:
    details = json.loads(row["details"])
    return str(details.get("source_type", "")), str(details.get("source_id", ""))


def linked_hit(row: asyncpg.Record) -> leaves_pb2.LinkedLeafHit:
    return leaves_pb2.LinkedLeafHit(
        ref=common_pb2.ObjectRef(type=common_pb2.LEAF_FACT, id=row["use_object_id"]),
        result_id=row["use_result_id"],
        leaf=leaf(row),
        source_reference_ids=[str(i) for i in json.loads(row["source_reference_ids"])],
    )
