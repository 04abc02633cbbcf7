-- Generated from graph_service/queries/templates/validity_relations.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The evidenced replaces/contradicts relations touching each object ($2 types, $3 ids) in scope
-- $1.

SELECT 'touch' AS part,
       o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
       o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.event_time_basis,
       o.review_generated_at, o.recorded_at, o.details,
       o.cited_ids, l.link, l.to_type AS touched_type, l.to_id AS touched_id
FROM unnest($2::text[], $3::text[]) AS x (t, id)
JOIN graph_links l ON l.scope_key = $1 AND l.to_type = x.t AND l.to_id = x.id
JOIN graph_objects o
  ON o.result_id = l.result_id AND o.object_type = 'relation' AND o.object_id = l.from_id
WHERE l.from_type = 'relation'
  AND l.link IN ('replaces.from', 'replaces.to', 'contradicts.from', 'contradicts.to')
  AND o.confirmation_state IS DISTINCT FROM 'retracted'
  AND NOT EXISTS (
      SELECT 1
      FROM graph_objects later JOIN review_results lr ON lr.result_id = later.result_id
      WHERE later.object_type = 'relation' AND later.object_id = o.object_id
        AND later.scope_key = $1 AND later.confirmation_state = 'retracted'
        AND lr.graph_revision > (SELECT graph_revision FROM review_results
                                 WHERE result_id = o.result_id))
