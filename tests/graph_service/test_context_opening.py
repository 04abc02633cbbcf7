"""A context read's opening lists where X is held and the gaps the results holding it report
without reading every copy of X: the same lists as the definitions below, which read them all,
whichever side the opening reads the gaps from."""

from __future__ import annotations

import json

import asyncpg
import pytest

from graph_service.queries.context import CONTEXT_OPENING
from tests.conftest import rows_read
from tree_service.migrate import migrate

# What the lists mean, read from every copy of X.
EVERY_SCOPE = """
SELECT ARRAY(SELECT DISTINCT scope_key FROM graph_objects
             WHERE object_type = $1 AND object_id = $2 ORDER BY scope_key LIMIT 20)
"""
EVERY_GAP = """
SELECT ARRAY(SELECT DISTINCT unnest(r.coverage_gaps) AS gap
             FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
             WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
             ORDER BY gap LIMIT 21)
"""
# $2 results in projects:a, of which the newest $1 report gaps (37 kinds; those older than the
# first 1,000 each its own, listed first), and one in each of 25 other scopes; COPIES puts a copy
# of X in every third result of projects:a and in each other scope's.
STORY = """
INSERT INTO review_results (result_id, scope_key, scope_projects, phase, review_generated_at,
                            recorded_at, graph_revision, request_hash, object_count,
                            coverage_gaps)
SELECT 'r' || g, 'projects:a', '{a}', 'daily', now() - g * interval '1 minute', now(), g,
       '\\x00'::bytea, 1, CASE WHEN g > 1000 AND g <= $1 THEN ARRAY['early gap ' || g]
            WHEN g <= $1 THEN ARRAY['gap ' || (g % 37)] ELSE '{}' END
FROM generate_series(1, $2) g
UNION ALL
SELECT 's' || g, 'projects:s' || g, ARRAY['s' || g], 'daily', now(), now(), 100000 + g,
       '\\x00'::bytea, 1, ARRAY['elsewhere']
FROM generate_series(10, 34) g;
"""


def story(reporting: int, results: int) -> str:
    return STORY.replace("$2", str(results)).replace("$1", str(reporting))


COPIES = """
INSERT INTO graph_objects (result_id, object_type, object_id, type_rank, scope_key, title,
                           review_generated_at, recorded_at)
SELECT result_id, 'entity', 'x', 1, scope_key, 'X', review_generated_at, recorded_at
FROM review_results
WHERE result_id LIKE 's%' OR substr(result_id, 2)::int % 3 = 0
"""


@pytest.mark.parametrize(
    "reporting",
    [30, 600, 1_100],
    # X's copies: 23, 213 and 380; the side the gaps are read from: X's copies, the results
    # reporting gaps, X's copies again (too many of both).
    ids=["few copies", "many copies, few reporting", "many of both"],
)
async def test_the_opening_lists_what_every_copy_says(empty_database, reporting):
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn)
        await conn.execute(story(reporting, reporting + 40))
        await conn.execute(COPIES)
        await conn.execute("ANALYZE")
        opening = await conn.fetchrow(
            CONTEXT_OPENING, "projects:a", 20, "entity", "x", ["global"], 0, False
        )
        scopes = await conn.fetchval(EVERY_SCOPE, "entity", "x")
        gaps = await conn.fetchval(EVERY_GAP, "projects:a", "entity", "x")
        absent = await conn.fetchrow(
            CONTEXT_OPENING, "projects:a", 20, "entity", "nobody", ["global"], 0, False
        )
    finally:
        await conn.close()
    assert opening["in_scope"]
    assert list(opening["object_scopes"]) == scopes and len(scopes) == 20
    assert list(opening["history_gaps"]) == gaps and len(gaps) == (10 if reporting == 30 else 21)
    assert "elsewhere" not in gaps  # another scope's results are not this scope's history
    assert (list(absent["object_scopes"]), list(absent["history_gaps"])) == ([], [])


async def test_an_object_recorded_by_every_result_opens_without_reading_its_copies(
    empty_database,
):
    """2,000 copies of X in scope, 10 results reporting gaps: the opening reads X's first 101
    copies to know there are more than 100, then asks those 10 results, where reading every copy
    read 2,000 (and 2,000 results behind them)."""
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn)
        await conn.execute(story(10, 2_000))
        await conn.execute(COPIES.replace("OR substr(result_id, 2)::int % 3 = 0", "OR true"))
        await conn.execute("ANALYZE")
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        await conn.execute(
            f"PREPARE opening (text, int, text, text, text[], int, boolean) AS {CONTEXT_OPENING}"
        )
        plan = json.loads(
            await conn.fetchval(
                "EXPLAIN (ANALYZE, FORMAT JSON) "
                "EXECUTE opening ('projects:a', 20, 'entity', 'x', '{global}', 0, false)"
            )
        )
        opening = await conn.fetchrow(
            "EXECUTE opening ('projects:a', 20, 'entity', 'x', '{global}', 0, false)"
        )
        gaps = await conn.fetchval(EVERY_GAP, "projects:a", "entity", "x")
    finally:
        await conn.close()
    assert list(opening["history_gaps"]) == gaps and len(gaps) == 10
    assert rows_read(plan[0]["Plan"], "graph_objects") <= 150
