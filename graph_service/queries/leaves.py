"""SearchLeaves' statements: shared leaves a scope may read, in the order they were stored.

A project scope reads the leaves whose source belongs to one of its projects (a recorded
source's project is re-checked as it is now, so a source moved out is no longer read); Global
reads every project's. Parameters: $1 the reading scope's key, $2 the lowered LIKE pattern
(NULL = any text), $3/$4 a source (type, canonical id; NULL = any), $5 the last leaf id read,
$6 the limit, then $7 the projects of a project scope.
"""

_COLUMNS = """
SELECT l.leaf_id, l.text, l.source_type, l.source_id, l.source_version,
       lower(l.fragment) AS start, upper(l.fragment) AS "end", l.contract_version,
       l.analysis, CASE WHEN s.source_id IS NULL THEN l.source_project ELSE s.project_id END
           AS source_project,
       l.scope_key, l.result_id, l.object_id, l.confirmation_state, l.event_time_start,
       l.event_time_end, l.event_time_precision, l.event_time_basis, l.recorded_at,
       l.scope_key = $1 OR EXISTS (
           SELECT 1 FROM leaf_uses u WHERE u.leaf_id = l.leaf_id AND u.scope_key = $1)
           AS recorded_in_scope
FROM leaves l
LEFT JOIN sources s
  ON l.source_type <> 'message' AND s.source_id = l.source_id AND s.source_type = l.source_type
"""

_FILTERS = """
  AND ($2::text IS NULL OR l.text_folded LIKE $2)
  AND ($3::text IS NULL OR (l.source_type = $3 AND l.source_id = $4))
  AND l.leaf_id > $5
ORDER BY l.leaf_id
LIMIT $6
"""

GLOBAL_LEAVES = _COLUMNS + "WHERE true" + _FILTERS

PROJECT_LEAVES = (
    _COLUMNS
    + """WHERE l.source_project = any($7::text[])
  AND (s.source_id IS NULL OR s.project_id = any($7::text[]))"""
    + _FILTERS
)

# A message's lineage (its canonical source id) from any node id of it.
MESSAGE_LINEAGE = "SELECT source_id::text FROM source_revisions WHERE node_id = $1 LIMIT 1"
