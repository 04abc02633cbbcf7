-- Generated from graph_service/queries/templates/hub_current.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A hub's own copies and newest decisions (the current projection a content cursor continues).

SELECT 0 AS part, row_number() OVER () AS n, s.*
FROM (
    SELECT 'self'::text AS role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           r.graph_revision, NULL::bigint AS total
    FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
    WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
) s
UNION ALL
SELECT 1 AS part, row_number() OVER () AS n, s.*
FROM (
    SELECT DISTINCT ON (o.object_id COLLATE "C") 'member'::text AS role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           0::bigint AS graph_revision, NULL::bigint AS total
    FROM context_members o
    WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
      AND o.object_type = 'event' AND o.kind = 'decision'
    ORDER BY o.object_id COLLATE "C", o.review_generated_at DESC, o.recorded_at DESC
    LIMIT $4
) s
ORDER BY part, n
