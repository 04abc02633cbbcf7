"""A scope's figures that every read opens with (scope_results, migration 0036) are
those of the results it holds: kept by the database as each result is inserted, whoever
inserts it, and counted once for the results recorded before."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import grpc
import pytest

from graph_service.queries import context, scope_state, search
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import rows_read, unique
from tests.graph_service.story import options
from tests.tree_service.reviews import review, scope_of
from tree_service.migrate import migrate

FIGURES = """
SELECT results, revision, copies, excluded_source_types FROM scope_results WHERE scope_key = $1
"""
# The same figures counted from the results themselves, as the openings counted them before.
COUNTED = """
SELECT count(*) AS results, max(graph_revision) AS revision, sum(object_count) AS copies,
       ARRAY(SELECT DISTINCT t FROM review_results x, unnest(x.excluded_source_types) t
             WHERE x.scope_key = $1 ORDER BY t) AS excluded_source_types
FROM review_results WHERE scope_key = $1
"""


def events(count: int) -> list[tree_pb2.EventInput]:
    return [
        tree_pb2.EventInput(id=f"e{i}", kind=tree_pb2.DECISION, title=f"decision {i}")
        for i in range(count)
    ]


async def figures(dsn: str, scope_key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kept, counted) for the scope."""
    conn = await asyncpg.connect(dsn)
    try:
        kept = await conn.fetchrow(FIGURES, scope_key)
        counted = await conn.fetchrow(COUNTED, scope_key)
    finally:
        await conn.close()
    assert kept is not None, f"no figures kept for {scope_key}"
    return dict(kept), dict(counted)


async def test_a_scope_keeps_the_figures_of_the_results_it_holds(cluster, tree_stub, graph_stub):
    project = unique("p")
    scope_key = f"projects:{project}"
    first = review(project, events=events(3), excluded_source_types=["tool_output", "email"])
    await tree_stub.RecordReview(first)
    await tree_stub.RecordReview(first)  # an idempotent retry records nothing more
    # Results recorded at once in one scope queue on its lock; each is counted once.
    await asyncio.gather(
        *(
            tree_stub.RecordReview(
                review(project, events=events(n), excluded_source_types=["email", "chat"])
            )
            for n in (1, 2, 4)
        )
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:  # refused whole: not counted
        await tree_stub.RecordReview(
            review(project, relations=[tree_pb2.RelationInput(id="r", kind=tree_pb2.REPLACES)])
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    last = await tree_stub.RecordReview(review(project, events=events(2)))
    kept, counted = await figures(cluster.primary_dsn, scope_key)
    assert kept == counted
    assert kept["results"] == 5 and kept["copies"] == 12
    assert kept["excluded_source_types"] == ["chat", "email", "tool_output"]
    # Reads open with them: the results in scope, the revision read at, the exclusions.
    read = await graph_stub.Search(
        graph_pb2.SearchRequest(query="decision", scope=scope_of(project), options=options(last))
    )
    assert read.coverage.results_in_scope.exact == 5
    assert read.basis.read_revision == kept["revision"]
    assert list(read.coverage.excluded_source_types) == ["chat", "email", "tool_output"]
    # A result inserted by anything else — a tree_service of an earlier build still serving
    # during an upgrade — is counted too.
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        await conn.execute(
            """
            INSERT INTO review_results (result_id, scope_key, scope_projects, phase,
                review_generated_at, recorded_at, graph_revision, request_hash, object_count)
            VALUES ($1, $2, ARRAY[$3], 'daily', now(), now(), nextval('graph_revision_seq'),
                    '\\x00', 4)
            """,
            unique("by-hand"),
            scope_key,
            project,
        )
    finally:
        await conn.close()
    by_hand, counted = await figures(cluster.primary_dsn, scope_key)
    assert by_hand == counted and by_hand["results"] == 6 and by_hand["copies"] == 16


async def test_a_scope_without_results_opens_empty(graph_stub):
    """The openings join the figures to the scope asked for (GetContext's and ReadSource's as
    Search's: test_statements): a scope that holds no result yet still opens, none in scope."""
    project = unique("p")
    read = await graph_stub.Search(graph_pb2.SearchRequest(query="x", scope=scope_of(project)))
    assert read.coverage.results_in_scope.exact == 0
    assert read.coverage.state == graph_pb2.Coverage.UNKNOWN
    assert read.basis.read_revision == 0 and not read.hits


async def test_the_figures_of_results_recorded_before_are_backfilled(empty_database):
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, up_to=35)
        await conn.execute(
            """
            INSERT INTO review_results (result_id, scope_key, scope_projects, phase,
                review_generated_at, recorded_at, graph_revision, request_hash, object_count,
                excluded_source_types)
            VALUES ('r1', 'projects:a', '{a}', 'daily', now(), now(), 3, '\\x00', 5, '{email}'),
                   ('r2', 'projects:a', '{a}', 'daily', now(), now(), 7, '\\x00', 2, '{chat}'),
                   ('r3', 'projects:b', '{b}', 'daily', now(), now(), 4, '\\x00', 0, '{}')
            """
        )
        await migrate(conn)
        # Recorded afterwards, by anything: counted as it is inserted.
        await conn.execute(
            """
            INSERT INTO review_results (result_id, scope_key, scope_projects, phase,
                review_generated_at, recorded_at, graph_revision, request_hash, object_count)
            VALUES ('r4', 'projects:b', '{b}', 'daily', now(), now(), 5, '\\x00', 6)
            """
        )
        kept = {r["scope_key"]: dict(r) for r in await conn.fetch("SELECT * FROM scope_results")}
    finally:
        await conn.close()
    assert kept == {
        "projects:a": {
            "scope_key": "projects:a",
            "results": 2,
            "revision": 7,
            "copies": 7,
            "excluded_source_types": ["chat", "email"],
        },
        "projects:b": {
            "scope_key": "projects:b",
            "results": 2,
            "revision": 5,
            "copies": 6,
            "excluded_source_types": [],
        },
    }


async def test_an_opening_reads_the_same_few_results_however_many_the_scope_holds(
    empty_database,
):
    """Each opening reads the scope's figures and its newest results, never every result: in a
    scope of 5,000 results, at most the 51 newest reporting gaps and the 20 newest listed."""
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn)
        await conn.execute(
            """
            INSERT INTO review_results (result_id, scope_key, scope_projects, phase,
                review_generated_at, recorded_at, graph_revision, request_hash, object_count,
                coverage_gaps)
            SELECT 'r' || g, 'projects:a', '{a}', 'daily', now() - g * interval '1 minute',
                   now(), g, '\\x00', 3, CASE WHEN g % 2 = 0 THEN '{a gap}'::text[] ELSE '{}' END
            FROM generate_series(1, 5000) g;
            ANALYZE review_results;
            SET plan_cache_mode = force_generic_plan;
            """
        )
        arguments = {
            "state": (scope_state.SCOPE_STATE, "text, int", "'projects:a', 20"),
            "search": (
                search.SEARCH_OPENING,
                "text, int, text, timestamptz, timestamptz, text, text[], int",
                "'projects:a', 20, '%x%', NULL, NULL, 'event_time', '{global,projects:a}', 10",
            ),
            "context": (
                context.CONTEXT_OPENING,
                "text, int, text, text, text[], int, boolean",
                "'projects:a', 20, 'event', 'e1', '{global}', 0, false",
            ),
        }
        read: dict[str, int] = {}
        for name, (statement, types, values) in arguments.items():
            await conn.execute(f"PREPARE {name} ({types}) AS {statement}")
            plan = json.loads(
                await conn.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE {name} ({values})")
            )
            read[name] = rows_read(plan[0]["Plan"], "review_results")
            row = await conn.fetchrow(f"EXECUTE {name} ({values})")
            assert (row["results"], row["copies"], len(row["scope_gaps"])) == (5000, 15000, 51)
            assert len(row["covered_result_id"]) == 20
    finally:
        await conn.close()
    assert all(rows <= 51 + 20 for rows in read.values()), read
