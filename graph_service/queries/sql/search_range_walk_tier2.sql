-- Generated from graph_service/queries/templates/search_range_walk.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- Tier 2 walked along the ordered index within a time range, bounded by copies in
-- range ($11) and entries ($14).

WITH walked AS MATERIALIZED (
    SELECT e.* FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               coalesce((($4::timestamptz IS NULL AND $5::timestamptz IS NULL)
                         OR (CASE $6::text
                               WHEN 'event_time' THEN
                                   o.event_time_start IS NOT NULL
                                   AND ($5::timestamptz IS NULL OR o.event_time_start <= $5)
                                   AND ($4::timestamptz IS NULL
                                        OR coalesce(o.event_time_end, o.event_time_start) >= $4
                                        OR event_time_until(o.event_time_start, o.event_time_end,
                                                            o.event_time_precision) >= $4)
                               WHEN 'review_generated_at' THEN
                                   ($4::timestamptz IS NULL OR o.review_generated_at >= $4)
                                   AND ($5::timestamptz IS NULL OR o.review_generated_at <= $5)
                               ELSE
                                   ($4::timestamptz IS NULL OR o.recorded_at >= $4)
                                   AND ($5::timestamptz IS NULL OR o.recorded_at <= $5)
                             END)), false) AS in_range,
               row_number() OVER (ORDER BY o.type_rank, o.object_id, o.result_id) AS n
        FROM graph_objects o
        WHERE o.scope_key = $1 AND o.type_rank BETWEEN $12::smallint AND $13::smallint
          AND ($7::smallint IS NULL
               OR (o.type_rank, o.object_id, o.result_id) > ($7::smallint, $8::text, $9::text))
          AND o.object_type = any($2::text[])
        ORDER BY o.type_rank, o.object_id, o.result_id
        LIMIT $14
    ) e
    WHERE e.in_range OR e.n = $14
    LIMIT $11
), probed AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
           o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body
    FROM walked w
    JOIN LATERAL (
        SELECT * FROM graph_objects g
        WHERE g.result_id = w.result_id AND g.object_type = w.object_type
          AND g.object_id = w.object_id
        LIMIT 1
    ) o ON true
    WHERE w.in_range
), walk_end AS (
    SELECT w.type_rank AS end_rank, w.object_id AS end_id, w.result_id AS end_result,
           w.n AS walked, (SELECT count(*) FROM walked WHERE in_range) AS in_range,
           (SELECT count(*) FROM probed WHERE in_title OR in_body) AS matches_in_range
    FROM walked w
    ORDER BY w.n DESC
    LIMIT 1
), matched AS (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
           o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.event_time_basis,
           o.review_generated_at, o.recorded_at, o.details
    FROM (
        SELECT o.* FROM probed o
        WHERE CASE WHEN o.in_title AND o.in_body THEN 3
                   WHEN o.in_title OR o.object_type = 'summary' AND o.in_body THEN 2
                   WHEN o.in_body THEN 1 END = 2
        ORDER BY o.type_rank, o.object_id, o.result_id
        LIMIT $10
    ) w
    JOIN LATERAL (
        SELECT * FROM graph_objects g
        WHERE g.result_id = w.result_id AND g.object_type = w.object_type
          AND g.object_id = w.object_id
        LIMIT 1
    ) o ON true
    ORDER BY o.type_rank, o.object_id, o.result_id
)
SELECT e.*, m.* FROM walk_end e LEFT JOIN matched m ON true
ORDER BY m.type_rank, m.object_id, m.result_id
