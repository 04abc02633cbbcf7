-- Generated from graph_service/queries/templates/search_count.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A search's matches in every tier through the trigram indexes, up to the cap $7.

SELECT count(*) FROM (
    SELECT 1 FROM graph_objects o
    WHERE o.scope_key = $1
      AND o.object_type = any($2::text[])
      AND (o.title_folded LIKE $3 OR o.body_folded LIKE $3)
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
    LIMIT $7) capped
