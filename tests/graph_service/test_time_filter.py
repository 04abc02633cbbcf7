"""One time-filter rule, two implementations: Search applies it in SQL (TIME_RULE below, as
every statement of a search or a hub read that filters by time states it, where an index can
serve it; WALK_TIME_RULE, as the walks state it on one index entry), GetContext applies it in
Python to the neighbourhood it has already read (TimeFilter.admits). They must agree on every
object, including unknown times, intervals, precisions that widen a time (a month's last day
included), open-ended ranges and bounds that touch exactly."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import asyncpg

from graph_service.queries import hubs
from graph_service.queries import search as queries
from graph_service.views import TimeFilter

BASES = ("event_time", "review_generated_at", "recorded_at")
DAY0 = datetime(2026, 1, 1, tzinfo=UTC)


# The filter with its own three parameters first, then one row per object to judge.
def judge(rule: str) -> str:
    return (
        "SELECT o.i FROM unnest($4::int[], $5::timestamptz[], $6::timestamptz[], "
        "$7::timestamptz[], $8::timestamptz[], $9::text[]) "
        "AS o (i, event_time_start, event_time_end, review_generated_at, recorded_at, "
        "event_time_precision) WHERE "
        + rule.replace("$4", "$1").replace("$5", "$2").replace("$6", "$3")
    )


# The filter as scans and counts apply it (ranges an index can serve), and as walks apply it
# to one index entry at a time: the statements state exactly these (test below).
TIME_RULE = """
    (($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
     OR (CASE $6::text
          WHEN 'event_time' THEN
              o.event_time_start IS NOT NULL
              AND tstzrange(o.event_time_start,
                            event_time_until(o.event_time_start, o.event_time_end,
                                             o.event_time_precision), '[]')
                  && tstzrange($4::timestamptz, $5::timestamptz, '[]')
          WHEN 'review_generated_at' THEN
              ($4::timestamptz IS NULL OR o.review_generated_at >= $4)
              AND ($5::timestamptz IS NULL OR o.review_generated_at <= $5)
          ELSE
              ($4::timestamptz IS NULL OR o.recorded_at >= $4)
              AND ($5::timestamptz IS NULL OR o.recorded_at <= $5)
        END))
"""
WALK_TIME_RULE = """
    (($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
     OR (CASE $6::text
          WHEN 'event_time' THEN
              o.event_time_start IS NOT NULL
              AND ($5::timestamptz IS NULL OR o.event_time_start <= $5)
              AND ($4::timestamptz IS NULL
                   OR coalesce(o.event_time_end, o.event_time_start) >= $4
                   OR event_time_until(o.event_time_start, o.event_time_end,
                                       o.event_time_precision) >= $4)
          WHEN 'review_generated_at' THEN
              ($4::timestamptz IS NULL OR o.review_generated_at >= $4)
              AND ($5::timestamptz IS NULL OR o.review_generated_at <= $5)
          ELSE
              ($4::timestamptz IS NULL OR o.recorded_at >= $4)
              AND ($5::timestamptz IS NULL OR o.recorded_at <= $5)
        END))
"""
JUDGES = (judge(TIME_RULE), judge(WALK_TIME_RULE))


def flat(sql: str) -> str:
    return " ".join(sql.replace("(", " ( ").replace(")", " ) ").split())


def test_every_statement_that_filters_by_time_states_the_rule_judged_here():
    by_rule = {
        TIME_RULE: [
            *queries.SEARCH_SCANS.values(),
            queries.SEARCH_TOTALS,
            *(read for parts, read in hubs.HUB_READS.items() if {"page", "type_page"} & {*parts}),
        ],
        WALK_TIME_RULE: [
            *queries.SEARCH_WALKS.values(),
            *queries.SEARCH_WALKS_IN_TIME_RANGE.values(),
        ],
    }
    for rule, statements in by_rule.items():
        for statement in statements:
            assert flat(rule) in flat(statement), statement


PRECISIONS = (None, "instant", "minute", "hour", "day", "month", "year")
# Starts where a month or a year ends on a shorter next one.
EDGES = (
    datetime(2026, 1, 31, 12, tzinfo=UTC),
    datetime(2024, 2, 29, tzinfo=UTC),
    datetime(2025, 12, 31, 23, 59, tzinfo=UTC),
)


def moment(rng: random.Random) -> datetime:
    # A few days in whole hours, so that bounds often coincide exactly.
    return DAY0 + timedelta(hours=rng.randrange(0, 96))


def an_object(
    rng: random.Random,
) -> tuple[datetime | None, datetime | None, datetime, datetime, str | None]:
    start = moment(rng) if rng.random() < 0.8 else None
    if start is not None and rng.random() < 0.1:
        start = rng.choice(EDGES)
    end = None
    if start is not None and rng.random() < 0.5:
        end = start + timedelta(hours=rng.randrange(0, 30))
    return start, end, moment(rng), moment(rng), rng.choice(PRECISIONS)


def a_filter(rng: random.Random) -> TimeFilter:
    def bound() -> datetime:
        # Near an edge, often just past where a precision's period would end.
        if rng.random() < 0.2:
            return rng.choice(EDGES) + timedelta(days=rng.choice((1, 28, 29, 30, 365, 366)))
        return moment(rng)

    start = bound() if rng.random() < 0.7 else None
    end = bound() if rng.random() < 0.7 else None
    if start and end and end < start:
        start, end = end, start
    return TimeFilter(start, end, rng.choice(BASES))


async def test_sql_and_python_time_filters_agree(cluster, tree_service):
    """(tree_service: its start migrates the database, which defines event_time_until.)"""
    rng = random.Random(20261203)
    objects = [an_object(rng) for _ in range(400)]
    columns = [list(c) for c in zip(*objects, strict=True)]
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        for _ in range(120):
            time_filter = a_filter(rng)
            in_python = {i for i, o in enumerate(objects) if time_filter.admits(*o)}
            for sql in JUDGES:
                in_sql = {
                    r["i"]
                    for r in await conn.fetch(
                        sql,
                        time_filter.start,
                        time_filter.end,
                        time_filter.basis,
                        list(range(len(objects))),
                        *columns,
                    )
                }
                assert in_sql == in_python, (time_filter, sql)
    finally:
        await conn.close()
