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

# Search ranks matches in three relevance tiers: the text is in both the title (title, entity
# label, summary title) and the body (3), in the title only (2), in the body only (1). Within a
# tier the order is type rank, stable id, result id — exactly the order of the index
# graph_objects_scope_order — so a common term is answered by walking that index and stopping
# after one page, and a rare one by the trigram indexes plus a small sort. Each tier is its
# own statement; the planner picks per call (graph_service forces custom plans for this).
#
# Parameters: $1 scope key, $2 object types, $3 ILIKE pattern, $4/$5 the time range on the
# chosen basis $6 ('event_time' | 'review_generated_at' | 'recorded_at'), $7..$9 the keyset
# position inside the tier (type rank, object id, result id; NULL = from the start), $10 limit.
_TIME_FILTER = """
    (($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
     OR (CASE $6::text
          WHEN 'event_time' THEN
              o.event_time_start IS NOT NULL
              AND ($5::timestamptz IS NULL OR o.event_time_start <= $5)
              AND ($4::timestamptz IS NULL
                   OR coalesce(o.event_time_end, o.event_time_start) >= $4)
          WHEN 'review_generated_at' THEN
              ($4::timestamptz IS NULL OR o.review_generated_at >= $4)
              AND ($5::timestamptz IS NULL OR o.review_generated_at <= $5)
          ELSE
              ($4::timestamptz IS NULL OR o.recorded_at >= $4)
              AND ($5::timestamptz IS NULL OR o.recorded_at <= $5)
        END))
"""

_SEARCH_TIER = """
SELECT o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title, o.body,
       o.kind, o.object_revision, o.confirmation_state, o.event_time_start, o.event_time_end,
       o.event_time_precision, o.event_time_basis, o.review_generated_at, o.recorded_at,
       o.details
FROM graph_objects o
WHERE o.scope_key = $1
  AND o.object_type = any($2::text[])
  AND {match}
  AND {time_filter}
  AND ($7::smallint IS NULL
       OR (o.type_rank, o.object_id, o.result_id) > ($7::smallint, $8::text, $9::text))
ORDER BY o.type_rank, o.object_id, o.result_id
LIMIT $10
"""

SEARCH_TIERS: dict[int, str] = {
    3: _SEARCH_TIER.replace("{match}", "o.title ILIKE $3 AND o.body ILIKE $3"),
    2: _SEARCH_TIER.replace("{match}", "o.title ILIKE $3 AND o.body NOT ILIKE $3"),
    1: _SEARCH_TIER.replace("{match}", "o.body ILIKE $3 AND o.title NOT ILIKE $3"),
}
SEARCH_TIERS = {
    score: sql.replace("{time_filter}", _TIME_FILTER) for score, sql in SEARCH_TIERS.items()
}

# statement_timeout for the rest of the current transaction (undone by rolling back to the
# savepoint it was set in).
SET_LOCAL_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', $1, true)"

# Totals are counted up to a cap ($7); beyond it the total is reported as unknown, not guessed.
SEARCH_TOTAL = (
    """
SELECT count(*) FROM (
    SELECT 1 FROM graph_objects o
    WHERE o.scope_key = $1
      AND o.object_type = any($2::text[])
      AND (o.title ILIKE $3 OR o.body ILIKE $3)
      AND """
    + _TIME_FILTER
    + """
    LIMIT $7
) capped
"""
)

# Matches left out by an event-time filter because their event time is unknown (capped).
SEARCH_UNKNOWN_TIME = """
SELECT count(*) FROM (
    SELECT 1 FROM graph_objects o
    WHERE o.scope_key = $1
      AND o.object_type = any($2::text[])
      AND (o.title ILIKE $3 OR o.body ILIKE $3)
      AND o.event_time_start IS NULL
    LIMIT $4
) capped
"""

SOURCES_OF = """
SELECT result_id, object_id, details
FROM graph_objects
WHERE object_type = 'source_reference'
  AND (result_id, object_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
"""

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
