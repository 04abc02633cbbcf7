"""Least privilege in PostgreSQL: graph_service's role cannot write, not even on the primary it
reads the switches from; tree_service's role writes rows but cannot change the schema or the
migration ledger. (The rest of the suite runs both services as these roles, which shows the
grants are enough for everything they do.)"""

from __future__ import annotations

import asyncpg
import pytest

from devtools.pgcluster import roles

WRITES = [
    "INSERT INTO app_settings SELECT * FROM app_settings WHERE false",
    "UPDATE app_settings SET heartbeat_enabled = heartbeat_enabled WHERE false",
    "DELETE FROM bindings WHERE false",
    "UPDATE capabilities SET enabled = enabled WHERE false",
    "SELECT nextval('graph_revision_seq')",
]
SCHEMA_CHANGES = [
    "CREATE TABLE intruder (id int)",
    "ALTER TABLE trees ADD COLUMN intruder int",
    "DROP TABLE bindings",
    "CREATE INDEX intruder ON trees (id)",
    "TRUNCATE bindings",
    "CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS 'SELECT 1'",
]


@pytest.fixture
async def as_reader(cluster, tree_service):
    conn = await asyncpg.connect(roles.reader_dsn(cluster.primary_dsn))
    yield conn
    await conn.close()


@pytest.fixture
async def as_writer(cluster, tree_service):
    conn = await asyncpg.connect(roles.writer_dsn(cluster.primary_dsn))
    yield conn
    await conn.close()


@pytest.mark.parametrize("statement", WRITES + SCHEMA_CHANGES)
async def test_graph_services_role_cannot_write_on_the_primary(as_reader, statement):
    # Its sessions start read-only (or, for a sequence, the grant is checked first) ...
    with pytest.raises((asyncpg.ReadOnlySQLTransactionError, asyncpg.InsufficientPrivilegeError)):
        await as_reader.execute(statement)
    # ... and a read-write transaction it opens itself has no grant to write with.
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        async with as_reader.transaction(readonly=False):
            await as_reader.execute("SET TRANSACTION READ WRITE")
            await as_reader.execute(statement)


async def test_graph_services_role_reads(as_reader):
    assert await as_reader.fetchval("SELECT count(*) >= 0 FROM graph_objects") is True
    assert await as_reader.fetchval("SELECT count(*) >= 0 FROM bindings") is True


@pytest.mark.parametrize("statement", SCHEMA_CHANGES)
async def test_tree_services_role_cannot_change_the_schema(as_writer, statement):
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await as_writer.execute(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'x', 'x')",
        "DELETE FROM schema_migrations WHERE false",
        "UPDATE schema_migrations SET checksum = checksum WHERE false",
    ],
)
async def test_tree_services_role_cannot_touch_the_migration_ledger(as_writer, statement):
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await as_writer.execute(statement)


async def test_tree_services_role_writes_rows(as_writer):
    transaction = as_writer.transaction()
    await transaction.start()
    try:
        await as_writer.execute("UPDATE app_settings SET heartbeat_enabled = heartbeat_enabled")
        assert await as_writer.fetchval("SELECT nextval('graph_revision_seq')") > 0
    finally:
        await transaction.rollback()  # leave the shared database as it was


async def test_neither_service_role_is_privileged(as_writer):
    flags = await as_writer.fetch(
        "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles "
        "WHERE rolname = any($1::text[])",
        [roles.WRITER_ROLE, roles.READER_ROLE],
    )
    assert len(flags) == 2
    assert all(not any(tuple(row)[1:]) for row in flags), flags
