"""Migrations: numbered, applied once, safe when instances start together, primary only."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from tests.tree_service.racing import held
from tree_service.migrate import MIGRATION_LOCK_KEY, MigrationError, migrate, shipped_migrations

HOLD_MIGRATION_LOCK = "SELECT pg_advisory_xact_lock($1)"


def test_shipped_migrations_are_numbered_without_gaps():
    versions = [m.version for m in shipped_migrations()]
    assert versions == list(range(1, len(versions) + 1))


async def test_applying_twice_applies_each_migration_once(empty_database):
    conn = await asyncpg.connect(empty_database)
    try:
        first = await migrate(conn)
        second = await migrate(conn)
        applied = await conn.fetchval("SELECT count(*) FROM schema_migrations")
    finally:
        await conn.close()
    assert first == [m.version for m in shipped_migrations()]
    assert second == []
    assert applied == len(first)


async def test_two_instances_migrating_at_once_serialize_on_the_lock(empty_database):
    conns = [await asyncpg.connect(empty_database) for _ in range(2)]
    try:
        # Both instances wait for the migration lock before either applies anything.
        async with held(empty_database, HOLD_MIGRATION_LOCK, MIGRATION_LOCK_KEY) as gate:
            instances = [asyncio.ensure_future(migrate(c)) for c in conns]
            await gate.until_waiting(instances)
        results = await asyncio.gather(*instances)
    finally:
        for conn in conns:
            await conn.close()
    assert sorted(results, key=len) == [[], [m.version for m in shipped_migrations()]]


async def test_an_applied_migration_that_changed_is_refused(empty_database):
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn)
        await conn.execute("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1")
        with pytest.raises(MigrationError, match="edited after it was applied"):
            await migrate(conn)
    finally:
        await conn.close()


async def test_migrations_refuse_to_run_on_a_replica(cluster, tree_service):
    conn = await asyncpg.connect(cluster.replica_dsn)
    try:
        with pytest.raises(MigrationError, match="primary only"):
            await migrate(conn)
    finally:
        await conn.close()


async def test_existing_copies_and_results_are_backfilled(empty_database):
    """0006 keeps on each stored copy the sources it cites; copies recorded before it get them
    from their 'cites' links. 0008 counts each result's copies. 0016 lowers their text."""
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, up_to=5)  # the schema as an older build left it
        await conn.execute(
            """
            INSERT INTO review_results (result_id, scope_key, scope_projects, phase,
                review_generated_at, recorded_at, graph_revision, request_hash)
            VALUES ('r1', 'projects:p', '{p}', 'daily', now(), now(), 1, '\\x00');
            INSERT INTO graph_objects (result_id, object_type, object_id, type_rank, scope_key,
                title, review_generated_at, recorded_at)
            VALUES ('r1', 'event', 'e1', 2, 'projects:p', 'Cites TWO', now(), now()),
                   ('r1', 'event', 'e2', 2, 'projects:p', 'cites none', now(), now()),
                   ('r1', 'source_reference', 's1', 7, 'projects:p', 'a', now(), now()),
                   ('r1', 'source_reference', 's2', 7, 'projects:p', 'b', now(), now());
            INSERT INTO graph_links VALUES
                ('projects:p', 'r1', 'event', 'e1', 'cites', 'source_reference', 's2'),
                ('projects:p', 'r1', 'event', 'e1', 'cites', 'source_reference', 's1'),
                ('projects:p', 'r1', 'event', 'e2', 'involves', 'entity', 'x');
            INSERT INTO review_results (result_id, scope_key, scope_projects, phase,
                review_generated_at, recorded_at, graph_revision, request_hash)
            VALUES ('r2', 'projects:p', '{p}', 'daily', now(), now(), 2, '\\x00');
            """
        )
        await migrate(conn)
        cited = dict(await conn.fetch("SELECT object_id, cited_ids FROM graph_objects"))
        # 0008: each result's count of the copies it stored (a result may store none).
        counts = dict(await conn.fetch("SELECT result_id, object_count FROM review_results"))
        # 0016: the lowered text, and the table vacuumed once the rewrite committed.
        folded = dict(await conn.fetch("SELECT title, title_folded FROM graph_objects"))
        vacuumed = await conn.fetchval(
            "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1",
            "graph_objects",
        )
    finally:
        await conn.close()
    assert cited == {"e1": ["s1", "s2"], "e2": [], "s1": [], "s2": []}
    assert counts == {"r1": 4, "r2": 0}
    assert folded == {"Cites TWO": "cites two", "cites none": "cites none", "a": "a", "b": "b"}
    assert vacuumed
