-- How many copies each scope holds per day of each time basis, so that a search within a
-- short closed time range knows before it reads anything whether the range is small enough to
-- be read whole (graph_service.search.RangeRead). It learnt that by walking the ordered index
-- first (1.3 ms at a million objects), then read the range anyway. Kept, like scope_results
-- (0036), by the database as copies are inserted, whoever inserts them. Copies are never
-- deleted and their times never change (a purge rewrites text only), so inserting is all
-- there is to follow.
--
-- A copy counts once under each day it is filed under in the trigram indexes (0017): on
-- event_time every day its event's time touches, or the long events' number; on
-- review_generated_at and recorded_at the one day. The sum over a range's days (range_days)
-- is therefore at least the copies the range holds: a copy touching several counts for each.
CREATE TABLE scope_days (
    scope_key text NOT NULL,
    basis     text NOT NULL CHECK (basis IN ('event_time', 'review_generated_at', 'recorded_at')),
    day       int NOT NULL,
    copies    bigint NOT NULL,
    PRIMARY KEY (scope_key, basis, day)
);

-- Counted under a lock that holds off new copies, so that none commits between the count and
-- the trigger.
LOCK TABLE graph_objects IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO scope_days (scope_key, basis, day, copies)
SELECT d.scope_key, d.basis, d.day, count(*)
FROM (SELECT scope_key, 'event_time' AS basis, unnest(event_days) AS day FROM graph_objects
      UNION ALL
      SELECT scope_key, 'review_generated_at', unnest(review_days) FROM graph_objects
      UNION ALL
      SELECT scope_key, 'recorded_at', unnest(recorded_days) FROM graph_objects) d
GROUP BY d.scope_key, d.basis, d.day;

-- Once per statement: a result's copies come in one COPY, whose days fall on a few rows here
-- (under a millisecond for 300 copies; the grouping above, over the statement's copies —
-- through a shared set-returning function it took twice as long).
CREATE FUNCTION count_scope_days() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO scope_days AS s (scope_key, basis, day, copies)
    SELECT d.scope_key, d.basis, d.day, count(*)
    FROM (SELECT scope_key, 'event_time' AS basis, unnest(event_days) AS day FROM added
          UNION ALL
          SELECT scope_key, 'review_generated_at', unnest(review_days) FROM added
          UNION ALL
          SELECT scope_key, 'recorded_at', unnest(recorded_days) FROM added) d
    GROUP BY d.scope_key, d.basis, d.day
    ORDER BY d.scope_key, d.basis, d.day  -- one order for every writer: no deadlock
    ON CONFLICT (scope_key, basis, day) DO UPDATE SET copies = s.copies + excluded.copies;
    RETURN NULL;
END
$$;

CREATE TRIGGER graph_objects_days_counted AFTER INSERT ON graph_objects
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION count_scope_days();
