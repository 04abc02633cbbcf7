-- Generated from graph_service/queries/templates/search_scope_matches_event_time.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- At most $12 of the scope's matches (trigram indexes, a generic plan), each placed in the
-- event-time range or not; below $12, the page from tier $11 down of those in range, with the
-- scope's, the range's and the unknown-time matches counted; at $12, only the counts.

WITH matches AS MATERIALIZED (
    SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
           CASE WHEN o.in_title AND o.in_body THEN 3
                WHEN o.in_title OR o.object_type = 'summary' AND o.in_body THEN 2
                WHEN o.in_body THEN 1 END AS score,
           o.in_range, o.unknown_time
    FROM (
        SELECT o.result_id, o.object_type, o.object_id, o.type_rank,
               o.title_folded LIKE $3 AS in_title, o.body_folded LIKE $3 AS in_body,
               (o.event_time_start IS NOT NULL
                AND tstzrange(o.event_time_start,
                              event_time_until(o.event_time_start,
                                               o.event_time_end,
                                               o.event_time_precision),
                              '[]')
                    && tstzrange($4::timestamptz, $5::timestamptz, '[]')) AS in_range,
               o.event_time_start IS NULL AS unknown_time
        FROM graph_objects o
        WHERE $6::text = 'event_time' AND o.scope_key = $1 AND o.object_type = any($2::text[])
          AND (o.title_folded LIKE $3 OR o.body_folded LIKE $3)
        LIMIT $12
    ) o
)
SELECT c.scope_matches, c.range_matches, c.unknown_time, p.score,
       o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title,
       o.body, o.kind, o.object_revision, o.confirmation_state, o.event_time_start,
       o.event_time_end, o.event_time_precision, o.event_time_basis,
       o.review_generated_at, o.recorded_at, o.details
FROM (SELECT count(*) AS scope_matches, count(*) FILTER (WHERE in_range) AS range_matches,
             count(*) FILTER (WHERE unknown_time) AS unknown_time
      FROM matches) c
LEFT JOIN LATERAL (
    SELECT * FROM matches o
    WHERE o.in_range AND c.scope_matches < $12
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
