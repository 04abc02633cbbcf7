"""What the migration of existing leaf facts linked and what it left separate, and the shared
leaves stored now.

    python -m devtools.leaf_report [--dsn DSN]     (default: MIRRORTREE_TREE_DSN)

Migration 0030 keyed the leaf facts recorded before extractions were keyed: exact-key copies
in several scopes now share one leaf; the rest stay as they were, each with its reason. It
reads the primary (or any copy of the database) and writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping, Sequence

import asyncpg

REPORT = """
SELECT outcome, reason, copies, leaves, reported_at FROM leaf_migration_report
ORDER BY outcome, reason
"""

# Stored leaves and their uses by contract, as they are now (a leaf's first extraction is a
# use too).
NOW = """
SELECT l.contract_version, count(DISTINCT l.leaf_id) AS leaves,
       count(DISTINCT l.leaf_id) + count(u.leaf_id) AS uses,
       count(u.leaf_id) FILTER (WHERE u.linked) AS linked,
       (SELECT count(*) FROM (
            SELECT f.scope_key FROM leaves f WHERE f.contract_version = l.contract_version
            UNION
            SELECT g.scope_key FROM leaf_uses g JOIN leaves h ON h.leaf_id = g.leaf_id
            WHERE h.contract_version = l.contract_version) s) AS scopes
FROM leaves l LEFT JOIN leaf_uses u ON u.leaf_id = l.leaf_id
GROUP BY l.contract_version ORDER BY l.contract_version
"""


async def report(conn: asyncpg.Connection) -> str:
    """The report as text, one line per outcome and reason, then the leaves stored now."""
    lines = ["Leaf facts recorded before keyed extraction (migration 0030):"]
    rows = await conn.fetch(REPORT)
    if not rows:
        lines.append("  there were none")
    for row in rows:
        lines.append(
            f"  {row['outcome']:<8} {row['copies']:>8} copies {row['leaves']:>8} leaves  "
            f"{row['reason']}"
        )
    lines.append("Shared leaves now, by extraction contract:")
    now = await conn.fetch(NOW)
    if not now:
        lines.append("  none")
    for row in now:
        lines.append(
            f"  {row['contract_version']:<24} {row['leaves']:>8} leaves {row['uses']:>8} uses "
            f"({row['linked']} linked, not stored again) in {row['scopes']} scopes"
        )
    return "\n".join(lines)


async def _run(dsn: str) -> str:
    conn = await asyncpg.connect(dsn)
    try:
        return await report(conn)
    finally:
        await conn.close()


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.leaf_report", description=__doc__)
    parser.add_argument("--dsn", default=environ.get("MIRRORTREE_TREE_DSN", ""))
    args = parser.parse_args(argv)
    if not args.dsn:
        parser.error("--dsn (or MIRRORTREE_TREE_DSN) is required: the database to report on")
    print(asyncio.run(_run(args.dsn)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
