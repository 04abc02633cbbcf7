-- Generated from graph_service/queries/templates/scope_state.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- The scope's state in one row: counts, gaps, excluded source types, newest results ($1 scope, $2
-- results listed).

-- read_at: the commit time of the last transaction the replica had replayed (NULL when it has
-- replayed none since it started), read with the read's snapshot; now() on a primary.
SELECT s.*,
       CASE WHEN pg_is_in_recovery() THEN pg_last_xact_replay_timestamp() ELSE now() END
           AS read_at,
       c.*
-- The scope's figures (t), kept in scope_results as each result is recorded (a trigger:
-- migration 0036); none before its first result.
FROM (SELECT coalesce(t.results, 0) AS results, coalesce(t.revision, 0) AS revision,
             coalesce(t.copies, 0)::bigint AS copies,
             -- The gaps of the newest results that report any (review_results_reporting_gaps):
             -- each reports one at least, so the newest 51 of them hold the 51 listed.
             ARRAY(SELECT g.result_id || ': ' || gap
                   FROM (SELECT result_id, review_generated_at, coverage_gaps
                         FROM review_results
                         WHERE scope_key = $1 AND coverage_gaps <> '{}'
                         ORDER BY review_generated_at DESC, result_id
                         LIMIT 51) g,
                        unnest(g.coverage_gaps) WITH ORDINALITY AS u (gap, i)
                   ORDER BY g.review_generated_at DESC, g.result_id, u.i
                   LIMIT 51) AS scope_gaps,
             coalesce(t.excluded_source_types, '{}') AS scope_excluded_source_types
      FROM (SELECT $1::text AS scope_key) k LEFT JOIN scope_results t USING (scope_key)) s,
LATERAL (
    SELECT array_agg(x.result_id ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_result_id,
           array_agg(x.phase ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_phase,
           array_agg(x.covered_from ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_covered_from,
           array_agg(x.covered_to ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_covered_to,
           array_agg(x.review_generated_at ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_review_generated_at,
           array_agg(x.coverage_basis ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_basis,
           array_agg(x.coverage_counts::text ORDER BY x.review_generated_at DESC, x.result_id)
               AS covered_counts
    FROM (SELECT result_id, phase, covered_from, covered_to, review_generated_at,
                 coverage_basis, coverage_counts
          FROM review_results
          WHERE scope_key = $1
          ORDER BY review_generated_at DESC, result_id
          LIMIT $2) x
) c
