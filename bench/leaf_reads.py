"""The reads of shared leaves at scale: their plans (EXPLAIN) and latency next to a primary-key
read of the same table.

    python -m bench.leaf_reads [--leaves 300000] [--projects 50] [--runs 200]

Starts its own PostgreSQL, migrates it, writes `--leaves` synthetic leaves (spread over
`--projects` projects and four source versions per source, a third of them linked by a second
scope) straight into the tables, and measures each statement SearchLeaves, PlanExtraction and
a review's matching run, with the plan of its last run.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import asyncpg

from bench.measure import pct
from bench.services import free_port
from devtools import pgcluster
from graph_service.queries.leaves import (
    GLOBAL_LEAVES,
    LINKED_LEAVES,
    LINKED_LEAVES_ABOUT,
    PROJECT_LEAVES,
)
from tree_service.leaves import queries
from tree_service.migrate import migrate

FILL = """
INSERT INTO leaves (source_type, source_id, source_version, contract_version, analysis,
                    fragment, text, text_hash, source_project, scope_key, result_id,
                    object_id, recorded_at)
SELECT 'message', 'src-' || (i / 8), ((i / 2) % 4 + 1)::text, 'c1', 1,
       int8range((i % 2) * 100, (i % 2) * 100 + 80),
       'fact ' || i || ' about ' || md5(i::text), sha256(i::text::bytea),
       'p' || ((i / 8) % $2), 'projects:p' || ((i / 8) % $2), 'r' || (i / 200), 'l' || i,
       now()
FROM generate_series(1, $1) AS i
"""
USES = """
INSERT INTO leaf_uses (scope_key, object_id, result_id, leaf_id, linked, about)
SELECT 'global', 'g' || leaf_id, 'rg' || (leaf_id / 200), leaf_id, true,
       jsonb_build_array(jsonb_build_object('type', 'entity', 'id', 'e' || (leaf_id % 5000)))
FROM leaves WHERE leaf_id % 3 = 0
"""
# The linking results, so that Search's and GetContext's linked leaves find their times.
RESULTS = """
INSERT INTO review_results (result_id, scope_key, scope_projects, phase, review_generated_at,
                            recorded_at, graph_revision, request_hash, object_count)
SELECT result_id, 'global', '{}', 'daily', now(), now(), row_number() OVER (), '\\x00', 200
FROM (SELECT DISTINCT result_id FROM leaf_uses) r
"""
EXTRACTIONS = """
INSERT INTO leaf_extractions (source_type, source_id, source_version, contract_version,
                              analysis, covered, scope_key, result_id, recorded_at)
SELECT DISTINCT source_type, source_id, source_version, 'c1', 1, int8range(0, 180),
       'projects:p0', 'r', now()
FROM leaves
"""
PK = "SELECT leaf_id, text FROM leaves WHERE leaf_id = $1"


async def timed(conn: asyncpg.Connection, sql: str, args: list[object], runs: int) -> list[float]:
    statement = await conn.prepare(sql)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await statement.fetch(*args)
        times.append(time.perf_counter() - started)
    return times


async def plan(conn: asyncpg.Connection, sql: str, args: list[object]) -> list[str]:
    rows = await conn.fetch(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {sql}", *args)
    return [r[0] for r in rows]


async def main_async(leaves: int, projects: int, runs: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-bench-"))
    cfg = pgcluster.ClusterConfig(
        data_dir=data_dir, primary_port=free_port(), replica_port=free_port()
    )
    try:
        info = pgcluster.start(cfg)
        conn = await asyncpg.connect(info.primary_dsn)
        try:
            await migrate(conn)
            await conn.execute(FILL, leaves, projects)
            await conn.execute(USES)
            await conn.execute(RESULTS)
            await conn.execute(EXTRACTIONS)
            await conn.execute(
                "ANALYZE leaves; ANALYZE leaf_uses; ANALYZE leaf_extractions;"
                " ANALYZE review_results"
            )
            # As graph_service plans SearchLeaves (queries/leaves.py FORCE_CUSTOM_PLANS).
            await conn.execute("SET plan_cache_mode = force_custom_plan")
            sources = [("message", f"src-{i}", "2") for i in range(0, 800, 8)]
            cases: dict[str, tuple[str, list[object]]] = {
                "primary-key read (baseline)": (PK, [leaves // 2]),
                "SearchLeaves, project page": (
                    PROJECT_LEAVES,
                    ["projects:p7", None, None, None, 0, 11, ["p7"]],
                ),
                "SearchLeaves, project, common text": (
                    PROJECT_LEAVES,
                    ["projects:p7", "%about 1%", None, None, 0, 11, ["p7"]],
                ),
                "SearchLeaves, project, rare text": (
                    PROJECT_LEAVES,
                    ["projects:p7", "%fact 123456 %", None, None, 0, 11, ["p7"]],
                ),
                "SearchLeaves, project, one source": (
                    PROJECT_LEAVES,
                    ["projects:p7", None, "message", "src-7", 0, 11, ["p7"]],
                ),
                "SearchLeaves, Global page": (GLOBAL_LEAVES, ["global", None, None, None, 0, 11]),
                "SearchLeaves, Global, rare text": (
                    GLOBAL_LEAVES,
                    ["global", "%fact 123456 %", None, None, 0, 11],
                ),
                "Search's linked leaves, Global, common text": (
                    LINKED_LEAVES,
                    ["global", None, "%about 1%", None, None, "event_time", 11],
                ),
                "Search's linked leaves, Global, rare text": (
                    LINKED_LEAVES,
                    ["global", None, "%fact 123456 %", None, None, "event_time", 11],
                ),
                "Search's linked leaves, project (none linked)": (
                    LINKED_LEAVES,
                    ["projects:p7", ["p7"], "%about 1%", None, None, "event_time", 11],
                ),
                "GetContext's linked leaves about an entity": (
                    LINKED_LEAVES_ABOUT,
                    [
                        "global",
                        None,
                        '{"type": "entity", "id": "e42"}',
                        None,
                        None,
                        "event_time",
                        11,
                    ],
                ),
                "PlanExtraction, 100 source versions": (
                    queries.EXTRACTED_RANGES,
                    [*map(list, zip(*sources, strict=True)), "c1", [None] * len(sources)],
                ),
                "RecordReview matching, 100 leaves": (
                    queries.MATCHING_LEAVES,
                    [
                        "c1",
                        *map(list, zip(*sources, strict=True)),
                        [1] * len(sources),
                        [0] * len(sources),
                        [80] * len(sources),
                        [b"x"] * len(sources),
                    ],
                ),
            }
            results = {}
            plans = {}
            for name, (sql, args) in cases.items():
                results[name] = await timed(conn, sql, args, runs)
                plans[name] = await plan(conn, sql, args)
        finally:
            await conn.close()
    finally:
        pgcluster.stop(cfg)
        shutil.rmtree(data_dir, ignore_errors=True)
    base = pct(results["primary-key read (baseline)"], 0.99)
    print(f"{leaves:,} leaves in {projects} projects; {runs} runs each on the primary")
    print()
    print("| statement | p50 ms | p99 ms | p99 ÷ primary-key read |")
    print("| --- | ---: | ---: | ---: |")
    for name, times in results.items():
        p99 = pct(times, 0.99)
        print(f"| {name} | {pct(times, 0.5):.2f} | {p99:.2f} | {p99 / base:.1f} |")
    for name, lines in plans.items():
        print(f"\n{name}:")
        print("\n".join(f"    {line}" for line in lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leaves", type=int, default=300_000)
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main_async(args.leaves, args.projects, args.runs))


if __name__ == "__main__":
    main()
