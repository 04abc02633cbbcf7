-- Generated from graph_service/queries/templates/sources_and_touches.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The source references a page of hits cites ('cited') and the evidenced relations touching the
-- hits ('touch').

SELECT 'cited' AS part,
       o.result_id, o.object_type, o.object_id, NULL::smallint AS type_rank,
       NULL::text AS scope_key, NULL::text AS title, NULL::text AS body, NULL::text AS kind,
       NULL::text AS object_revision, NULL::text AS confirmation_state,
       NULL::timestamptz AS event_time_start, NULL::timestamptz AS event_time_end,
       NULL::text AS event_time_precision, NULL::text AS event_time_basis,
       NULL::timestamptz AS review_generated_at, NULL::timestamptz AS recorded_at, o.details,
       NULL::text[] AS cited_ids,
       NULL AS link, NULL AS touched_type, NULL AS touched_id
FROM graph_objects o
WHERE o.object_type = 'source_reference'
  AND (o.result_id, o.object_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
UNION ALL
SELECT 'touch' AS part,
       o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
       o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.event_time_basis,
       o.review_generated_at, o.recorded_at, o.details,
       o.cited_ids, l.link, l.to_type AS touched_type, l.to_id AS touched_id
FROM unnest($4::text[], $5::text[]) AS x (t, id)
JOIN graph_links l ON l.scope_key = $3 AND l.to_type = x.t AND l.to_id = x.id
JOIN graph_objects o
  ON o.result_id = l.result_id AND o.object_type = 'relation' AND o.object_id = l.from_id
WHERE l.from_type = 'relation'
  AND l.link IN ('replaces.from', 'replaces.to', 'contradicts.from', 'contradicts.to')
  AND o.confirmation_state IS DISTINCT FROM 'retracted'
  AND NOT EXISTS (
      SELECT 1
      FROM graph_objects later JOIN review_results lr ON lr.result_id = later.result_id
      WHERE later.object_type = 'relation' AND later.object_id = o.object_id
        AND later.scope_key = $3 AND later.confirmation_state = 'retracted'
        AND lr.graph_revision > (SELECT graph_revision FROM review_results
                                 WHERE result_id = o.result_id))
