"""Forward-only numbered SQL migrations, applied to the primary under an advisory lock.

Files are `migrations/NNNN_name.sql`, applied in order, each in its own transaction, and
recorded with a checksum. Two instances starting at once serialize on the advisory lock, and
the second finds nothing left to do. An applied file that was edited afterwards is an error:
history is never rewritten.

A line `-- after commit: <statement>` in a file names a statement that cannot run in its
transaction (VACUUM), run once the migration has committed: a migration that rewrites a table
leaves its visibility map empty, so index-only scans of it visit the heap for every entry
until it is vacuumed — and a rewrite counts as no change that would start autovacuum. (Should
the process stop between the two, the statement is not run again.)
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from importlib import resources

import asyncpg

log = logging.getLogger("tree_service.migrate")

# Arbitrary but fixed: the advisory lock key every Mirrortree instance uses for migrations.
MIGRATION_LOCK_KEY = 0x6D69_7272_6F72  # "mirror"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_AFTER_COMMIT = re.compile(r"^-- after commit: (.+)$", re.MULTILINE)


class MigrationError(Exception):
    """The database's migration history does not match the files shipped with this build."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()

    @property
    def after_commit(self) -> list[str]:
        """The statements to run once the migration has committed (module docstring)."""
        return _AFTER_COMMIT.findall(self.sql)


def shipped_migrations() -> list[Migration]:
    """The migration files packaged with tree_service, in version order."""
    found = []
    for entry in resources.files("tree_service").joinpath("migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"duplicate migration numbers in {versions}")
    return found


async def migrate(conn: asyncpg.Connection, *, up_to: int | None = None) -> list[int]:
    """Apply every pending migration (up to version `up_to`, when given); return the versions
    applied by this call."""
    if await conn.fetchval("SELECT pg_is_in_recovery()"):
        raise MigrationError("migrations run on the primary only; this server is a replica")
    applied_now: list[int] = []
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
    try:
        await conn.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text        NOT NULL,
                checksum   text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
            )
            """
        )
        rows = await conn.fetch("SELECT version, name, checksum FROM schema_migrations")
        done = {r["version"]: r for r in rows}
        shipped = shipped_migrations()
        unknown = sorted(set(done) - {m.version for m in shipped})
        if unknown:
            raise MigrationError(
                f"database has migrations {unknown} that this build does not know; "
                "run a newer tree_service"
            )
        for migration in shipped:
            if up_to is not None and migration.version > up_to:
                break
            row = done.get(migration.version)
            if row is not None:
                if row["checksum"] != migration.checksum:
                    raise MigrationError(
                        f"migration {migration.version:04d}_{migration.name} was edited after "
                        "it was applied; add a new migration instead"
                    )
                continue
            async with conn.transaction():
                await conn.execute(migration.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            for statement in migration.after_commit:
                await conn.execute(statement)
            log.info("applied migration", extra={"migration": migration.version})
            applied_now.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)
    return applied_now
