"""SearchLeaves' statements: shared leaves a scope may read, in the order they were stored.

A project scope reads the leaves whose source belongs to one of its projects (a recorded
source's project is re-checked as it is now, so a source moved out is no longer read); Global
reads every project's. Parameters: $1 the reading scope's key, $2 the lowered LIKE pattern
(NULL = any text), $3/$4 a source (type, canonical id; NULL = any), $5 the last leaf id read,
$6 the limit, then $7 the projects of a project scope. Whether the reading scope recorded a
leaf is looked up for the page's rows only, after the limit, one index probe each.
"""


def _leaves_page(project_filter: str) -> str:
    """A page of leaves in stored order, with the reading scope's own use of each; the two
    statements differ only in which sources' projects they read."""
    return (
        """
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
    WHERE """
        + project_filter
        + """($2::text IS NULL OR l.text_folded LIKE $2)
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
    )


GLOBAL_LEAVES = _leaves_page("")

PROJECT_LEAVES = _leaves_page(
    """l.source_project = any($7::text[])
      AND (s.source_id IS NULL OR s.project_id = any($7::text[]))
      AND """
)

# Planned for each call's values (a text pattern or none, a source or none), never as a
# generic plan that could not choose between the trigram index and the ordered walk.
FORCE_CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"

# A message's lineage (its canonical source id) from any node id of it.
MESSAGE_LINEAGE = "SELECT source_id::text FROM source_revisions WHERE node_id = $1 LIMIT 1"

# The leaf facts the scope ($1) linked in its own reviews (stored no copy of), still visible
# to it by the source's real project ($2 its projects, NULL for Global, which reads every
# project's), in the time range ($4..$6, the rule of queries.search: the leaf's event time, or
# the linking result's times), by the id the scope gave them, at most $7; $3 is each
# statement's own condition.
_LINKED = """
SELECT u.object_id AS use_object_id, u.result_id AS use_result_id, l.leaf_id, l.text,
       l.source_type, l.source_id, l.source_version, lower(l.fragment) AS start,
       upper(l.fragment) AS "end", l.contract_version, l.analysis,
       CASE WHEN s.source_id IS NULL THEN l.source_project ELSE s.project_id END
           AS source_project,
       l.scope_key, l.result_id, l.object_id, l.confirmation_state, l.event_time_start,
       l.event_time_end, l.event_time_precision, l.event_time_basis, l.recorded_at,
       true AS recorded_in_scope,
       coalesce(o.details -> 'source_reference_ids', '[]'::jsonb)::text AS source_reference_ids
FROM leaf_uses u
JOIN leaves l ON l.leaf_id = u.leaf_id
JOIN review_results r ON r.result_id = u.result_id
LEFT JOIN sources s
  ON l.source_type <> 'message' AND s.source_id = l.source_id AND s.source_type = l.source_type
LEFT JOIN graph_objects o
  ON o.result_id = l.result_id AND o.object_type = 'leaf_fact' AND o.object_id = l.object_id
WHERE u.scope_key = $1 AND u.linked
  AND ($2::text[] IS NULL
       OR (l.source_project = any($2::text[])
           AND (s.source_id IS NULL OR s.project_id = any($2::text[]))))
  AND {condition}
  AND (($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
       OR (CASE $6::text
             WHEN 'event_time' THEN
                 l.event_time_start IS NOT NULL
                 AND tstzrange(l.event_time_start,
                               event_time_until(l.event_time_start, l.event_time_end,
                                                l.event_time_precision),
                               '[]')
                     && tstzrange($4::timestamptz, $5::timestamptz, '[]')
             WHEN 'review_generated_at' THEN
                 ($4::timestamptz IS NULL OR r.review_generated_at >= $4)
                 AND ($5::timestamptz IS NULL OR r.review_generated_at <= $5)
             ELSE
                 ($4::timestamptz IS NULL OR r.recorded_at >= $4)
                 AND ($5::timestamptz IS NULL OR r.recorded_at <= $5)
           END))
ORDER BY u.object_id, u.result_id
LIMIT $7
"""

# Search's: the linked leaves whose text matches the lowered LIKE pattern $3.
LINKED_LEAVES = _LINKED.format(condition="l.text_folded LIKE $3")

# GetContext's: the linked leaves the scope said are about the object $3 ({"type", "id"}),
# through the index of the uses' `about` links (migration 0032) by the id alone, the type
# checked by a function the index cannot take, because every link of a type shares its key.
LINKED_LEAVES_ABOUT = _LINKED.format(
    condition="u.about @> jsonb_build_array(jsonb_build_object('id', $3::jsonb -> 'id'))"
    " AND jsonb_contains(u.about, jsonb_build_array($3::jsonb))"
)

# Whether the scope ($1) linked a leaf of the source ($4 type, $5 canonical id) first extracted
# by one of the results ($2) whose leaf copy cites the source reference ($3): then that
# reference is the linked leaf's evidence. The leaf is found by its source (leaves_source).
LINKED_REFERENCE = """
SELECT o.result_id
FROM graph_objects o
JOIN leaves l
  ON l.source_type = $4 AND l.source_id = $5
 AND l.result_id = o.result_id AND l.object_id = o.object_id
JOIN leaf_uses u ON u.leaf_id = l.leaf_id AND u.scope_key = $1 AND u.linked
WHERE o.result_id = any($2::text[]) AND o.object_type = 'leaf_fact'
  AND o.details -> 'source_reference_ids' ? $3
LIMIT 1
"""
