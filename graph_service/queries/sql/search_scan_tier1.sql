-- Generated from graph_service/queries/templates/search_scan.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- Tier 1's matches found through the trigram indexes and sorted (an expression ORDER BY
-- keeps the planner off the ordered index).

SELECT o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
       o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.event_time_basis,
       o.review_generated_at, o.recorded_at, o.details
FROM graph_objects o
WHERE o.scope_key = $1
  AND o.object_type = any($2::text[])
  AND o.body_folded LIKE $3 AND o.title_folded NOT LIKE $3 AND o.object_type <> 'summary'
  AND (($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
       OR (CASE $6::text
             WHEN 'event_time' THEN
                 o.event_time_start IS NOT NULL
                 AND tstzrange(o.event_time_start,
                               event_time_until(o.event_time_start,
                                                o.event_time_end,
                                                o.event_time_precision),
                               '[]')
                     && tstzrange($4::timestamptz, $5::timestamptz, '[]')
             WHEN 'review_generated_at' THEN
                 ($4::timestamptz IS NULL OR o.review_generated_at >= $4)
                 AND ($5::timestamptz IS NULL OR o.review_generated_at <= $5)
             ELSE
                 ($4::timestamptz IS NULL OR o.recorded_at >= $4)
                 AND ($5::timestamptz IS NULL OR o.recorded_at <= $5)
           END))
  AND ($7::smallint IS NULL
       OR (o.type_rank, o.object_id, o.result_id) > ($7::smallint, $8::text, $9::text))
ORDER BY o.type_rank + 0, o.object_id, o.result_id
LIMIT $10
