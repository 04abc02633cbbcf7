-- Generated from graph_service/queries/templates/search_range.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The matches in a recording-time range (a small one), read through
-- the scope's results, up to the cap $7.

WITH in_range AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
           CASE WHEN o.in_title AND o.in_body THEN 3
                WHEN o.in_title OR o.object_type = 'summary' AND o.in_body THEN 2
                WHEN o.in_body THEN 1 END AS score
    FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body
        FROM review_results r
        -- Lateral and not flattened (OFFSET 0): each result's copies by primary key, whatever
        -- the planner guesses of how many results the range holds (a generic plan guesses a
        -- third, and joins a sequential scan of every copy).
        CROSS JOIN LATERAL (
            SELECT * FROM graph_objects g
            WHERE g.result_id = r.result_id AND g.object_type = any($2::text[])
            OFFSET 0
        ) o
        WHERE $6::text = 'recorded_at'
          AND r.scope_key = $1 AND ($4::timestamptz IS NULL OR r.recorded_at >= $4)
                  AND ($5::timestamptz IS NULL OR r.recorded_at <= $5)
        OFFSET 0
    ) o
)
SELECT count(*) FROM (SELECT 1 FROM in_range WHERE score IS NOT NULL LIMIT $7) capped
