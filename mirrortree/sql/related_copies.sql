-- Generated from graph_service/queries/templates/mirrortree/related_copies.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- X's member copies walked live ($1 scope, $2 type, $3 id): the copies of the `related` CTE's
-- objects but X's, mirrortree.neighbourhoods.MEMBER_COLUMNS. Not a statement of its own: the
-- body that follows the `related` CTE (mirrortree.neighbourhoods).

SELECT o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
       o.cited_ids
FROM related m
JOIN graph_objects o ON o.object_type = m.t AND o.object_id = m.id AND o.scope_key = $1
WHERE NOT (m.t = $2 AND m.id = $3)
