-- Generated from graph_service/queries/templates/context_opening.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A context read's opening: the scope's state, and what depends only on X ($3 type, $4 id) and
-- the scope.

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
             (SELECT ROW(count(*),
                         md5(coalesce(string_agg(id || ':' || revision, ',' ORDER BY id), '')))
              FROM preferences WHERE scope_key = any($5::text[])) AS preference_fingerprint,
             EXISTS(SELECT 1 FROM graph_objects
                    WHERE scope_key = $1 AND object_type = $3 AND object_id = $4) AS in_scope,
             EXISTS(SELECT 1 FROM context_hubs
                    WHERE scope_key = $1 AND object_type = $3 AND object_id = $4) AS is_hub,
             -- The scopes holding X, one index probe each (graph_objects_ref): the DISTINCT
             -- of every copy of X read them all, and an object recorded by every result of a
             -- scope has a copy per result.
             ARRAY(WITH RECURSIVE held (scope_key) AS (
                       (SELECT scope_key FROM graph_objects
                        WHERE object_type = $3 AND object_id = $4
                        ORDER BY scope_key LIMIT 1)
                       UNION ALL
                       SELECT (SELECT g.scope_key FROM graph_objects g
                               WHERE g.object_type = $3 AND g.object_id = $4
                                 AND g.scope_key > held.scope_key
                               ORDER BY g.scope_key LIMIT 1)
                       FROM held WHERE held.scope_key IS NOT NULL)
                   SELECT scope_key FROM held WHERE scope_key IS NOT NULL
                   LIMIT 20) AS object_scopes,
             -- The gaps reported by the results holding X, from X's copies in scope (each
             -- asked for its result's gaps), or, when X has more than 100 copies and the scope
             -- at most 1,000 results reporting gaps (review_results_reporting_gaps), from those
             -- results (each asked whether it holds a copy of X): an object recorded by every
             -- result of a scope has a copy per result.
             ARRAY(WITH copies AS MATERIALIZED (
                       SELECT 1 FROM graph_objects
                       WHERE scope_key = $1 AND object_type = $3 AND object_id = $4
                       LIMIT 101),
                   reporting AS MATERIALIZED (
                       SELECT result_id, coverage_gaps FROM review_results
                       WHERE (SELECT count(*) FROM copies) > 100
                         AND scope_key = $1 AND coverage_gaps <> '{}'
                       LIMIT 1001),
                   side AS MATERIALIZED (
                       SELECT (SELECT count(*) FROM copies) > 100
                              AND (SELECT count(*) FROM reporting) <= 1000 AS from_reporting)
                   SELECT unnest(g.coverage_gaps) AS gap
                   FROM reporting g
                   WHERE (SELECT from_reporting FROM side)
                     AND EXISTS (SELECT 1 FROM graph_objects o
                                 WHERE o.result_id = g.result_id AND o.object_type = $3
                                   AND o.object_id = $4)
                   UNION
                   SELECT unnest(r.coverage_gaps)
                   FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
                   WHERE NOT (SELECT from_reporting FROM side)
                     AND o.scope_key = $1 AND o.object_type = $3 AND o.object_id = $4
                   ORDER BY gap LIMIT 21) AS history_gaps,
             ARRAY(SELECT ROW(o.object_id, o.result_id)
                   FROM graph_links l
                   JOIN graph_objects o
                     ON o.result_id = l.result_id AND o.object_type = 'entity_change'
                    AND o.object_id = l.from_id
                   WHERE $7 AND l.scope_key = $1 AND l.to_type = $3 AND l.to_id = $4
                     AND l.from_type = 'entity_change' AND l.link IN ('during', 'changes')
                     AND o.kind = 'completed'
                   ORDER BY o.object_id, o.result_id
                   LIMIT 20) AS completion,
             ARRAY(SELECT ROW(id, scope_key, subject, text, about, confirmed_by, revision,
                              updated_at)
                   FROM preferences WHERE scope_key = any($5::text[])
                   ORDER BY id LIMIT $6) AS first_preferences
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
