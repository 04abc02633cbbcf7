-- Generated from graph_service/queries/templates/search_range.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The matches in a review-time range, through the trigram indexes ANDed with
-- each result's key range: the page
-- from tier $11 down, with their count.

WITH in_range AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
           CASE WHEN o.in_title AND o.in_body THEN 3
                WHEN o.in_title OR o.object_type = 'summary' AND o.in_body THEN 2
                WHEN o.in_body THEN 1 END AS score
    FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body
        FROM graph_objects o
        WHERE $6::text = 'review_generated_at'
          AND o.scope_key = $1 AND o.object_type = any($2::text[])
          AND o.result_id = any(ARRAY(
              SELECT r.result_id FROM review_results r
              WHERE r.scope_key = $1 AND ($4::timestamptz IS NULL OR r.review_generated_at >= $4)
                        AND ($5::timestamptz IS NULL OR r.review_generated_at <= $5)))
          AND (o.title_folded LIKE $3 OR o.body_folded LIKE $3)
        OFFSET 0
    ) o
)
SELECT c.range_matches, c.range_copies, p.score,
       o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
       o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.event_time_basis,
       o.review_generated_at, o.recorded_at, o.details
FROM (SELECT count(score) AS range_matches, count(*) AS range_copies FROM in_range) c
LEFT JOIN LATERAL (
    SELECT * FROM in_range o
    WHERE true
      AND (o.score < $11::smallint
           OR o.score = $11::smallint
              AND ($7::smallint IS NULL
                   OR (o.type_rank, o.object_id, o.result_id)
                      > ($7::smallint, $8::text, $9::text)))
    ORDER BY o.score DESC, o.type_rank, o.object_id, o.result_id
    LIMIT $10
) p ON true
LEFT JOIN graph_objects o
    ON o.result_id = p.result_id AND o.object_type = p.object_type AND o.object_id = p.object_id
ORDER BY p.score DESC, p.type_rank, p.object_id, p.result_id
