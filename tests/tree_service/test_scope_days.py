"""A scope's copies per day of each time basis (scope_days, migration 0037), by which a search
opening counts a closed range: kept by the database as copies are inserted, by one statement or
a COPY, whoever inserts them, and counted once for the copies stored before.
(tests/graph_service/test_search_paths.py checks them against a graph recorded through the
service, and the opening's count against the copies each range holds.)"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from tree_service.migrate import migrate

KEPT = "SELECT scope_key, basis, day, copies FROM scope_days ORDER BY 1, 2, 3"
# The same, counted from every copy stored (the days each is filed under: migration 0017).
COUNTED = """
SELECT d.scope_key, d.basis, d.day, count(*) AS copies
FROM (SELECT scope_key, 'event_time' AS basis, unnest(event_days) AS day FROM graph_objects
      UNION ALL
      SELECT scope_key, 'review_generated_at', unnest(review_days) FROM graph_objects
      UNION ALL
      SELECT scope_key, 'recorded_at', unnest(recorded_days) FROM graph_objects) d
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""
RESULT = """
INSERT INTO review_results (result_id, scope_key, scope_projects, phase, review_generated_at,
                            recorded_at, graph_revision, request_hash, object_count)
VALUES ($1, $2, '{a}', 'daily', $3, $3, $4, '\\x00', 3)
"""
COPY_COLUMNS = (
    "result_id", "object_type", "object_id", "type_rank", "scope_key", "event_time_start",
    "event_time_end", "event_time_precision", "review_generated_at", "recorded_at",
)  # fmt: skip
MARCH = datetime(2026, 3, 10, 12, tzinfo=UTC)
APRIL = datetime(2026, 4, 2, 12, tzinfo=UTC)


def copies(result_id: str, scope_key: str, at: datetime) -> list[tuple[object, ...]]:
    """Events of one day, of three days (an end), of a month (its precision), of a year (filed
    under the long events' number) and of unknown time."""
    times = [
        (MARCH, None, None),
        (MARCH, datetime(2026, 3, 12, tzinfo=UTC), None),
        (MARCH, None, "month"),
        (MARCH, None, "year"),
        (None, None, None),
    ]
    return [
        (result_id, "event", f"e{i}", 2, scope_key, start, end, precision, at, at)
        for i, (start, end, precision) in enumerate(times)
    ]


async def kept_and_counted(
    conn: asyncpg.Connection,
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    return (
        [tuple(r) for r in await conn.fetch(KEPT)],
        [tuple(r) for r in await conn.fetch(COUNTED)],
    )


async def test_the_days_of_copies_stored_before_and_after_are_counted(empty_database):
    conn = await asyncpg.connect(empty_database)
    try:
        await migrate(conn, up_to=36)
        for n, (scope_key, at) in enumerate([("projects:a", MARCH), ("projects:b", APRIL)]):
            await conn.execute(RESULT, f"r{n}", scope_key, at, n + 1)
            await conn.copy_records_to_table(
                "graph_objects", records=copies(f"r{n}", scope_key, at), columns=COPY_COLUMNS
            )
        await migrate(conn)
        kept, counted = await kept_and_counted(conn)
        assert kept == counted
        # One-day and three-day events, the month's days (from March 10 to April 10), the
        # year under the long events' number; the unknown time under no day; one review day
        # and one recording day each.
        march = (MARCH - datetime(1970, 1, 1, tzinfo=UTC)).days
        event_days = {
            day: n for s, basis, day, n in kept if s == "projects:a" and basis == "event_time"
        }
        assert event_days[march] == 3 and event_days[march + 2] == 2
        assert event_days[-2147483648] == 1 and len(event_days) == 32 + 1
        assert ("projects:a", "review_generated_at", march, 5) in kept
        # Afterwards, by a COPY (as tree_service stores a result) or an INSERT of several rows,
        # each counted as it is inserted.
        await conn.execute(RESULT, "r2", "projects:a", APRIL, 3)
        await conn.copy_records_to_table(
            "graph_objects", records=copies("r2", "projects:a", APRIL), columns=COPY_COLUMNS
        )
        await conn.execute(RESULT, "r3", "projects:c", APRIL, 4)
        await conn.executemany(
            f"INSERT INTO graph_objects ({', '.join(COPY_COLUMNS)}) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            copies("r3", "projects:c", APRIL),
        )
        kept, counted = await kept_and_counted(conn)
        assert kept == counted
        assert ("projects:a", "review_generated_at", march + 23, 5) in kept
        assert {s for s, *_ in kept} == {"projects:a", "projects:b", "projects:c"}
    finally:
        await conn.close()
