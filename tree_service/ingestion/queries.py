"""SQL of story-graph ingestion: review results, hubs, message sources, sources and
preferences."""

INSERT_SOURCE_REVISION = """
INSERT INTO source_revisions (source_id, revision, node_id, role, text, project_id, tree_id,
                              ordinal)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
"""

SELECT_REVIEW_HASH = "SELECT request_hash FROM review_results WHERE result_id = $1"

# Held to the end of the transaction, so that a scope's graph revisions commit in order and a
# cursor bound to the highest one read cannot miss a late-committing result.
LOCK_SCOPE_REVISIONS = "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))"

# For the rest of the transaction, every statement is planned for its parameters' values.
FORCE_CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"
# For the rest of the transaction, every statement is planned for any parameters' values.
FORCE_GENERIC_PLANS = "SET LOCAL plan_cache_mode = force_generic_plan"

# The lowest links-per-object threshold hubs were made at (mirrortree.neighbourhoods).
HUB_THRESHOLD_APPLIED = "SELECT hub_links FROM context_hub_threshold"

RECORD_HUB_THRESHOLD = """
INSERT INTO context_hub_threshold (hub_links) VALUES ($1)
ON CONFLICT (single) DO UPDATE SET hub_links = least(context_hub_threshold.hub_links, $1)
"""

INSERT_REVIEW_RESULT = """
INSERT INTO review_results (
    result_id, scope_key, scope_projects, phase, covered_from, covered_to,
    review_generated_at, recorded_at, graph_revision, excluded_source_types, request_hash,
    coverage_gaps, object_count, coverage_basis, coverage_counts)
VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp(), nextval('graph_revision_seq'), $8, $9,
        $10, $11, $12, $13::jsonb)
RETURNING recorded_at, graph_revision
"""

SELECT_REVIEW_RESULT = """
SELECT recorded_at, graph_revision, object_count FROM review_results WHERE result_id = $1
"""

GRAPH_OBJECT_COLUMNS = (
    "result_id",
    "object_type",
    "object_id",
    "type_rank",
    "scope_key",
    "title",
    "body",
    "kind",
    "object_revision",
    "confirmation_state",
    "event_time_start",
    "event_time_end",
    "event_time_precision",
    "event_time_basis",
    "review_generated_at",
    "recorded_at",
    "details",
    "cited_ids",
)

GRAPH_LINK_COLUMNS = ("scope_key", "result_id", "from_type", "from_id", "link", "to_type", "to_id")

# The newest stored copy of each named object in one scope: ($1 scope key, $2 types, $3 ids).
NEWEST_COPIES_IN_SCOPE = """
SELECT DISTINCT ON (o.object_type, o.object_id)
       o.object_type, o.object_id, o.result_id, o.object_revision
FROM unnest($2::text[], $3::text[]) AS wanted (object_type, object_id)
JOIN graph_objects o
  ON o.object_type = wanted.object_type AND o.object_id = wanted.object_id AND o.scope_key = $1
JOIN review_results r ON r.result_id = o.result_id
ORDER BY o.object_type, o.object_id, r.graph_revision DESC
"""

# The earliest copy an earlier result of scope $1 holds with other content of each reference a
# result records ($2 ids, $3 fragments, $4 details as JSON), as a reference id names one
# saved fragment for good.
SOURCE_REFERENCE_CONFLICTS = """
SELECT DISTINCT ON (o.object_id) o.object_id, o.result_id, o.body, o.details
FROM unnest($2::text[], $3::text[], $4::text[]) AS mine (object_id, body, details)
JOIN graph_objects o
  ON o.object_type = 'source_reference' AND o.object_id = mine.object_id AND o.scope_key = $1
JOIN review_results r ON r.result_id = o.result_id
WHERE o.body IS DISTINCT FROM mine.body OR o.details IS DISTINCT FROM mine.details::jsonb
ORDER BY o.object_id, r.graph_revision
"""

OBJECT_IN_SCOPE = """
SELECT EXISTS (
    SELECT 1 FROM graph_objects WHERE scope_key = $1 AND object_type = $2 AND object_id = $3)
"""

SELECT_PREFERENCES_BY_ID = """
SELECT id, scope_key, revision FROM preferences WHERE id = any($1::text[])
"""

SELECT_SOURCE_FOR_UPDATE = """
SELECT source_type, revision FROM sources WHERE source_id = $1 FOR UPDATE
"""

# A create that loses a race with another create of the same id inserts nothing (no row back).
INSERT_SOURCE = """
INSERT INTO sources (source_id, source_type, project_id, title, text, revision, deleted)
VALUES ($1, $2, $3, $4, $5, 1, $5::text IS NULL)
ON CONFLICT (source_id) DO NOTHING
RETURNING revision, updated_at
"""

UPDATE_SOURCE = """
UPDATE sources
SET project_id = $2, title = $3, text = $4, deleted = $4::text IS NULL,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE source_id = $1
RETURNING revision, updated_at
"""

SELECT_PREFERENCE_FOR_UPDATE = """
SELECT revision FROM preferences WHERE id = $1 FOR UPDATE
"""

INSERT_PREFERENCE = """
INSERT INTO preferences (id, scope_key, subject, text, about, confirmed_by, revision)
VALUES ($1, $2, $3, $4, $5::jsonb, $6, 1)
ON CONFLICT (id) DO NOTHING
RETURNING revision, updated_at
"""

UPDATE_PREFERENCE = """
UPDATE preferences
SET scope_key = $2, subject = $3, text = $4, about = $5::jsonb, confirmed_by = $6,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE id = $1
RETURNING revision, updated_at
"""

SELECT_PREFERENCES = """
SELECT id, scope_key, subject, text, about::text AS about, confirmed_by, revision, updated_at
FROM preferences WHERE id = any($1::text[])
"""
