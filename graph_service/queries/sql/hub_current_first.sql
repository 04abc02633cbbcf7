-- Generated from graph_service/queries/templates/hub_current_first.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A hub's first current-mode read in one statement: the four evidence types' pages, related,
-- sources, X's copies, the decisions.

SELECT 0 AS part, row_number() OVER () AS n, s.*
FROM (
    WITH copies AS NOT MATERIALIZED (
        SELECT 'member'::text AS role,
               o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
               o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
               0::bigint AS graph_revision, o.cited_ids
        FROM context_members o
        WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
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
                       AND n.object_type = ($8::text[])[1]
                       AND ($9::text = 'any'
                            OR n.undated = ($9::text = 'undated')))
                    + (SELECT count(*) FROM graph_objects o
                       WHERE 'self' = any($7::text[])
                         AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                         AND o.object_type = ($8::text[])[1]
                         AND ($9::text = 'any'
                              OR (o.event_time_start IS NULL) = ($9::text = 'undated')))
               ELSE (
                   SELECT count(*) FROM copies o
                   WHERE o.role = any($7::text[]) AND o.object_type = ($8::text[])[1]
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
    WHERE o.role = any($7::text[]) AND o.object_type = ($8::text[])[1]
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
UNION ALL
SELECT 1 AS part, row_number() OVER () AS n, s.*
FROM (
    WITH copies AS NOT MATERIALIZED (
        SELECT 'member'::text AS role,
               o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
               o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
               0::bigint AS graph_revision, o.cited_ids
        FROM context_members o
        WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
    )
    SELECT o.role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           o.graph_revision,
           CASE
               WHEN NOT $29::boolean THEN NULL
               WHEN $17::timestamptz IS NULL AND $18::timestamptz IS NULL
               THEN (SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
                     WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
                       AND n.role = 'member' AND 'member' = any($20::text[])
                       AND n.object_type = ($21::text[])[1]
                       AND ($22::text = 'any'
                            OR n.undated = ($22::text = 'undated')))
                    + (SELECT count(*) FROM graph_objects o
                       WHERE 'self' = any($20::text[])
                         AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                         AND o.object_type = ($21::text[])[1]
                         AND ($22::text = 'any'
                              OR (o.event_time_start IS NULL) = ($22::text = 'undated')))
               ELSE (
                   SELECT count(*) FROM copies o
                   WHERE o.role = any($20::text[]) AND o.object_type = ($21::text[])[1]
                     AND ($22::text = 'any'
                          OR (o.event_time_start IS NULL) = ($22::text = 'undated'))
                     AND (($17::timestamptz IS NULL AND $18::timestamptz IS NULL)
                          OR (CASE $19::text
                                WHEN 'event_time' THEN
                                    o.event_time_start IS NOT NULL
                                    AND tstzrange(o.event_time_start,
                                                  event_time_until(o.event_time_start,
                                                                   o.event_time_end,
                                                                   o.event_time_precision),
                                                  '[]')
                                        && tstzrange($17::timestamptz, $18::timestamptz, '[]')
                                WHEN 'review_generated_at' THEN
                                    ($17::timestamptz IS NULL OR o.review_generated_at >= $17)
                                    AND ($18::timestamptz IS NULL OR o.review_generated_at <= $18)
                                ELSE
                                    ($17::timestamptz IS NULL OR o.recorded_at >= $17)
                                    AND ($18::timestamptz IS NULL OR o.recorded_at <= $18)
                              END)))
           END AS total
    FROM copies o
    WHERE o.role = any($20::text[]) AND o.object_type = ($21::text[])[1]
      AND ($22::text = 'any'
           OR (o.event_time_start IS NULL) = ($22::text = 'undated'))
      AND (($17::timestamptz IS NULL AND $18::timestamptz IS NULL)
           OR (CASE $19::text
                 WHEN 'event_time' THEN
                     o.event_time_start IS NOT NULL
                     AND tstzrange(o.event_time_start,
                                   event_time_until(o.event_time_start,
                                                    o.event_time_end,
                                                    o.event_time_precision),
                                   '[]')
                         && tstzrange($17::timestamptz, $18::timestamptz, '[]')
                 WHEN 'review_generated_at' THEN
                     ($17::timestamptz IS NULL OR o.review_generated_at >= $17)
                     AND ($18::timestamptz IS NULL OR o.review_generated_at <= $18)
                 ELSE
                     ($17::timestamptz IS NULL OR o.recorded_at >= $17)
                     AND ($18::timestamptz IS NULL OR o.recorded_at <= $18)
               END))
      AND (o.event_time_start IS NULL,
           coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
           o.object_id COLLATE "C", o.result_id COLLATE "C")
          > ($23::boolean, $24::timestamptz, $25::smallint, $26::text COLLATE "C",
             $27::text COLLATE "C")
    ORDER BY o.event_time_start IS NULL,
             coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
             o.object_id COLLATE "C", o.result_id COLLATE "C"
    LIMIT $28
) s
UNION ALL
SELECT 2 AS part, row_number() OVER () AS n, s.*
FROM (
    WITH copies AS NOT MATERIALIZED (
        SELECT 'member'::text AS role,
               o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
               o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
               0::bigint AS graph_revision, o.cited_ids
        FROM context_members o
        WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
    )
    SELECT o.role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           o.graph_revision,
           CASE
               WHEN NOT $42::boolean THEN NULL
               WHEN $30::timestamptz IS NULL AND $31::timestamptz IS NULL
               THEN (SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
                     WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
                       AND n.role = 'member' AND 'member' = any($33::text[])
                       AND n.object_type = ($34::text[])[1]
                       AND ($35::text = 'any'
                            OR n.undated = ($35::text = 'undated')))
                    + (SELECT count(*) FROM graph_objects o
                       WHERE 'self' = any($33::text[])
                         AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                         AND o.object_type = ($34::text[])[1]
                         AND ($35::text = 'any'
                              OR (o.event_time_start IS NULL) = ($35::text = 'undated')))
               ELSE (
                   SELECT count(*) FROM copies o
                   WHERE o.role = any($33::text[]) AND o.object_type = ($34::text[])[1]
                     AND ($35::text = 'any'
                          OR (o.event_time_start IS NULL) = ($35::text = 'undated'))
                     AND (($30::timestamptz IS NULL AND $31::timestamptz IS NULL)
                          OR (CASE $32::text
                                WHEN 'event_time' THEN
                                    o.event_time_start IS NOT NULL
                                    AND tstzrange(o.event_time_start,
                                                  event_time_until(o.event_time_start,
                                                                   o.event_time_end,
                                                                   o.event_time_precision),
                                                  '[]')
                                        && tstzrange($30::timestamptz, $31::timestamptz, '[]')
                                WHEN 'review_generated_at' THEN
                                    ($30::timestamptz IS NULL OR o.review_generated_at >= $30)
                                    AND ($31::timestamptz IS NULL OR o.review_generated_at <= $31)
                                ELSE
                                    ($30::timestamptz IS NULL OR o.recorded_at >= $30)
                                    AND ($31::timestamptz IS NULL OR o.recorded_at <= $31)
                              END)))
           END AS total
    FROM copies o
    WHERE o.role = any($33::text[]) AND o.object_type = ($34::text[])[1]
      AND ($35::text = 'any'
           OR (o.event_time_start IS NULL) = ($35::text = 'undated'))
      AND (($30::timestamptz IS NULL AND $31::timestamptz IS NULL)
           OR (CASE $32::text
                 WHEN 'event_time' THEN
                     o.event_time_start IS NOT NULL
                     AND tstzrange(o.event_time_start,
                                   event_time_until(o.event_time_start,
                                                    o.event_time_end,
                                                    o.event_time_precision),
                                   '[]')
                         && tstzrange($30::timestamptz, $31::timestamptz, '[]')
                 WHEN 'review_generated_at' THEN
                     ($30::timestamptz IS NULL OR o.review_generated_at >= $30)
                     AND ($31::timestamptz IS NULL OR o.review_generated_at <= $31)
                 ELSE
                     ($30::timestamptz IS NULL OR o.recorded_at >= $30)
                     AND ($31::timestamptz IS NULL OR o.recorded_at <= $31)
               END))
      AND (o.event_time_start IS NULL,
           coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
           o.object_id COLLATE "C", o.result_id COLLATE "C")
          > ($36::boolean, $37::timestamptz, $38::smallint, $39::text COLLATE "C",
             $40::text COLLATE "C")
    ORDER BY o.event_time_start IS NULL,
             coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
             o.object_id COLLATE "C", o.result_id COLLATE "C"
    LIMIT $41
) s
UNION ALL
SELECT 3 AS part, row_number() OVER () AS n, s.*
FROM (
    WITH copies AS NOT MATERIALIZED (
        SELECT 'member'::text AS role,
               o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
               o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
               0::bigint AS graph_revision, o.cited_ids
        FROM context_members o
        WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
    )
    SELECT o.role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           o.graph_revision,
           CASE
               WHEN NOT $55::boolean THEN NULL
               WHEN $43::timestamptz IS NULL AND $44::timestamptz IS NULL
               THEN (SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
                     WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
                       AND n.role = 'member' AND 'member' = any($46::text[])
                       AND n.object_type = ($47::text[])[1]
                       AND ($48::text = 'any'
                            OR n.undated = ($48::text = 'undated')))
                    + (SELECT count(*) FROM graph_objects o
                       WHERE 'self' = any($46::text[])
                         AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                         AND o.object_type = ($47::text[])[1]
                         AND ($48::text = 'any'
                              OR (o.event_time_start IS NULL) = ($48::text = 'undated')))
               ELSE (
                   SELECT count(*) FROM copies o
                   WHERE o.role = any($46::text[]) AND o.object_type = ($47::text[])[1]
                     AND ($48::text = 'any'
                          OR (o.event_time_start IS NULL) = ($48::text = 'undated'))
                     AND (($43::timestamptz IS NULL AND $44::timestamptz IS NULL)
                          OR (CASE $45::text
                                WHEN 'event_time' THEN
                                    o.event_time_start IS NOT NULL
                                    AND tstzrange(o.event_time_start,
                                                  event_time_until(o.event_time_start,
                                                                   o.event_time_end,
                                                                   o.event_time_precision),
                                                  '[]')
                                        && tstzrange($43::timestamptz, $44::timestamptz, '[]')
                                WHEN 'review_generated_at' THEN
                                    ($43::timestamptz IS NULL OR o.review_generated_at >= $43)
                                    AND ($44::timestamptz IS NULL OR o.review_generated_at <= $44)
                                ELSE
                                    ($43::timestamptz IS NULL OR o.recorded_at >= $43)
                                    AND ($44::timestamptz IS NULL OR o.recorded_at <= $44)
                              END)))
           END AS total
    FROM copies o
    WHERE o.role = any($46::text[]) AND o.object_type = ($47::text[])[1]
      AND ($48::text = 'any'
           OR (o.event_time_start IS NULL) = ($48::text = 'undated'))
      AND (($43::timestamptz IS NULL AND $44::timestamptz IS NULL)
           OR (CASE $45::text
                 WHEN 'event_time' THEN
                     o.event_time_start IS NOT NULL
                     AND tstzrange(o.event_time_start,
                                   event_time_until(o.event_time_start,
                                                    o.event_time_end,
                                                    o.event_time_precision),
                                   '[]')
                         && tstzrange($43::timestamptz, $44::timestamptz, '[]')
                 WHEN 'review_generated_at' THEN
                     ($43::timestamptz IS NULL OR o.review_generated_at >= $43)
                     AND ($44::timestamptz IS NULL OR o.review_generated_at <= $44)
                 ELSE
                     ($43::timestamptz IS NULL OR o.recorded_at >= $43)
                     AND ($44::timestamptz IS NULL OR o.recorded_at <= $44)
               END))
      AND (o.event_time_start IS NULL,
           coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
           o.object_id COLLATE "C", o.result_id COLLATE "C")
          > ($49::boolean, $50::timestamptz, $51::smallint, $52::text COLLATE "C",
             $53::text COLLATE "C")
    ORDER BY o.event_time_start IS NULL,
             coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
             o.object_id COLLATE "C", o.result_id COLLATE "C"
    LIMIT $54
) s
UNION ALL
SELECT 4 AS part, row_number() OVER () AS n, s.*
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
               WHEN NOT $68::boolean THEN NULL
               WHEN $56::timestamptz IS NULL AND $57::timestamptz IS NULL
               THEN (SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
                     WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
                       AND n.role = 'member' AND 'member' = any($59::text[])
                       AND n.object_type = any($60::text[])
                       AND ($61::text = 'any'
                            OR n.undated = ($61::text = 'undated')))
                    + (SELECT count(*) FROM graph_objects o
                       WHERE 'self' = any($59::text[])
                         AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
                         AND o.object_type = any($60::text[])
                         AND ($61::text = 'any'
                              OR (o.event_time_start IS NULL) = ($61::text = 'undated')))
               ELSE (
                   SELECT count(*) FROM copies o
                   WHERE o.role = any($59::text[]) AND o.object_type = any($60::text[])
                     AND ($61::text = 'any'
                          OR (o.event_time_start IS NULL) = ($61::text = 'undated'))
                     AND (($56::timestamptz IS NULL AND $57::timestamptz IS NULL)
                          OR (CASE $58::text
                                WHEN 'event_time' THEN
                                    o.event_time_start IS NOT NULL
                                    AND tstzrange(o.event_time_start,
                                                  event_time_until(o.event_time_start,
                                                                   o.event_time_end,
                                                                   o.event_time_precision),
                                                  '[]')
                                        && tstzrange($56::timestamptz, $57::timestamptz, '[]')
                                WHEN 'review_generated_at' THEN
                                    ($56::timestamptz IS NULL OR o.review_generated_at >= $56)
                                    AND ($57::timestamptz IS NULL OR o.review_generated_at <= $57)
                                ELSE
                                    ($56::timestamptz IS NULL OR o.recorded_at >= $56)
                                    AND ($57::timestamptz IS NULL OR o.recorded_at <= $57)
                              END)))
           END AS total
    FROM copies o
    WHERE o.role = any($59::text[]) AND o.object_type = any($60::text[])
      AND ($61::text = 'any'
           OR (o.event_time_start IS NULL) = ($61::text = 'undated'))
      AND (($56::timestamptz IS NULL AND $57::timestamptz IS NULL)
           OR (CASE $58::text
                 WHEN 'event_time' THEN
                     o.event_time_start IS NOT NULL
                     AND tstzrange(o.event_time_start,
                                   event_time_until(o.event_time_start,
                                                    o.event_time_end,
                                                    o.event_time_precision),
                                   '[]')
                         && tstzrange($56::timestamptz, $57::timestamptz, '[]')
                 WHEN 'review_generated_at' THEN
                     ($56::timestamptz IS NULL OR o.review_generated_at >= $56)
                     AND ($57::timestamptz IS NULL OR o.review_generated_at <= $57)
                 ELSE
                     ($56::timestamptz IS NULL OR o.recorded_at >= $56)
                     AND ($57::timestamptz IS NULL OR o.recorded_at <= $57)
               END))
      AND (o.event_time_start IS NULL,
           coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
           o.object_id COLLATE "C", o.result_id COLLATE "C")
          > ($62::boolean, $63::timestamptz, $64::smallint, $65::text COLLATE "C",
             $66::text COLLATE "C")
    ORDER BY o.event_time_start IS NULL,
             coalesce(o.event_time_start, '0001-01-02 00:00:00+00'::timestamptz), o.type_rank,
             o.object_id COLLATE "C", o.result_id COLLATE "C"
    LIMIT $67
) s
UNION ALL
SELECT 5 AS part, row_number() OVER () AS n, s.*
FROM (
    SELECT 'cited'::text AS role, 'source_reference'::text AS object_type,
           c.source_id AS object_id, c.result_id, 0::smallint AS type_rank, NULL::text AS kind,
           NULL::timestamptz AS event_time_start, NULL::timestamptz AS event_time_end,
           NULL::text AS event_time_precision, c.review_generated_at, c.recorded_at,
           0::bigint AS graph_revision,
           CASE WHEN $72::boolean
                THEN (SELECT coalesce(sum(copies), 0)::bigint FROM context_counts
                      WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
                        AND role = 'cited') END AS total
    FROM context_citations c
    WHERE c.scope_key = $1 AND c.anchor_type = $2 AND c.anchor_id = $3
      AND (c.source_id COLLATE "C", c.result_id COLLATE "C")
          > ($69::text COLLATE "C", $70::text COLLATE "C")
    ORDER BY c.source_id COLLATE "C", c.result_id COLLATE "C"
    LIMIT $71
) s
UNION ALL
SELECT 6 AS part, row_number() OVER () AS n, s.*
FROM (
    SELECT 'self'::text AS role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           r.graph_revision, NULL::bigint AS total
    FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
    WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
) s
UNION ALL
SELECT 7 AS part, row_number() OVER () AS n, s.*
FROM (
    SELECT DISTINCT ON (o.object_id COLLATE "C") 'member'::text AS role,
           o.object_type, o.object_id, o.result_id, o.type_rank, o.kind, o.event_time_start,
           o.event_time_end, o.event_time_precision, o.review_generated_at, o.recorded_at,
           0::bigint AS graph_revision, NULL::bigint AS total
    FROM context_members o
    WHERE o.scope_key = $1 AND o.anchor_type = $2 AND o.anchor_id = $3
      AND o.object_type = 'event' AND o.kind = 'decision'
    ORDER BY o.object_id COLLATE "C", o.review_generated_at DESC, o.recorded_at DESC
    LIMIT $73
) s
ORDER BY part, n
