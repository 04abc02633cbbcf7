-- What every read of a scope opens with: how many results it holds, its newest graph revision,
-- how many object copies they recorded and the source types they left out. The openings
-- counted and summed every result of the scope on each read, and sorted them all to list the
-- newest: 0.9 ms with 200 results, 2.6 ms with 3,000, 45 ms with 30,000 — a scope of small
-- results passed the reads' target on its opening alone. RecordReview now keeps these figures
-- per scope in the statement that records the result, and the newest results come from an
-- index, so an opening costs the same whatever the number of results.
CREATE TABLE scope_results (
    scope_key             text PRIMARY KEY,
    results               bigint NOT NULL,
    revision              bigint NOT NULL,
    copies                bigint NOT NULL,
    -- Every source type a result of the scope excluded, sorted, each once.
    excluded_source_types text[] NOT NULL
);

INSERT INTO scope_results (scope_key, results, revision, copies, excluded_source_types)
SELECT r.scope_key, count(*), max(r.graph_revision), sum(r.object_count),
       ARRAY(SELECT DISTINCT t
             FROM review_results x, unnest(x.excluded_source_types) t
             WHERE x.scope_key = r.scope_key
             ORDER BY t)
FROM review_results r
GROUP BY r.scope_key;

CREATE INDEX review_results_newest ON review_results (scope_key, review_generated_at DESC, result_id);
