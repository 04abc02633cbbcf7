"""docs/schema.sql is the schema the migrations build: a migration that changes the schema
without `make schema` fails here."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from devtools import pgcluster, schema

MIGRATIONS = Path(__file__).resolve().parents[1] / "tree_service" / "migrations"


def _bindir_and_major() -> tuple[Path, int]:
    """The binaries' major version, or a skip when it is not the one docs/schema.sql records."""
    bindir = pgcluster.find_pg_bindir()
    major = pgcluster.server_major(bindir)
    recorded = schema.recorded_major(schema.SCHEMA_FILE.read_text(encoding="utf-8"))
    assert recorded is not None, "docs/schema.sql lacks its header line; run `make schema`"
    if major != recorded:
        pytest.skip(
            f"docs/schema.sql is made with PostgreSQL {recorded}, the embedded default; these "
            f"binaries are PostgreSQL {major} (MIRRORTREE_PG_BIN), which print it differently"
        )
    return bindir, major


async def test_docs_schema_sql_is_the_schema_after_every_migration(
    cluster: pgcluster.ClusterInfo,
) -> None:
    bindir, major = _bindir_and_major()

    built = await schema.schema_listing(cluster.primary_dsn, bindir, major)

    assert built == schema.SCHEMA_FILE.read_text(encoding="utf-8"), (
        "docs/schema.sql differs from the schema the migrations build: run `make schema`"
    )


def test_docs_schema_sql_lists_every_table_a_migration_creates() -> None:
    listed = schema.SCHEMA_FILE.read_text(encoding="utf-8")
    created = {
        name
        for path in MIGRATIONS.glob("*.sql")
        for name in re.findall(
            r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", path.read_text(encoding="utf-8"), re.I
        )
    }

    assert created
    for table in created:
        assert f"CREATE TABLE public.{table} (" in listed, table


def test_make_schema_check_fails_on_a_stale_file_and_rewrites_it(tmp_path: Path) -> None:
    _bindir_and_major()
    stale = tmp_path / "schema.sql"
    shutil.copy(schema.SCHEMA_FILE, stale)
    stale.write_text(stale.read_text(encoding="utf-8").replace("schema_migrations", "gone"))

    assert schema.main(["--check"], schema_file=stale) == 1
    assert schema.main([], schema_file=stale) == 0
    assert stale.read_text(encoding="utf-8") == schema.SCHEMA_FILE.read_text(encoding="utf-8")
