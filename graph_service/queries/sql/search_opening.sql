-- Generated from graph_service/queries/templates/search_opening.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A search's opening: the scope's state, its LIKE pattern ($3) lowered as ILIKE lowers it,
-- and, within a closed time range ($4 to $5 on basis $6) of at most 366 days, at least as
-- many copies as the range holds (range_copies: the scope's copies filed under its days,
-- scope_days, migration 0037; NULL otherwise); and the first page's background: at most $8 (0
-- on a cursor's pages, which then read none) of the confirmed preferences of the scopes $7
-- whose subject or text holds the pattern, most recently updated first.

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
             coalesce(t.excluded_source_types, '{}') AS scope_excluded_source_types,
             -- Whether the scope linked any leaf fact (leaf_uses_linked): if not, the read of
             -- the leaves it linked is left out.
             EXISTS(SELECT 1 FROM leaf_uses WHERE scope_key = $1 AND linked) AS links_leaves,
             lower($3::text) AS folded_pattern,
             -- Matched as the copies' text is (lowered); a retracted preference (its subject
             -- `retracted`, its text the retraction: docs/tree-service.md) never.
             ARRAY(SELECT ROW(id, scope_key, subject, text, about, confirmed_by, revision,
                              updated_at)
                   FROM preferences
                   WHERE scope_key = any($7::text[]) AND subject <> 'retracted'
                     AND (lower(subject) LIKE lower($3::text) OR lower(text) LIKE lower($3::text))
                   ORDER BY updated_at DESC, id
                   LIMIT $8) AS background,
             -- (a copy touching several of the days counts for each: no more than the scope's)
             CASE WHEN day_number($5::timestamptz) - day_number($4::timestamptz) < 366 THEN
                 least(coalesce(t.copies, 0),
                       (SELECT coalesce(sum(d.copies), 0)::bigint
                        FROM scope_days d
                        WHERE d.scope_key = $1 AND d.basis = $6::text
                          AND d.day BETWEEN day_number($4) AND day_number($5))
                       -- the events longer than 64 days (migration 0017)
                       + coalesce((SELECT d.copies FROM scope_days d
                                   WHERE d.scope_key = $1 AND d.basis = $6::text
                                     AND d.day = -2147483648), 0))
             END AS range_copies
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
