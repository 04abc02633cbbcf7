-- Generated from graph_service/queries/templates/search_range.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The matches in an event-time range (a small one), read through
-- the range, up to the cap $7.

WITH in_range AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
           CASE WHEN o.in_title AND o.in_body THEN 3
                WHEN o.in_title OR o.object_type = 'summary' AND o.in_body THEN 2
                WHEN o.in_body THEN 1 END AS score
    FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body
        FROM graph_objects o
        WHERE $6::text = 'event_time'
          AND o.event_time_start IS NOT NULL
              AND tstzrange(o.event_time_start,
                            event_time_until(o.event_time_start,
                                             o.event_time_end,
                                             o.event_time_precision),
                            '[]')
                  && tstzrange($4::timestamptz, $5::timestamptz, '[]')
          AND o.scope_key = $1 AND o.object_type = any($2::text[])
        OFFSET 0
    ) o
)
SELECT count(*) FROM (SELECT 1 FROM in_range WHERE score IS NOT NULL LIMIT $7) capped
