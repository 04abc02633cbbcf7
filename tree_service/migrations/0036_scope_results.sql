-- What every read of a scope opens with: how many results it holds, its newest graph revision,
-- how many object copies they recorded and the source types they left out. The openings
-- counted and summed every result of the scope on each read, and sorted them all to list the
-- newest: 0.9 ms with 200 results, 2.3 ms with 3,000, 30 ms with 30,000 — a scope of small
-- results passed the reads' target on its opening alone. The database now keeps these figures
-- per scope as each result is inserted, whoever inserts it (a tree_service of an earlier build
-- still serving during an upgrade, too), and the newest results come from an index, so an
-- opening costs the same whatever the number of results. Results are never updated or deleted
-- (the story graph only grows), so inserting is all there is to follow.
CREATE TABLE scope_results (
    scope_key             text PRIMARY KEY,
    results               bigint NOT NULL,
    revision              bigint NOT NULL,
    copies                bigint NOT NULL,
    -- Every source type a result of the scope excluded, sorted, each once.
    excluded_source_types text[] NOT NULL
);

-- Counted under a lock that holds off new results, so that none commits between the count
-- and the trigger.
LOCK TABLE review_results IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO scope_results (scope_key, results, revision, copies, excluded_source_types)
SELECT r.scope_key, count(*), max(r.graph_revision), sum(r.object_count),
       ARRAY(SELECT DISTINCT t
             FROM review_results x, unnest(x.excluded_source_types) t
             WHERE x.scope_key = r.scope_key
             ORDER BY t)
FROM review_results r
GROUP BY r.scope_key;

CREATE FUNCTION count_scope_result() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO scope_results AS s (scope_key, results, revision, copies, excluded_source_types)
    VALUES (NEW.scope_key, 1, NEW.graph_revision, NEW.object_count,
            ARRAY(SELECT DISTINCT t FROM unnest(NEW.excluded_source_types) t ORDER BY t))
    ON CONFLICT (scope_key) DO UPDATE
    SET results = s.results + 1,
        revision = greatest(s.revision, excluded.revision),
        copies = s.copies + excluded.copies,
        excluded_source_types = ARRAY(
            SELECT DISTINCT t
            FROM unnest(s.excluded_source_types || excluded.excluded_source_types) t
            ORDER BY t);
    RETURN NULL;
END
$$;

CREATE TRIGGER review_results_counted AFTER INSERT ON review_results
    FOR EACH ROW EXECUTE FUNCTION count_scope_result();

CREATE INDEX review_results_newest ON review_results (scope_key, review_generated_at DESC, result_id);
