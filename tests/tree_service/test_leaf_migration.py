"""Migration 0030 links the leaf facts recorded before extractions were keyed only where the
key is exact, and reports what stays separate and why; entities are never merged."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest_asyncio

from devtools.leaf_report import report
from tree_service.migrate import migrate

# (object type, id, title, body, details) of one stored copy.
Row = tuple[str, str, str, str, dict[str, Any]]

RESULT = """
INSERT INTO review_results (result_id, scope_key, scope_projects, phase, review_generated_at,
                            recorded_at, graph_revision, request_hash, object_count)
VALUES ($1, $2, $3, 'daily', now(), now(), nextval('graph_revision_seq'), '\\x00', 0)
"""
OBJECT = """
INSERT INTO graph_objects (result_id, object_type, object_id, type_rank, scope_key, title,
                           body, review_generated_at, recorded_at, details)
VALUES ($1, $2, $3, 1, $4, $5, $6, now(), now(), $7::jsonb)
"""


@pytest_asyncio.fixture
async def before_keyed_leaves(cluster) -> AsyncIterator[asyncpg.Connection]:
    """A database migrated to just before 0029, with the leaves of four review results."""
    name = f"leaves_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(cluster.primary_dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    conn = await asyncpg.connect(cluster.primary_dsn.rsplit("/", 1)[0] + f"/{name}")
    try:
        await migrate(conn, up_to=28)
        yield conn
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def result(conn, result_id: str, project: str | None, objects: list[Row]) -> None:
    scope_key = "global" if project is None else f"projects:{project}"
    await conn.execute(RESULT, result_id, scope_key, [] if project is None else [project])
    for object_type, object_id, title, body, details in objects:
        await conn.execute(
            OBJECT, result_id, object_type, object_id, scope_key, title, body, json.dumps(details)
        )


def ref(ref_id: str, source_id: str = "doc-1", start: int = 0, end: int = 6) -> Row:
    details = {
        "source_type": "document",
        "source_id": source_id,
        "source_version": "1",
        "fragment_start": start,
        "fragment_end": end,
    }
    return ("source_reference", ref_id, "", "Ledger"[start:end] if end else "Ledger", details)


def leaf(leaf_id: str, text: str, *refs: str) -> Row:
    return ("leaf_fact", leaf_id, "", text, {"source_reference_ids": list(refs), "about": []})


async def test_exact_key_copies_are_linked_and_the_rest_reported_separate(before_keyed_leaves):
    conn = before_keyed_leaves
    await conn.execute(
        "INSERT INTO sources (source_id, source_type, project_id, title, text, revision)"
        " VALUES ('doc-1', 'document', 'a', '', 'Ledger notes', 1)"
    )
    entity: Row = ("entity", "ent-ledger", "Ledger", "", {})
    await result(
        conn, "r-global", None, [ref("s1"), leaf("l1", "Ledger is PostgreSQL", "s1"), entity]
    )
    await result(
        conn,
        "r-a",
        "a",
        [
            ref("s2"),
            leaf("l2", "Ledger is PostgreSQL", "s2"),  # the same key as l1: linked
            ref("s3", start=0, end=0),
            leaf("l3", "Ledger somewhere", "s3"),  # position unknown
            ("source_reference", "s4", "", "x", {"source_type": "document"}),
            leaf("l4", "No source named", "s4"),
            entity,  # same id and label as Global's: still never merged
        ],
    )
    await result(conn, "r-b", "b", [ref("s5"), leaf("l5", "Ledger is PostgreSQL", "s5")])
    await migrate(conn)

    leaves = await conn.fetch("SELECT leaf_id, result_id, object_id, contract_version FROM leaves")
    assert [(r["result_id"], r["object_id"], r["contract_version"]) for r in leaves] == [
        ("r-global", "l1", "legacy")
    ]
    uses = await conn.fetch("SELECT scope_key, object_id FROM leaf_uses ORDER BY scope_key")
    # The earliest copy is the leaf itself; the project's copy is a use of it.
    assert [(u["scope_key"], u["object_id"]) for u in uses] == [("projects:a", "l2")]
    rows = {
        (r["outcome"], r["reason"]): (r["copies"], r["leaves"])
        for r in await conn.fetch("SELECT * FROM leaf_migration_report")
    }
    assert rows == {
        ("linked", "exact-key copies in several scopes now share one leaf"): (2, 1),
        ("separate", "the position of a cited fragment is unknown"): (1, 1),
        ("separate", "cites no single source version it names"): (1, 1),
        ("separate", "the source belongs to a project outside the leaf's scope"): (1, 1),
        (
            "separate",
            "entities are never merged across scopes: same name is not same entity",
        ): (2, 1),
    }
    # Nothing was rewritten: every copy is still there.
    assert (
        await conn.fetchval("SELECT count(*) FROM graph_objects WHERE object_type = 'entity'") == 2
    )
    text = await report(conn)
    assert "linked          2 copies        1 leaves" in text
    assert "legacy" in text and "in 2 scopes" in text
