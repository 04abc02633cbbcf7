-- Generated from graph_service/queries/templates/hub_page.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A hub's next page of several types (a cursor of timeline, undated or related).

SELECT 0 AS part, row_number() OVER () AS n, s.*
FROM (
    WITH copies AS NOT MATERIALIZED (
        SELECT 'member'::text AS role,
               o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
               o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
               0::bigint AS graph_revision, o.cited_ids
        FROM context_members o
        WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
        UNION ALL
        SELECT 'self'::text AS role,
               o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
               o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
               r.graph_revision, o.cited_ids
        FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
        WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
    )
    SELECT o.role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           o.graph_revision,
           CASE
               WHEN NOT $16::boolean THEN NULL
               WHEN $4::timestamptz IS NULL AND $5::timestamptz IS NULL
               THEN (SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
                     WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
                       AND n.role = 'member' AND 'member' = any($7::text[])
                       AND n.object_type = any($8::text[])
                       AND ($9::text = 'any'
                            OR n.undated = ($9::text = 'undated')))
                    + (SELECT count(*) FROM graph_objects o
                       WHERE 'self' = any($7::text[])
                         AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                         AND o.object_type = any($8::text[])
                         AND ($9::text = 'any'
                              OR (o.event_time_start IS NULL) = ($9::text = 'undated')))
               ELSE (
                   SELECT count(*) FROM copies o
                   WHERE o.role = any($7::text[]) AND o.object_type = any($8::text[])
                     AND ($9::text = 'any'
                          OR (o.event_time_start IS NULL) = ($9::text = 'undated'))
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
                              END)))
           END AS total
    FROM copies o
    WHERE o.role = any($7::text[]) AND o.object_type = any($8::text[])
      AND ($9::text = 'any'
           OR (o.event_time_start IS NULL) = ($9::text = 'undated'))
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
      AND (o.event_time_start IS NULL,
           coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
           o.object_id COLLATE "C", o.result_id COLLATE "C")
          > ($10::boolean, $11::timestamptz, $12::smallint, $13::text COLLATE "C",
             $14::text COLLATE "C")
    ORDER BY o.event_time_start IS NULL,
             coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
             o.object_id COLLATE "C", o.result_id COLLATE "C"
    LIMIT $15
) s
ORDER BY part, n
