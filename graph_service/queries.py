"""SQL of the graph service (read-only, on replicas), as named constants with $n parameters."""

REPLICA_POSITION = """
SELECT pg_is_in_recovery() AS standby,
       (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
             ELSE pg_current_wal_lsn() END)::text AS lsn
"""

REPLAYED_AT_LEAST = """
SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
             ELSE pg_current_wal_lsn() END) >= $1::pg_lsn
"""

BINDING_BY_TOKEN_HASH = """
SELECT b.id::text AS binding_id, b.session_id::text AS session_id, b.runtime, t.project_id
FROM bindings b JOIN trees t ON t.id = b.session_id
WHERE b.token_hash = $1 AND b.revoked_at IS NULL
"""

SESSION_PROJECT = """
SELECT project_id FROM trees WHERE id = $1
"""

READ_REVISION = """
SELECT coalesce(max(graph_revision), 0) FROM review_results WHERE scope_key = $1
"""

COVERAGE = """
SELECT result_id, phase, covered_from, covered_to, review_generated_at, excluded_source_types
FROM review_results
WHERE scope_key = $1
ORDER BY review_generated_at DESC, result_id
LIMIT $2
"""

RESULT_COUNT = "SELECT count(*) FROM review_results WHERE scope_key = $1"

# Search: filters first, then relevance (title/label/summary title 2, body 1), then type rank,
# stable id and result id. $1 scope key, $2 types, $3 ILIKE pattern, $4/$5 time range on the
# chosen basis ($6: 'event_time' | 'review_generated_at' | 'recorded_at'), then the keyset
# position $7..$10 (score, rank, id, result id; NULL score = first page) and $11 the limit.
_SEARCH_MATCHED = """
WITH matched AS (
    SELECT o.*,
           (CASE WHEN o.title ILIKE $3 THEN 2 ELSE 0 END
            + CASE WHEN o.body ILIKE $3 THEN 1 ELSE 0 END) AS score
    FROM graph_objects o
    WHERE o.scope_key = $1
      AND o.object_type = any($2::text[])
      AND (o.title ILIKE $3 OR o.body ILIKE $3)
)
"""

_TIME_FILTER = """
    ($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
    OR (CASE $6
          WHEN 'event_time' THEN
              event_time_start IS NOT NULL
              AND ($5::timestamptz IS NULL OR event_time_start <= $5)
              AND ($4::timestamptz IS NULL OR coalesce(event_time_end, event_time_start) >= $4)
          WHEN 'review_generated_at' THEN
              ($4::timestamptz IS NULL OR review_generated_at >= $4)
              AND ($5::timestamptz IS NULL OR review_generated_at <= $5)
          ELSE
              ($4::timestamptz IS NULL OR recorded_at >= $4)
              AND ($5::timestamptz IS NULL OR recorded_at <= $5)
        END)
"""

SEARCH_PAGE = (
    _SEARCH_MATCHED
    + """
SELECT result_id, object_type, object_id, type_rank, scope_key, title, body, kind,
       object_revision, confirmation_state, event_time_start, event_time_end,
       event_time_precision, event_time_basis, review_generated_at, recorded_at, details, score
FROM matched
WHERE ("""
    + _TIME_FILTER
    + """)
  AND ($7::int IS NULL
       OR score < $7
       OR (score = $7 AND (type_rank, object_id, result_id) > ($8::smallint, $9::text, $10::text)))
ORDER BY score DESC, type_rank, object_id, result_id
LIMIT $11
"""
)

# Totals are counted up to a cap; beyond it the total is reported as unknown, not guessed.
SEARCH_COUNTS = (
    _SEARCH_MATCHED
    + """
SELECT
    (SELECT count(*) FROM (SELECT 1 FROM matched WHERE ("""
    + _TIME_FILTER
    + """) LIMIT $7) capped) AS total,
    (SELECT count(*) FROM (SELECT 1 FROM matched
        WHERE $6 = 'event_time' AND ($4::timestamptz IS NOT NULL OR $5::timestamptz IS NOT NULL)
          AND event_time_start IS NULL LIMIT $7) capped) AS unknown_time
"""
)

SOURCES_OF = """
SELECT result_id, object_id, details
FROM graph_objects
WHERE object_type = 'source_reference'
  AND (result_id, object_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
"""
