-- Generated from graph_service/queries/templates/context_neighbourhood.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- X's neighbourhood read whole: its own copies, a hub's stored members, or the members walked
-- live.

WITH nb AS (
    SELECT from_type AS t, from_id AS id FROM graph_links
    WHERE scope_key = $1 AND to_type = $2 AND to_id = $3
    UNION
    SELECT to_type, to_id FROM graph_links
    WHERE scope_key = $1 AND from_type = $2 AND from_id = $3
), hop AS (
    SELECT $2::text AS t, $3::text AS id
    UNION
    SELECT t, id FROM nb
), rel AS (
    SELECT DISTINCT l.from_id AS id
    FROM hop JOIN graph_links l ON l.scope_key = $1 AND l.to_type = hop.t AND l.to_id = hop.id
    WHERE l.from_type = 'relation'
), related AS (
    SELECT t, id FROM nb
    UNION
    SELECT 'relation', id FROM rel
    UNION
    SELECT l.to_type, l.to_id
    FROM rel JOIN graph_links l
      ON l.scope_key = $1 AND l.from_type = 'relation' AND l.from_id = rel.id
)
SELECT 'self'::text AS role,
       o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
       r.graph_revision, o.cited_ids
FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
UNION ALL
SELECT 'member'::text AS role,
       o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
       0::bigint AS graph_revision, o.cited_ids
FROM context_members o
WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
UNION ALL
SELECT 'member',
       c.object_type, c.object_id, c.result_id, c.type_rank, c.kind, c.event_time_start,
       c.event_time_end, c.event_time_precision, c.review_generated_at, c.recorded_at,
       0, c.cited_ids
FROM (
    SELECT o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           o.cited_ids
    FROM related m
    JOIN graph_objects o ON o.object_type = m.t AND o.object_id = m.id AND o.scope_key = $1
    WHERE NOT (m.t = $2 AND m.id = $3)
) c
WHERE NOT EXISTS (SELECT 1 FROM context_hubs
                  WHERE scope_key = $1 AND object_type = $2 AND object_id = $3)
