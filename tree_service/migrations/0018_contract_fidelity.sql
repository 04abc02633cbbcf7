-- How a review result's coverage is known: its covered interval ('interval', the default and
-- what every earlier result claimed), counts only ('counts': a legacy import's numbers, which
-- imply no time or version coverage), or nothing ('unknown').
ALTER TABLE review_results
    ADD COLUMN coverage_basis text NOT NULL DEFAULT 'interval'
        CHECK (coverage_basis IN ('interval', 'counts', 'unknown')),
    ADD COLUMN coverage_counts jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD CONSTRAINT review_results_counts_have_no_interval
        CHECK (coverage_basis = 'interval' OR (covered_from IS NULL AND covered_to IS NULL));
