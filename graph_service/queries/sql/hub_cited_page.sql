-- Generated from graph_service/queries/templates/hub_cited_page.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A hub's next page of the sources its context cites.

SELECT 0 AS part, row_number() OVER () AS n, s.*
FROM (
    SELECT 'cited'::text AS role, 'source_reference'::text AS object_type,
           c.source_id AS object_id, c.result_id, 0::smallint AS type_rank, NULL::text AS kind,
           NULL::timestamptz AS event_time_start, NULL::timestamptz AS event_time_end,
           NULL::text AS event_time_precision, c.review_generated_at, c.recorded_at,
           0::bigint AS graph_revision,
           CASE WHEN $7::boolean
                THEN (SELECT coalesce(sum(copies), 0)::bigint FROM context_counts
                      WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
                        AND role = 'cited') END AS total
    FROM context_citations c
    WHERE c.scope_key = $1 AND c.anchor_type = $2 AND c.anchor_id = $3
      AND (c.source_id COLLATE "C", c.result_id COLLATE "C")
          > ($4::text COLLATE "C", $5::text COLLATE "C")
    ORDER BY c.source_id COLLATE "C", c.result_id COLLATE "C"
    LIMIT $6
) s
ORDER BY part, n
