"""A scope that outgrows the planner's statistics gets the graph tables analyzed
(tree_service.ingestion.statistics): by tree_service as deployed, serving as the writer role,
which may not ANALYZE the tables itself."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.reviews import review
from tree_service.ingestion import statistics
from tree_service.ingestion.statistics import GraphStatistics

pytestmark = pytest.mark.asyncio(loop_scope="session")

OBJECTS = statistics.MIN_OBJECTS + 200


async def estimated(db: asyncpg.Connection, scope_key: str) -> float:
    plan = json.loads(await db.fetchval(statistics.ESTIMATED_OBJECTS, scope_key))
    return float(plan[0]["Plan"]["Plan Rows"])


async def analyses(db: asyncpg.Connection) -> int:
    """Explicit ANALYZEs of graph_objects so far (autovacuum's are counted apart)."""
    return int(
        await db.fetchval(
            "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'graph_objects'"
        )
    )


async def record_many(tree_stub, project: str) -> None:
    events = [
        tree_pb2.EventInput(id=f"e{i}", kind=tree_pb2.DECISION, title=f"Decision {i}")
        for i in range(OBJECTS)
    ]
    await tree_stub.RecordReview(review(project, events=events))


async def wait_for_estimate(db: asyncpg.Connection, scope_key: str, at_least: float) -> float:
    for _ in range(300):
        rows = await estimated(db, scope_key)
        if rows >= at_least:
            return rows
        await asyncio.sleep(0.2)
    return rows


async def wait_for_analyses(db: asyncpg.Connection, more_than: int) -> int:
    """The ANALYZE count once it passes `more_than`, or after 15 s: a backend reports its
    counters when it goes idle, at most once a second and at the latest 10 s later."""
    for _ in range(75):
        count = await analyses(db)
        if count > more_than:
            return count
        await asyncio.sleep(0.2)
    return count


async def test_a_scope_that_outgrows_its_estimate_gets_analyzed(tree_service, tree_stub, db):
    project = unique("grown")
    scope_key = f"projects:{project}"
    before = await analyses(db)
    assert await estimated(db, scope_key) < OBJECTS / 10  # the planner has never seen it

    await record_many(tree_stub, project)

    rows = await wait_for_estimate(db, scope_key, OBJECTS / 2)
    assert rows >= OBJECTS / 2, f"the planner still estimates {rows:g} of {OBJECTS} objects"
    assert await wait_for_analyses(db, before) > before  # explicitly, not by autovacuum
    assert tree_service.stores.graph_statistics.analyzed >= 1


async def test_a_scope_the_statistics_know_is_not_analyzed_again(tree_service, tree_stub, db):
    project = unique("known")
    scope_key = f"projects:{project}"
    await record_many(tree_stub, project)
    await wait_for_estimate(db, scope_key, OBJECTS / 2)

    keeper = GraphStatistics(tree_service.stores.primary.pool, min_interval_s=0)
    keeper.recorded(scope_key)
    keeper.recorded(unique("projects:small"))  # below MIN_OBJECTS: never analyzed for
    await keeper.idle()
    assert keeper.analyzed == 0


async def test_the_writer_role_analyzes_only_through_the_lent_function(db):
    warnings: list[str] = []
    db.add_log_listener(lambda _conn, message: warnings.append(message.message))
    await db.execute("SET ROLE mirrortree_writer")
    try:
        before = await analyses(db)
        await db.execute("ANALYZE graph_objects")  # skipped with a warning: not the owner
        assert any("graph_objects" in w and "skipping" in w for w in warnings), warnings
        await db.execute(statistics.REFRESH)
    finally:
        await db.execute("RESET ROLE")
    assert await wait_for_analyses(db, before) > before
