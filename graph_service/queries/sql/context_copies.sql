-- Generated from graph_service/queries/templates/context_copies.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- Whole copies by key ('copy', with the period their result covered: what decides the current
-- description), the sources of those shown with sources ('cited') and the relations touching
-- the objects ('touch').

WITH page AS (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
           o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.event_time_basis,
           o.review_generated_at, o.recorded_at, o.details,
           CASE WHEN k.sources_shown THEN o.cited_ids ELSE '{}' END AS cited_ids,
           r.coverage_basis AS result_coverage_basis, r.covered_from AS result_covered_from,
           r.covered_to AS result_covered_to
    FROM unnest($1::text[], $2::text[], $3::text[], $7::boolean[])
         AS k (result_id, object_type, object_id, sources_shown)
    JOIN graph_objects o
      ON o.result_id = k.result_id AND o.object_type = k.object_type
     AND o.object_id = k.object_id
    JOIN review_results r ON r.result_id = o.result_id
), cited AS (
    SELECT DISTINCT p.result_id, c.id FROM page p, unnest(p.cited_ids) AS c (id)
)
SELECT 'copy' AS part, p.*, NULL AS link, NULL AS touched_type, NULL AS touched_id FROM page p
UNION ALL
SELECT 'cited',
       o.result_id, o.object_type, o.object_id, NULL::smallint AS type_rank,
       NULL::text AS scope_key, NULL::text AS title, NULL::text AS body, NULL::text AS kind,
       NULL::text AS object_revision, NULL::text AS confirmation_state,
       NULL::timestamptz AS event_time_start, NULL::timestamptz AS event_time_end,
       NULL::text AS event_time_precision, NULL::text AS event_time_basis,
       NULL::timestamptz AS review_generated_at, NULL::timestamptz AS recorded_at, o.details,
       NULL::text[] AS cited_ids, NULL::text, NULL::timestamptz, NULL::timestamptz,
       NULL AS link, NULL AS touched_type, NULL AS touched_id
FROM cited c
JOIN graph_objects o
  ON o.result_id = c.result_id AND o.object_type = 'source_reference' AND o.object_id = c.id
UNION ALL
SELECT 'touch' AS part,
       o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
       o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.event_time_basis,
       o.review_generated_at, o.recorded_at, o.details,
       o.cited_ids, NULL::text, NULL::timestamptz, NULL::timestamptz,
       l.link, l.to_type AS touched_type, l.to_id AS touched_id
FROM unnest($5::text[], $6::text[]) AS x (t, id)
JOIN graph_links l ON l.scope_key = $4 AND l.to_type = x.t AND l.to_id = x.id
JOIN graph_objects o
  ON o.result_id = l.result_id AND o.object_type = 'relation' AND o.object_id = l.from_id
WHERE l.from_type = 'relation'
  AND l.link IN ('replaces.from', 'replaces.to', 'contradicts.from', 'contradicts.to')
  AND o.confirmation_state IS DISTINCT FROM 'retracted'
  AND NOT EXISTS (
      SELECT 1
      FROM graph_objects later JOIN review_results lr ON lr.result_id = later.result_id
      WHERE later.object_type = 'relation' AND later.object_id = o.object_id
        AND later.scope_key = $4 AND later.confirmation_state = 'retracted'
        AND lr.graph_revision > (SELECT graph_revision FROM review_results
                                 WHERE result_id = o.result_id))
