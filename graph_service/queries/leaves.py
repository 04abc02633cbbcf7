"""SearchLeaves' statements: shared leaves a scope may read, in the order they were stored.

A project scope reads the leaves whose source belongs to one of its projects (a recorded
source's project is re-checked as it is now, so a source moved out is no longer read); Global
reads every project's. Parameters: $1 the reading scope's key, $2 the lowered LIKE pattern
(NULL = any text), $3/$4 a source (type, canonical id; NULL = any), $5 the last leaf id read,
$6 the limit, then $7 the projects of a project scope. Whether the reading scope recorded a
leaf is looked up for the page's rows only, after the limit, one index probe each.
"""

GLOBAL_LEAVES = """
SELECT page.*, page.scope_key = $1 OR used.leaf_id IS NOT NULL AS recorded_in_scope
FROM (
    SELECT l.leaf_id, l.text, l.source_type, l.source_id, l.source_version,
           lower(l.fragment) AS start, upper(l.fragment) AS "end", l.contract_version,
           l.analysis,
           CASE WHEN s.source_id IS NULL THEN l.source_project ELSE s.project_id END
               AS source_project,
           l.scope_key, l.result_id, l.object_id, l.confirmation_state, l.event_time_start,
           l.event_time_end, l.event_time_precision, l.event_time_basis, l.recorded_at
    FROM leaves l
    LEFT JOIN sources s
      ON l.source_type <> 'message' AND s.source_id = l.source_id
     AND s.source_type = l.source_type
    WHERE ($2::text IS NULL OR l.text_folded LIKE $2)
      AND ($3::text IS NULL OR (l.source_type = $3 AND l.source_id = $4))
      AND l.leaf_id > $5
    ORDER BY l.leaf_id
    LIMIT $6
) page
LEFT JOIN LATERAL (
    SELECT u.leaf_id FROM leaf_uses u
    WHERE u.leaf_id = page.leaf_id AND u.scope_key = $1
    LIMIT 1
) used ON true
ORDER BY page.leaf_id
"""

PROJECT_LEAVES = """
SELECT page.*, page.scope_key = $1 OR used.leaf_id IS NOT NULL AS recorded_in_scope
FROM (
    SELECT l.leaf_id, l.text, l.source_type, l.source_id, l.source_version,
           lower(l.fragment) AS start, upper(l.fragment) AS "end", l.contract_version,
           l.analysis,
           CASE WHEN s.source_id IS NULL THEN l.source_project ELSE s.project_id END
               AS source_project,
           l.scope_key, l.result_id, l.object_id, l.confirmation_state, l.event_time_start,
           l.event_time_end, l.event_time_precision, l.event_time_basis, l.recorded_at
    FROM leaves l
    LEFT JOIN sources s
      ON l.source_type <> 'message' AND s.source_id = l.source_id
     AND s.source_type = l.source_type
    WHERE l.source_project = any($7::text[])
      AND (s.source_id IS NULL OR s.project_id = any($7::text[]))
      AND ($2::text IS NULL OR l.text_folded LIKE $2)
      AND ($3::text IS NULL OR (l.source_type = $3 AND l.source_id = $4))
      AND l.leaf_id > $5
    ORDER BY l.leaf_id
    LIMIT $6
) page
LEFT JOIN LATERAL (
    SELECT u.leaf_id FROM leaf_uses u
    WHERE u.leaf_id = page.leaf_id AND u.scope_key = $1
    LIMIT 1
) used ON true
ORDER BY page.leaf_id
"""

# Planned for each call's values (a text pattern or none, a source or none), never as a
# generic plan that could not choose between the trigram index and the ordered walk.
FORCE_CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"

# A message's lineage (its canonical source id) from any node id of it.
MESSAGE_LINEAGE = "SELECT source_id::text FROM source_revisions WHERE node_id = $1 LIMIT 1"
