-- Every story-graph read reports the coverage gaps and excluded source types of all results in
-- its scope (the newest results are listed with their own). Few results report any: this
-- index holds only those, so the read does not go through every result of a long-lived scope
-- (0.15 ms a list at 200 results, on every read).
CREATE INDEX review_results_reporting_gaps
    ON review_results (scope_key, review_generated_at DESC, result_id)
    WHERE coverage_gaps <> '{}' OR excluded_source_types <> '{}';
