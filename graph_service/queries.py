"""SQL of the graph service (read-only, on replicas), as named constants with $n parameters."""

import functools
import re
from collections.abc import Callable

from mirrortree import neighbourhoods

REPLICA_POSITION = """
SELECT pg_is_in_recovery() AS standby,
       (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
             ELSE pg_current_wal_lsn() END)::text AS lsn
"""

REPLAYED_AT_LEAST = """
SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
             ELSE pg_current_wal_lsn() END) >= $1::pg_lsn
"""

# Every read is one REPEATABLE READ READ ONLY transaction on a replica (graph_service.store.
# snapshot); context reads and searches also use each statement's generic plan, set in the
# same round trip (see graph_service.store.GraphStore).
BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
BEGIN_READ_WITH_GENERIC_PLANS = BEGIN_READ + "; SET LOCAL plan_cache_mode = force_generic_plan"
# Within such a transaction: plan the next statements with their values, or generically again.
PLAN_WITH_VALUES = "SET LOCAL plan_cache_mode = force_custom_plan"
PLAN_GENERICALLY = "SET LOCAL plan_cache_mode = force_generic_plan"

BINDING_BY_TOKEN_HASH = """
SELECT b.id::text AS binding_id, b.session_id::text AS session_id, b.runtime, t.project_id,
       b.allowed_scopes
FROM bindings b JOIN trees t ON t.id = b.session_id
WHERE b.token_hash = $1 AND b.revoked_at IS NULL
"""

SESSION_PROJECT = """
SELECT project_id FROM trees WHERE id = $1
"""


# What every read reports about its scope, in one statement at the start of its transaction:
# the read revision (the newest graph revision in the scope), how many results and object
# copies the scope holds, the newest results with their coverage ($2 at most), the gaps every
# result reports (newest first, "result: gap", GAPS_LISTED + 1 at most: one more says the list
# goes on) and the source types any of them excluded, and the time of the read. A read that
# needs more at its start adds columns to the one-row part (`extra`, uncorrelated subqueries:
# each runs once, whatever the number of coverage rows).
GAPS_LISTED = 50


def _scope_state(extra: str = "") -> str:
    """The scope's state in one row: its counts, gaps and excluded source types, `extra`
    columns, and the newest results ($2 at most) column by column (`covered_*`, NULL when
    there are none) — one row, so that what the opening reads with it (`extra`: arrays of
    records among them) is sent and decoded once, not once per result listed."""
    covered = ", ".join(
        f"array_agg(x.{name} ORDER BY x.review_generated_at DESC, x.result_id) AS covered_{name}"
        for name in ("result_id", "phase", "covered_from", "covered_to", "review_generated_at")
    )
    return (
        f"""
SELECT s.*, clock_timestamp() AS read_at, c.*
FROM (SELECT count(*) AS results, coalesce(max(graph_revision), 0) AS revision,
             coalesce(sum(object_count), 0)::bigint AS copies,
             -- Through the index of the results that report any (review_results_reporting_gaps).
             ARRAY(SELECT g.result_id || ': ' || gap
                   FROM review_results g, unnest(g.coverage_gaps) WITH ORDINALITY AS u (gap, i)
                   WHERE g.scope_key = $1 AND g.coverage_gaps <> '{{}}'
                   ORDER BY g.review_generated_at DESC, g.result_id, u.i
                   LIMIT {GAPS_LISTED + 1}) AS scope_gaps,
             ARRAY(SELECT DISTINCT t FROM review_results x, unnest(x.excluded_source_types) t
                   WHERE x.scope_key = $1 AND x.excluded_source_types <> '{{}}'
                   ORDER BY t) AS scope_excluded_source_types"""
        + extra
        + f"""
      FROM review_results WHERE scope_key = $1) s,
LATERAL (
    SELECT {covered}
    FROM (SELECT result_id, phase, covered_from, covered_to, review_generated_at
          FROM review_results
          WHERE scope_key = $1
          ORDER BY review_generated_at DESC, result_id
          LIMIT $2) x
) c
"""
    )


SCOPE_STATE = _scope_state()
# A search's opening: the scope's state, and its LIKE pattern ($3) lowered as ILIKE lowers
# it (lower(), the database's collation): the pattern the search statements take.
SEARCH_OPENING = _scope_state(",\n             lower($3::text) AS folded_pattern")


# Search ranks matches in three relevance tiers: the text is in both the title (title, entity
# label, summary title) and the body (3), in the title only or a summary's text only (2), in
# the body only (1). Within a tier the order is type rank, stable id, result id — exactly the
# order of the index graph_objects_scope_order. graph_service.search reads a tier in two ways
# (and a time range in more, below: RANGE_SCANS, RANGE_TEXT_SCANS, RANGE_DAY_TEXT_SCANS,
# SCOPE_TEXT_SCANS) and picks by what it sees, not by the planner's guess of how common a
# term is:
#
# - SEARCH_WALKS (SEARCH_WALKS_IN_TIME_RANGE) walks that index from the keyset for a bounded
#   number of copies and returns the tier's matches among them plus the last copy walked. A
#   common term fills a page within a few hundred copies, whatever the size of the graph.
# - SEARCH_SCANS finds the tier's matches through the trigram (and event-time) indexes and
#   sorts them; its ORDER BY is an expression, so the planner cannot fall back to walking the
#   ordered index through millions of copies for a term that turned out to be rare.
#
# Text is matched as ILIKE matches it — both sides lowered, then LIKE — but on the lowered
# copies of the title and body each copy stores (title_folded, body_folded: migration 0016),
# with the pattern lowered once (SEARCH_OPENING): lowering is most of a match's cost.
#
# Parameters: $1 scope key, $2 object types, $3 the lowered LIKE pattern, $4/$5 the time
# range on the chosen basis $6 ('event_time' | 'review_generated_at' | 'recorded_at'), $7..$9
# the keyset position inside the tier (type rank, object id, result id; NULL = from the
# start), $10 limit;
# walks only: $11 how many copies to walk, $12/$13 the lowest and highest type rank asked for
# (an index condition, so a walk for one type skips the others without reading them).
#
# An event's time is the closed interval from its start to the latest instant it may lie at
# (event_time_until: its end, or start, plus its precision's period — a day, a month); a range
# matches the events whose interval intersects it (graph_objects_event_time indexes that
# interval). An unknown event time matches no range. A result's time (review, recording)
# matches when it lies in the range; each copy carries its result's times.
def _result_time_in_range(table: str, basis: str) -> str:
    """The rule for a result's time on `basis`, on the alias `table` (a copy or a result)."""
    return f"""($4::timestamptz IS NULL OR {table}.{basis} >= $4)
              AND ($5::timestamptz IS NULL OR {table}.{basis} <= $5)"""


def _time_filter(event_time: str) -> str:
    return f"""
    (($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
     OR (CASE $6::text
          WHEN 'event_time' THEN{event_time}
          WHEN 'review_generated_at' THEN
              {_result_time_in_range("o", "review_generated_at")}
          ELSE
              {_result_time_in_range("o", "recorded_at")}
        END))
"""


_EVENT_TIME_UNTIL = "event_time_until(o.event_time_start, o.event_time_end, o.event_time_precision)"
# As ranges, so that the event-time index can serve the filter (scans, counts, range reads).
_EVENT_TIME_IN_RANGE = f"""o.event_time_start IS NOT NULL
      AND tstzrange(o.event_time_start, {_EVENT_TIME_UNTIL}, '[]')
          && tstzrange($4::timestamptz, $5::timestamptz, '[]')"""
TIME_FILTER = _time_filter("\n              " + _EVENT_TIME_IN_RANGE)
# The same rule on the values of one index entry, for walks: the widened end is computed only
# for an event that ends before the range by its instants alone (a month is a dozen
# timestamp operations, and a walk checks a thousand entries).
_WALK_TIME_RULE = _time_filter(
    f"""
              o.event_time_start IS NOT NULL
              AND ($5::timestamptz IS NULL OR o.event_time_start <= $5)
              AND ($4::timestamptz IS NULL
                   OR coalesce(o.event_time_end, o.event_time_start) >= $4
                   OR {_EVENT_TIME_UNTIL} >= $4)"""
)

# Every column of a stored object copy, as the readers map them (lookups.object_row).
_OBJECT_COLUMNS = """
o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title, o.body, o.kind,
o.object_revision, o.confirmation_state, o.event_time_start, o.event_time_end,
o.event_time_precision, o.event_time_basis, o.review_generated_at, o.recorded_at, o.details
"""
_KEYSET = """($7::smallint IS NULL
       OR (o.type_rank, o.object_id, o.result_id) > ($7::smallint, $8::text, $9::text))"""
# A summary's text weighs like a title: matched alone, it ranks in tier 2.
_TIER_MATCH = {
    3: "o.title_folded LIKE $3 AND o.body_folded LIKE $3",
    2: """(o.title_folded LIKE $3 AND o.body_folded NOT LIKE $3
           OR o.object_type = 'summary' AND o.body_folded LIKE $3
              AND o.title_folded NOT LIKE $3)""",
    1: "o.body_folded LIKE $3 AND o.title_folded NOT LIKE $3 AND o.object_type <> 'summary'",
}
# A match in any tier.
_MATCHES = "(o.title_folded LIKE $3 OR o.body_folded LIKE $3)"

# The same tiers, from whether the title (in_title) and the body (in_body) of a copy match
# (NULL: no match): where both fields are matched once per copy (walks within a time range,
# range reads).
_SCORE_OF_FLAGS = """CASE WHEN o.in_title AND o.in_body THEN 3
                WHEN o.in_title OR o.object_type = 'summary' AND o.in_body THEN 2
                WHEN o.in_body THEN 1 END"""

# A walk reads the ordered index of the asked types from the keyset and returns the tier's
# matches among the copies it met, every row carrying where the walk ended, how many entries
# it read and how many of them were in the time range — one row with no match when nothing
# matched, none when the tier is done. Two ways to walk, by whether a time range is given:
#
# - SEARCH_WALKS reads $11 entries and their copies, matching the text as it goes; only its
#   few matches are read again whole. A copy costs one heap visit (measured at 1M objects:
#   1,280 copies in 2.3 ms).
# - SEARCH_WALKS_IN_TIME_RANGE reads entries until $11 of them were in the range or it has
#   read $14, whichever comes first. It applies the time rule to the index entries alone
#   (index-only: graph_objects_scope_order includes the time columns) and visits the heap,
#   by primary key, only for the entries in range: within one month, a walk reads that
#   month's copies, not all. The second bound keeps a narrow range from costing a walk the
#   index: before it, a walk that had to meet 256 copies in one day of event time read
#   180,000 entries (70 ms at 1M objects), and in a range of recording times that holds
#   nothing, the whole index (220-340 ms). An entry costs about 1 µs, a copy in range 12 µs
#   more.
#
# A walk's time rule is a column of the entries walked, never a condition of the index scan:
# given the event-time index, PostgreSQL plans a long walk within a time range as reading the
# whole range's copies and sorting them (measured at 1M objects, a walk of 1,280 within one
# month: 43-84 ms, against 17-27 ms along the ordered index).
_IN_RANGE = "coalesce(" + _WALK_TIME_RULE + ", false)"
_WALK_ORDER = "ORDER BY o.type_rank, o.object_id, o.result_id"
_WALK_FROM = (
    """
        FROM graph_objects o
        WHERE o.scope_key = $1 AND o.type_rank BETWEEN $12::smallint AND $13::smallint
          AND """
    + _KEYSET
    + """
          AND o.object_type = any($2::text[])
        """
    + _WALK_ORDER
)


# One primary-key probe per entry walked in range, or per match when the walk matched as it
# went (LIMIT keeps the planner from turning this into a hash join over every text match,
# which it prefers when it misjudges how many there are).
_PROBE = """
    JOIN LATERAL (
        SELECT * FROM graph_objects g
        WHERE g.result_id = w.result_id AND g.object_type = w.object_type
          AND g.object_id = w.object_id
        LIMIT 1
    ) o ON true"""
_WALK_ROWS = """
SELECT e.*, m.* FROM walk_end e LEFT JOIN matched m ON true
ORDER BY m.type_rank, m.object_id, m.result_id
"""

# Without a time range, $4..$6 are NULL and every entry is in range (the rule is there so
# that both kinds of walk take the same first parameters).
SEARCH_WALKS = {
    score: f"""
WITH walked AS MATERIALIZED (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               ({match}) AND {_IN_RANGE} AS matches{_WALK_FROM}
        LIMIT $11
), walk_end AS (
    SELECT w.type_rank AS end_rank, w.object_id AS end_id, w.result_id AS end_result,
           count(*) OVER () AS walked, count(*) OVER () AS in_range
    FROM walked w
    ORDER BY w.type_rank DESC, w.object_id DESC, w.result_id DESC
    LIMIT 1
), matched AS (
    SELECT {_OBJECT_COLUMNS}
    FROM walked w{_PROBE}
    WHERE w.matches
    ORDER BY o.type_rank, o.object_id, o.result_id
    LIMIT $10
)"""
    + _WALK_ROWS
    for score, match in _TIER_MATCH.items()
}
# `walked` keeps the entries in range and the last one read (n = $14), where a walk that met
# too few in range ends. Every copy in range is probed and both its fields matched
# (`probed`, keys and flags only; the page's matches are probed again whole), so that the
# walk also tells how many copies in range match in any tier (matches_in_range):
# graph_service.search weighs reading all of the range's matches (RANGE_TEXT_SCANS) by it.
SEARCH_WALKS_IN_TIME_RANGE = {
    score: f"""
WITH walked AS MATERIALIZED (
    SELECT e.* FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank, {_IN_RANGE} AS in_range,
               row_number() OVER ({_WALK_ORDER}) AS n{_WALK_FROM}
        LIMIT $14
    ) e
    WHERE e.in_range OR e.n = $14
    LIMIT $11
), probed AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
           o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body
    FROM walked w{_PROBE}
    WHERE w.in_range
), walk_end AS (
    SELECT w.type_rank AS end_rank, w.object_id AS end_id, w.result_id AS end_result,
           w.n AS walked, (SELECT count(*) FROM walked WHERE in_range) AS in_range,
           (SELECT count(*) FROM probed WHERE in_title OR in_body) AS matches_in_range
    FROM walked w
    ORDER BY w.n DESC
    LIMIT 1
), matched AS (
    SELECT {_OBJECT_COLUMNS}
    FROM (
        SELECT o.* FROM probed o
        WHERE {_SCORE_OF_FLAGS} = {score}
        ORDER BY o.type_rank, o.object_id, o.result_id
        LIMIT $10
    ) w{_PROBE}
    ORDER BY o.type_rank, o.object_id, o.result_id
)"""
    + _WALK_ROWS
    for score in _TIER_MATCH
}

_SEARCH_SCAN = (
    "SELECT "
    + _OBJECT_COLUMNS
    + """
FROM graph_objects o
WHERE o.scope_key = $1
  AND o.object_type = any($2::text[])
  AND {match}
  AND """
    + TIME_FILTER
    + """
  AND """
    + _KEYSET
    + """
ORDER BY o.type_rank + 0, o.object_id, o.result_id
LIMIT $10
"""
)
SEARCH_SCANS = {score: _SEARCH_SCAN.replace("{match}", m) for score, m in _TIER_MATCH.items()}
# Within a time range a scan is planned with its values (PLAN_WITH_VALUES before it,
# PLAN_GENERICALLY after): then PostgreSQL can AND the event-time index's bitmap with the
# trigram indexes' (at 1M objects, a medium term's tier within one week of event time: 19 ms;
# with the generic plan, which cannot use the range, 88 ms). Only the scan: planned with its
# values, the count of a rare term within a month ANDed in the month's 59,000 entries (10 ms,
# where the generic plan's trigram bitmaps alone take 4).

# A time range that holds few of the scope's copies is read through the time instead:
# RANGE_SCANS[basis] reads every copy in the range (of the asked types) once, matches the text
# on each, and returns the page from tier $11 (after the keyset in that tier) down, with the
# number of all matches in the range and of the copies in it (range_matches, range_copies, on
# every row; one row with only them when the page is empty). The trigram indexes cannot
# serve a common term there — PostgreSQL still ANDs their bitmap with the event-time index's
# when given both (at 1M objects, "status" within one day: 666,220 index entries, 91 ms, for
# 1,918 copies in range). graph_service.search picks this way from the share of the entries
# its walks found in range, never from the planner's guess. An event time is read through
# graph_objects_event_time; a result's times through the scope's results (each copy carries
# its result's times), then each result's copies by primary key. The text is matched in the
# materialized part's select list, where no index can be chosen for it.
# The scope's results whose time on a result basis ($6) is in the range, as `r`.
_RESULT_BASES = ("review_generated_at", "recorded_at")
_RESULTS_IN_RANGE = {
    basis: f"r.scope_key = $1 AND {_result_time_in_range('r', basis)}" for basis in _RESULT_BASES
}
_RANGE_SOURCES = {
    "event_time": f"""
    FROM graph_objects o
    WHERE $6::text = 'event_time'
      AND {_EVENT_TIME_IN_RANGE}
      AND o.scope_key = $1 AND o.object_type = any($2::text[])""",
    **{
        basis: f"""
    FROM review_results r
    -- Lateral and not flattened (OFFSET 0): each result's copies by primary key, whatever
    -- the planner guesses of how many results the range holds (a generic plan guesses a
    -- third, and joins a sequential scan of every copy).
    CROSS JOIN LATERAL (
        SELECT * FROM graph_objects g
        WHERE g.result_id = r.result_id AND g.object_type = any($2::text[])
        OFFSET 0
    ) o
    WHERE $6::text = '{basis}' AND {_RESULTS_IN_RANGE[basis]}"""
        for basis in _RESULT_BASES
    },
}
# The range's copies are held as keys and their tier (NULL: no match); only the page's rows
# are read whole. (OFFSET 0 keeps each field matched once: flattened, the tier's expression
# would match them again for each of its tests.)
_IN_RANGE_COPIES = (
    """
WITH in_range AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank, """
    + _SCORE_OF_FLAGS
    + """ AS score
    FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body{from_in_range}
        OFFSET 0
    ) o
)"""
)


def _page_from_tier(scored: str, admitted: str = "true") -> str:
    """The page of a set of keys with their tier (`scored`, those `admitted`): from tier $11
    (after the keyset in that tier) down, each row read whole — after the select list of a
    statement that gives its counts in `c`, on every row (one row with only them when the page
    is empty)."""
    return f"""
LEFT JOIN LATERAL (
    SELECT * FROM {scored} o
    WHERE {admitted} AND (o.score < $11::smallint OR o.score = $11::smallint AND {_KEYSET})
    ORDER BY o.score DESC, o.type_rank, o.object_id, o.result_id
    LIMIT $10
) p ON true
LEFT JOIN graph_objects o
    ON o.result_id = p.result_id AND o.object_type = p.object_type AND o.object_id = p.object_id
ORDER BY p.score DESC, p.type_rank, p.object_id, p.result_id
"""


_RANGE_SCAN = (
    _IN_RANGE_COPIES
    + f"""
SELECT c.range_matches, c.range_copies, p.score, {_OBJECT_COLUMNS}
FROM (SELECT count(score) AS range_matches, count(*) AS range_copies FROM in_range) c"""
    + _page_from_tier("in_range")
)
RANGE_SCANS = {
    basis: _RANGE_SCAN.replace("{from_in_range}", from_in_range)
    for basis, from_in_range in _RANGE_SOURCES.items()
}

# A time range that holds too many copies to read them all, in which the walks see the term
# rare, is read through its matches instead: RANGE_TEXT_SCANS[basis] is RANGE_SCANS with only
# the copies that match in some tier as "the range" (so range_copies = range_matches), found
# through the trigram indexes ANDed with the range's own index: the event-time index, or for
# a result's times the primary key's range of each result in range (whose ids an initial
# plan collects; review and recording times are in no index of the copies, and filtered on
# each match they would cost a heap visit per match in scope). Planned with its values
# (PLAN_WITH_VALUES), as SEARCH_SCANS within a range. Every tier at once: the trigram indexes
# cost the same whichever tier is asked (at 1M objects, a term in 1 of 20 copies: 7-8 ms per
# field), and one statement replaces a scan per tier and the count.
_RANGE_MATCH_SOURCES = {
    "event_time": _RANGE_SOURCES["event_time"] + "\n      AND " + _MATCHES,
    **{
        basis: f"""
    FROM graph_objects o
    WHERE $6::text = '{basis}' AND o.scope_key = $1 AND o.object_type = any($2::text[])
      AND o.result_id = any(ARRAY(
          SELECT r.result_id FROM review_results r WHERE {_RESULTS_IN_RANGE[basis]}))
      AND {_MATCHES}"""
        for basis in _RESULT_BASES
    },
}
RANGE_TEXT_SCANS = {
    basis: _RANGE_SCAN.replace("{from_in_range}", from_matches)
    for basis, from_matches in _RANGE_MATCH_SOURCES.items()
}

# Within a time range closed at both ends and spanning few days (graph_service.search picks
# it), RANGE_DAY_TEXT_SCANS[basis] finds the range's matches by the days of their time
# instead: the trigram indexes hold each copy's days — those its event time touches, the day
# of its result's review and of its recording (migration 0017) — as their first columns, so
# each yields only the term's entries filed under the range's days (range_days), and the
# exact range rule is checked on those alone. At 1M objects, a term in 1 of 20 copies within
# one week of event time: 2.9 ms, where the trigram bitmaps ANDed with the event-time index
# took 14 ms; within one week of review time, 3.7 ms where ANDed with the results' copies,
# 18. Each side of the OR names the days, as each must to be read through one index with
# both their columns. The exact rule stands outside the inner select (OFFSET 0): beside it,
# PostgreSQL takes the range and its days for independent conditions, guesses their
# intersection many times too small, and ANDs the event-time index with the days' entries
# alone, matching the text on every copy of the range.
_DAYS_OF = {"event_time": "event_days", "review_generated_at": "review_days",
            "recorded_at": "recorded_days"}  # fmt: skip
_IN_RANGE_ON = {
    "event_time": _EVENT_TIME_IN_RANGE,
    **{basis: _result_time_in_range("o", basis) for basis in _RESULT_BASES},
}


def _day_matches(basis: str) -> str:
    filed = f"o.{_DAYS_OF[basis]} && range_days($4, $5)"
    return f"""
    FROM (
        SELECT * FROM graph_objects o
        WHERE $6::text = '{basis}' AND o.scope_key = $1 AND o.object_type = any($2::text[])
          AND ({filed} AND o.title_folded LIKE $3 OR {filed} AND o.body_folded LIKE $3)
        OFFSET 0
    ) o
    WHERE {_IN_RANGE_ON[basis]}"""


RANGE_DAY_TEXT_SCANS = {
    basis: _RANGE_SCAN.replace("{from_in_range}", _day_matches(basis)) for basis in _DAYS_OF
}

# Within an event-time range, a term the walks see rare may be rare in the whole scope; then
# its matches in the scope cost less to read than the range's entries in the event-time index
# (at 1M objects, a term in 1 of 1,000 copies within one month: its 1,008 matches in 3.8 ms,
# where ANDing the trigram indexes with the month's 59,413 event-time entries took 9 ms). And
# the matches without an event time, which no range holds, must be counted in the scope
# anyway (UNKNOWN_TIME_MATCHES: another 3 ms). SCOPE_TEXT_SCANS[basis] (event time only) reads
# at most $12 of the scope's matches through the trigram indexes — a generic plan: the range
# plays no part in finding them — places each in the range or not and counts those of unknown
# time; when it found fewer than $12 it returns, as RANGE_TEXT_SCANS does, the page from tier
# $11 down with the range's matches (range_matches), and the scope's (scope_matches) and
# those of unknown time (unknown_time) on every row. At $12 it returns only the counts:
# graph_service.search reads the range's matches instead.
SCOPE_TEXT_SCANS = {
    "event_time": f"""
WITH matches AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank, {_SCORE_OF_FLAGS} AS score,
           o.in_range, o.unknown_time
    FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body,
               ({_EVENT_TIME_IN_RANGE}) AS in_range,
               o.event_time_start IS NULL AS unknown_time
        FROM graph_objects o
        WHERE $6::text = 'event_time' AND o.scope_key = $1 AND o.object_type = any($2::text[])
          AND {_MATCHES}
        LIMIT $12
    ) o
)
SELECT c.scope_matches, c.range_matches, c.unknown_time, p.score, {_OBJECT_COLUMNS}
FROM (SELECT count(*) AS scope_matches, count(*) FILTER (WHERE in_range) AS range_matches,
             count(*) FILTER (WHERE unknown_time) AS unknown_time
      FROM matches) c"""
    + _page_from_tier("matches", "o.in_range AND c.scope_matches < $12")
}

# A search's counts, each up to a cap ($7): its matches (SEARCH_TOTALS through the trigram
# indexes, RANGE_TOTALS[basis] through a small time range as RANGE_SCANS — when the page did
# not read the range already), and with an event-time range the matches it left out because
# their event time is unknown (UNKNOWN_TIME_MATCHES; $1..$3 and the cap as $4). Beyond the
# cap — or the time budget the caller sets — a count is reported unknown, not guessed.


def _capped_count(condition: str, cap: str) -> str:
    return f"""
SELECT count(*) FROM (
    SELECT 1 FROM graph_objects o
    WHERE o.scope_key = $1
      AND o.object_type = any($2::text[])
      AND {_MATCHES}
      AND {condition}
    LIMIT {cap}) capped
"""


SEARCH_TOTALS = _capped_count(TIME_FILTER, "$7")
# (The text is matched in the select list here too: as a condition, the trigram indexes would
# be ANDed with the range's.)
RANGE_TOTALS = {
    basis: _IN_RANGE_COPIES.replace("{from_in_range}", from_in_range)
    + "\nSELECT count(*) FROM (SELECT 1 FROM in_range WHERE score IS NOT NULL LIMIT $7) capped\n"
    for basis, from_in_range in _RANGE_SOURCES.items()
}
UNKNOWN_TIME_MATCHES = _capped_count("o.event_time_start IS NULL", "$4")


# ---- sources ------------------------------------------------------------------------------

# Every stored copy of a source reference, newest result first, with the scope it lives in.
SOURCE_REFERENCE = """
SELECT o.result_id, o.scope_key, o.body AS fragment, o.details, r.graph_revision
FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
WHERE o.object_type = 'source_reference' AND o.object_id = $1
ORDER BY r.graph_revision DESC
"""

# The message source behind a tree node: its lineage (source id), its newest revision, and
# where the conversation lives now.
CURRENT_MESSAGE_SOURCE = """
SELECT s.source_id, s.revision, s.text, s.role, s.ordinal, t.project_id, t.id::text AS tree_id,
       s.node_id::text AS node_id
FROM source_revisions s
JOIN trees t ON t.id = s.tree_id
WHERE s.source_id = (SELECT source_id FROM source_revisions WHERE node_id = $1 LIMIT 1)
ORDER BY s.revision DESC
LIMIT 1
"""

MESSAGE_SOURCE_REVISION = """
SELECT s.revision, s.text, t.project_id
FROM source_revisions s JOIN trees t ON t.id = s.tree_id
WHERE s.source_id = (SELECT source_id FROM source_revisions WHERE node_id = $1 LIMIT 1)
  AND s.revision = $2
"""

# ---- validity ------------------------------------------------------------------------------


# The evidenced relations (`replaces`, `contradicts`) that touch each of the objects ({types},
# {ids}) in scope {scope}: one row per relation copy and end that touches one, with the
# relation copy's own columns (its times narrow validity to an evidence range), the link
# ("replaces.to", ...) and the object it touches. Shaped like the other parts of OBJECT_COPIES
# and SOURCES_AND_TOUCHES, which return copies, cited sources and touches in one statement;
# graph_service.lookups.touches_by_ref reads them. A retracted relation counts for nothing:
# neither the copy recorded as retracted nor any copy of the same relation recorded before it
# (a later result may record the relation again).
def _validity_relations(scope: str, types: str, ids: str) -> str:
    return f"""
SELECT 'touch' AS part, {_OBJECT_COLUMNS}, o.cited_ids,
       l.link, l.to_type AS touched_type, l.to_id AS touched_id
FROM unnest({types}::text[], {ids}::text[]) AS x (t, id)
JOIN graph_links l ON l.scope_key = {scope} AND l.to_type = x.t AND l.to_id = x.id
JOIN graph_objects o
  ON o.result_id = l.result_id AND o.object_type = 'relation' AND o.object_id = l.from_id
WHERE l.from_type = 'relation'
  AND l.link IN ('replaces.from', 'replaces.to', 'contradicts.from', 'contradicts.to')
  AND o.confirmation_state IS DISTINCT FROM 'retracted'
  AND NOT EXISTS (
      SELECT 1
      FROM graph_objects later JOIN review_results lr ON lr.result_id = later.result_id
      WHERE later.object_type = 'relation' AND later.object_id = o.object_id
        AND later.scope_key = {scope} AND later.confirmation_state = 'retracted'
        AND lr.graph_revision > (SELECT graph_revision FROM review_results
                                 WHERE result_id = o.result_id))
"""


# The columns a part other than 'touch' leaves empty.
_NOT_A_TOUCH = "NULL AS link, NULL AS touched_type, NULL AS touched_id"

# What a 'cited' row carries of a source reference's copy (lookups.sources_by_key reads its
# ids and details), in the places of _OBJECT_COLUMNS and the cited ids: a page cites dozens of
# sources, and each column received is decoded.
_CITED_COLUMNS = """
o.result_id, o.object_type, o.object_id, NULL::smallint AS type_rank, NULL::text AS scope_key,
NULL::text AS title, NULL::text AS body, NULL::text AS kind, NULL::text AS object_revision,
NULL::text AS confirmation_state, NULL::timestamptz AS event_time_start,
NULL::timestamptz AS event_time_end, NULL::text AS event_time_precision,
NULL::text AS event_time_basis, NULL::timestamptz AS review_generated_at,
NULL::timestamptz AS recorded_at, o.details, NULL::text[] AS cited_ids"""

VALIDITY_RELATIONS = _validity_relations("$1", "$2", "$3")

# The source references ($1 result ids, $2 reference ids) that a page of search hits cites
# ('cited'), and the evidenced relations touching the hits ($3 scope, $4 types, $5 ids).
SOURCES_AND_TOUCHES = f"""
SELECT 'cited' AS part, {_CITED_COLUMNS}, {_NOT_A_TOUCH}
FROM graph_objects o
WHERE o.object_type = 'source_reference'
  AND (o.result_id, o.object_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
UNION ALL""" + _validity_relations("$3", "$4", "$5")

# ---- context -------------------------------------------------------------------------------

OBJECT_COPY = (
    """
SELECT """
    + _OBJECT_COLUMNS
    + """
FROM graph_objects o
WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3 AND o.result_id = $4
"""
)

# A preference's columns, in the order graph_service.context.preference_row reads them.
_PREFERENCE_COLUMNS = "id, scope_key, subject, text, about, confirmed_by, revision, updated_at"

PREFERENCE_BY_ID = "SELECT " + _PREFERENCE_COLUMNS + " FROM preferences WHERE id = $1"

# The results in scope that hold the object ($1 scope, $2 type, $3 id): result $4 first when
# it is one of them, then oldest first (the versions a caller can name), at most $5, each with
# how many there are in all.
OBJECT_RESULTS = """
SELECT o.result_id, count(*) OVER () AS held
FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
ORDER BY o.result_id = $4 DESC, r.graph_revision
LIMIT $5
"""

# X's neighbourhood, read whole (graph_service.context.Neighbourhood): what paging, filtering
# and ordering need of every stored copy in it (no text), each with its role — "self" (X's own
# copies, with the graph revision that recorded them) or "member" (a copy of an object related
# to X, mirrortree.neighbourhoods: stored for a hub, walked live otherwise) — and the source
# references it cites (graph_service.context derives the cited sources from them). Every
# collection of the read is paged from these rows; only the copies on a page are then read
# whole (OBJECT_COPIES). The live walk runs only when X is not a hub (a one-time filter: its
# subqueries are then never executed).
_MEMBERS = ", ".join(f"o.{name}" for name in neighbourhoods.MEMBER_COLUMNS[:-1])


# X's own copies ("self", with the graph revision that recorded each) and a hub's stored
# members ("member"): Member's columns, the cited ids last.
def _self_copies(last: str) -> str:
    return f"""
SELECT 'self'::text AS role, {_MEMBERS}, r.graph_revision, {last}
FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3"""


_SELF_COPIES = _self_copies("o.cited_ids")
_STORED_MEMBERS = f"""
SELECT 'member'::text AS role, {_MEMBERS}, 0::bigint AS graph_revision, o.cited_ids
FROM context_members o
WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3"""
_LIVE_MEMBER_COLUMNS = ", ".join(f"c.{name}" for name in neighbourhoods.MEMBER_COLUMNS[:-1])
CONTEXT_NEIGHBOURHOOD = (
    neighbourhoods.RELATED
    + _SELF_COPIES
    + "\nUNION ALL"
    + _STORED_MEMBERS
    + f"""
UNION ALL
SELECT 'member', {_LIVE_MEMBER_COLUMNS}, 0, c.cited_ids
FROM ({neighbourhoods.RELATED_COPIES}) c
WHERE NOT EXISTS (SELECT 1 FROM context_hubs
                  WHERE scope_key = $1 AND object_type = $2 AND object_id = $3)
"""
)

# ---- a hub's neighbourhood, paged in SQL (graph_service.context.StoredNeighbourhood) -------
# X = ($1 scope, $2 type, $3 id). Every statement answers exactly what the in-memory
# Neighbourhood answers for the same copies: Member's columns in its order, evidence order
# (event time, unknown last and all unknowns equal; type rank; stable id; result id) with text
# compared by code point (COLLATE "C", as Python compares str).
_HUB_COPIES = f"""
WITH copies AS NOT MATERIALIZED ({_STORED_MEMBERS}
    UNION ALL{_SELF_COPIES}
)"""
_UNKNOWN_TIME_STAND_IN = "'0001-01-02 00:00:00+00'::timestamptz"
_EVIDENCE_ORDER = (
    "o.event_time_start IS NULL, "
    f"coalesce(o.event_time_start, {_UNKNOWN_TIME_STAND_IN}), o.type_rank, "
    'o.object_id COLLATE "C", o.result_id COLLATE "C"'
)


# One page of a collection: the copies of roles $7 and types $8, dated / undated / either
# ($9), in the time filter ($4 from, $5 to, $6 basis), after the evidence order
# ($10..$14: graph_service.context.BEFORE_ALL from the first — a position, never NULL, so that
# the generic plan seeks to it in the index instead of filtering every entry before it), $15
# at most; each with how many there are in all when $16 (without a time filter: the members
# counted in context_counts and X's own copies; with one: those it admits, read one by one).
# HUB_TYPE_PAGE reads the members of one type ($8 holds one), as the current mode's evidence
# collections do: in context_members_evidence_order's order, so that the page is the first
# entries of the type's range after the position (an equality, not "any", keeps PostgreSQL
# reading the index in order). HUB_PAGE reads several types, with X's own copies when $7 asks
# for them (timeline), and orders them. `of_types` is the type condition on a table alias {o}.
def _stored_total(roles: str, of_types: str, of_dated: str) -> str:
    """How many of a hub's copies of `roles` a selection holds, without a time filter: its
    members counted in context_counts, and X's own copies. `of_types` and `of_dated` are the
    type and datedness conditions, on a table alias {o} and an undated flag {undated}."""
    return f"""(SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
                  WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
                    AND n.role = 'member' AND 'member' = any({roles})
                    AND {of_types.format(o="n")}
                    AND {of_dated.format(undated="n.undated")})
               + (SELECT count(*) FROM graph_objects o
                  WHERE 'self' = any({roles})
                    AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                    AND {of_types.format(o="o")}
                    AND {of_dated.format(undated="(o.event_time_start IS NULL)")})"""


def _hub_page(copies: str, of_types: str) -> str:
    of_dated = "($9::text = 'any' OR {undated} = ($9::text = 'undated'))"
    chosen = (
        f"""o.role = any($7::text[]) AND {of_types.format(o="o")}
  AND {of_dated.format(undated="(o.event_time_start IS NULL)")}
  AND """
        + TIME_FILTER
    )
    return f"""{copies}
SELECT o.role, {_MEMBERS}, o.graph_revision,
       CASE WHEN NOT $16::boolean THEN NULL
            WHEN $4::timestamptz IS NULL AND $5::timestamptz IS NULL
            THEN {_stored_total("$7::text[]", of_types, of_dated)}
            ELSE (SELECT count(*) FROM copies o WHERE {chosen})
       END AS total
FROM copies o
WHERE {chosen}
  AND ({_EVIDENCE_ORDER})
      > ($10::boolean, $11::timestamptz, $12::smallint, $13::text COLLATE "C",
         $14::text COLLATE "C")
ORDER BY {_EVIDENCE_ORDER}
LIMIT $15
"""


HUB_PAGE = _hub_page(_HUB_COPIES, "{o}.object_type = any($8::text[])")
HUB_TYPE_PAGE = _hub_page(
    f"""
WITH copies AS NOT MATERIALIZED ({_STORED_MEMBERS}
)""",
    "{o}.object_type = ($8::text[])[1]",
)

# One page of the sources X or a related copy cites (stored in order with the hub's members:
# context_citations), by reference id and result id, after ($4, $5) ('', '': from the first,
# as no id is empty), $6 at most, as Member rows ("cited"), each with how many there are in
# all when $7.
HUB_CITED_PAGE = """
SELECT 'cited'::text AS role, 'source_reference'::text AS object_type, c.source_id AS object_id,
       c.result_id, 0::smallint AS type_rank, NULL::text AS kind,
       NULL::timestamptz AS event_time_start, NULL::timestamptz AS event_time_end,
       NULL::text AS event_time_precision, c.review_generated_at, c.recorded_at,
       0::bigint AS graph_revision,
       CASE WHEN $7::boolean
            THEN (SELECT coalesce(sum(copies), 0)::bigint FROM context_counts
                  WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
                    AND role = 'cited') END AS total
FROM context_citations c
WHERE c.scope_key = $1 AND c.anchor_type = $2 AND c.anchor_id = $3
  AND (c.source_id COLLATE "C", c.result_id COLLATE "C")
      > ($4::text COLLATE "C", $5::text COLLATE "C")
ORDER BY c.source_id COLLATE "C", c.result_id COLLATE "C"
LIMIT $6
"""

# X's own copies, with the graph revision that recorded each.
HUB_SELF = _self_copies("NULL::bigint AS total")

# The related decision events, the newest copy of each (of the latest review, then the latest
# recorded), by stable id, $4 at most.
HUB_DECISIONS = f"""
SELECT DISTINCT ON (o.object_id COLLATE "C") 'member'::text AS role, {_MEMBERS},
       0::bigint AS graph_revision, NULL::bigint AS total
FROM context_members o
WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
  AND o.object_type = 'event' AND o.kind = 'decision'
ORDER BY o.object_id COLLATE "C", o.review_generated_at DESC, o.recorded_at DESC
LIMIT $4
"""


def _shifted(shift: int) -> Callable[[re.Match[str]], str]:
    """Renumbers a hub statement's own parameters ($4 on; $1-$3 are X) by `shift`."""

    def renumbered(match: re.Match[str]) -> str:
        number = int(match[1])
        return f"${number + shift if number > 3 else number}"

    return renumbered


@functools.cache  # a handful of combinations (per mode and cursor), each 0.3 ms to build
def hub_read(parts: tuple[str, ...]) -> str:
    """One statement answering several of the hub statements above (each: X as $1-$3, its own
    parameters after, Member's columns but the cited ids, then `total`): one round trip for
    everything a read asks of a hub. Each row carries its part's position and its own within
    the part (`part`, `n`), and the rows come in that order; each part's own parameters are
    numbered after those of the parts before it."""
    selects, shift = [], 0
    for position, part in enumerate(parts):
        numbers = [int(n) for n in re.findall(r"\$(\d+)", part)]
        numbered = re.sub(r"\$(\d+)", _shifted(shift), part)
        selects.append(
            f"SELECT {position} AS part, row_number() OVER () AS n, s.*\nFROM ({numbered}) s"
        )
        shift += max([3, *numbers]) - 3
    return "\nUNION ALL\n".join(selects) + "\nORDER BY part, n"


# How many copies of roles $4 among the evidence have no event time.
HUB_UNDATED = "SELECT " + _stored_total(
    "$4::text[]",
    "{o}.object_type IN ('event', 'entity_change', 'relation', 'leaf_fact')",
    "{undated}",
)

# Whole stored copies by key ($1 result ids, $2 types, $3 ids) ('copy'), the source
# references cited by those whose sources are shown ($7, by key), in their own result ('cited'),
# and the evidenced relations touching the objects ($4 scope, $5 types, $6 ids) ('touch'): what
# a context read shows of its pages. (A copy's cited_ids are the sources read with it.)
OBJECT_COPIES = f"""
WITH page AS (
    SELECT {_OBJECT_COLUMNS},
           CASE WHEN k.sources_shown THEN o.cited_ids ELSE '{{}}' END AS cited_ids
    FROM unnest($1::text[], $2::text[], $3::text[], $7::boolean[])
         AS k (result_id, object_type, object_id, sources_shown)
    JOIN graph_objects o
      ON o.result_id = k.result_id AND o.object_type = k.object_type
     AND o.object_id = k.object_id
), cited AS (
    SELECT DISTINCT p.result_id, c.id FROM page p, unnest(p.cited_ids) AS c (id)
)
SELECT 'copy' AS part, p.*, {_NOT_A_TOUCH} FROM page p
UNION ALL
SELECT 'cited', {_CITED_COLUMNS}, {_NOT_A_TOUCH}
FROM cited c
JOIN graph_objects o
  ON o.result_id = c.result_id AND o.object_type = 'source_reference' AND o.object_id = c.id
UNION ALL""" + _validity_relations("$4", "$5", "$6")

# Preferences that apply to a scope ($1 scope keys), after id $2, limit $3.
PREFERENCES = (
    "SELECT "
    + _PREFERENCE_COLUMNS
    + """
FROM preferences
WHERE scope_key = any($1::text[]) AND ($2::text IS NULL OR id > $2)
ORDER BY id
LIMIT $3
"""
)

# What a context read needs before its neighbourhood, in the statement that reads the scope's
# state (one round trip instead of six): $3 object type, $4 object id, $5 the preference scopes
# that apply, $6 how many preferences to read from the first (0: none), $7 whether to read
# completion evidence.
#   preference_fingerprint  (count, digest of every id and revision) of the applicable
#                           preferences: any create, update, or a preference leaving the scope
#                           while another arrives changes it
#   in_scope                whether X exists in the scope read
#   is_hub                  whether X's neighbourhood is stored (StoredNeighbourhood reads it)
#   object_scopes           where X exists at all, SCOPES_LISTED at most (not_found vs
#                           scope_mismatch)
#   history_gaps            the gaps the results holding X report (HISTORY_GAPS_LISTED + 1 at
#                           most: one more than are listed says the list goes on)
#   completion              (entity change id, result id) of the changes that record X being
#                           carried out ("completed"): the only evidence a decision was executed
#                           (their links are graph_links_changes, read index-only: the join
#                           names the change's type as a constant, not as the link's column)
#   first_preferences       the first preferences that apply, by id (preference_row's columns)
SCOPES_LISTED = 20
HISTORY_GAPS_LISTED = 20
CONTEXT_OPENING = _scope_state(
    f""",
    (SELECT ROW(count(*), md5(coalesce(string_agg(id || ':' || revision, ',' ORDER BY id), '')))
     FROM preferences WHERE scope_key = any($5::text[])) AS preference_fingerprint,
    EXISTS(SELECT 1 FROM graph_objects
           WHERE scope_key = $1 AND object_type = $3 AND object_id = $4) AS in_scope,
    EXISTS(SELECT 1 FROM context_hubs
           WHERE scope_key = $1 AND object_type = $3 AND object_id = $4) AS is_hub,
    ARRAY(SELECT DISTINCT scope_key FROM graph_objects
          WHERE object_type = $3 AND object_id = $4 LIMIT {SCOPES_LISTED}) AS object_scopes,
    ARRAY(SELECT DISTINCT unnest(r.coverage_gaps) AS gap
          FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
          WHERE o.scope_key = $1 AND o.object_type = $3 AND o.object_id = $4
          ORDER BY gap LIMIT {HISTORY_GAPS_LISTED + 1}) AS history_gaps,
    ARRAY(SELECT ROW(o.object_id, o.result_id)
          FROM graph_links l
          JOIN graph_objects o
            ON o.result_id = l.result_id AND o.object_type = 'entity_change'
           AND o.object_id = l.from_id
          WHERE $7 AND l.scope_key = $1 AND l.to_type = $3 AND l.to_id = $4
            AND l.from_type = 'entity_change' AND l.link IN ('during', 'changes')
            AND o.kind = 'completed'
          ORDER BY o.object_id, o.result_id
          LIMIT 20) AS completion,
    ARRAY(SELECT ROW("""
    + _PREFERENCE_COLUMNS
    + """) FROM preferences WHERE scope_key = any($5::text[])
          ORDER BY id LIMIT $6) AS first_preferences"""
)

# A recorded (non-message) source as it is now; only its current revision is kept.
CURRENT_RECORDED_SOURCE = """
SELECT text, revision, project_id, deleted FROM sources WHERE source_id = $1 AND source_type = $2
"""

# The switches gating the tools for one session ($1, NULL for none); see graph_service.gate.
GATE_SWITCHES = """
SELECT a.heartbeat_enabled, c.enabled, c.assignments,
       (SELECT t.context_state -> 'story_graph_enabled' FROM trees t WHERE t.id = $1)
           AS session_switch
FROM app_settings a CROSS JOIN capabilities c
WHERE c.id = 'story-graph'
"""
