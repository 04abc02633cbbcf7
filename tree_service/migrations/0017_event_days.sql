-- Search within an event-time range reads the range's matches through the trigram indexes
-- ANDed with the event-time index. For a term in 1 of 20 copies, each trigram index gave
-- 33,000 entries, 8-9 ms each at 1M objects, to keep the 682 that lie in one week. So each
-- copy now keeps the days its event time touches (event_days), and the trigram indexes hold
-- them as their first column: within a range, a trigram index yields only the entries of the
-- range's days, and the exact range rule is checked on those alone
-- (graph_service.queries.RANGE_DAY_TEXT_SCANS). Without a range the indexes serve the text
-- alone, as before: GIN reads only the entries of the columns a condition names.
--
-- A day is numbered from the epoch: floor(seconds since 1970-01-01 UTC / 86,400). An epoch
-- is the same in every time zone, so these functions are immutable.

-- The days of the closed interval from `from_at` to `until_at`, in order.
CREATE FUNCTION days_between(from_at timestamptz, until_at timestamptz)
RETURNS int[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
    SELECT generate_series(floor(extract(epoch FROM from_at) / 86400)::int,
                           floor(extract(epoch FROM until_at) / 86400)::int));

-- The days an event's time (its interval, widened by its precision: event_time_until)
-- touches; NULL when its time is unknown. An event that touches more than 64 days is filed
-- under a single number no day has instead (-2147483648: PostgreSQL's earliest timestamp is
-- in day -2,440,588), which every range's days include (range_days): a month-precision event
-- lists its 28-31 days, a year would list 365.
CREATE FUNCTION event_time_days(start_at timestamptz, end_at timestamptz, time_precision text)
RETURNS int[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN start_at IS NULL THEN NULL
    WHEN floor(extract(epoch FROM event_time_until(start_at, end_at, time_precision)) / 86400)
         - floor(extract(epoch FROM start_at) / 86400) >= 64 THEN ARRAY[(-2147483648)::int]
    ELSE days_between(start_at, event_time_until(start_at, end_at, time_precision))
END;

-- The days an event in the closed range from `from_at` to `until_at` may be filed under:
-- every day of the range, and the long events' number.
CREATE FUNCTION range_days(from_at timestamptz, until_at timestamptz)
RETURNS int[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN days_between(from_at, until_at) || (-2147483648)::int;

-- The old indexes go first, so that the rewrite below does not rebuild them.
DROP INDEX graph_objects_title_trgm;
DROP INDEX graph_objects_body_trgm;

-- Stored, not an expression of the index: a trigram match must be rechecked on the copy, and
-- the recheck would compute the days again for every candidate (measured with weeks: 7 ms for
-- 2,000 candidates).
ALTER TABLE graph_objects
    ADD COLUMN event_days int[] GENERATED ALWAYS AS (
        event_time_days(event_time_start, event_time_end, event_time_precision)) STORED;

-- fastupdate off, as before (0001).
CREATE INDEX graph_objects_title_trgm ON graph_objects
    USING gin (event_days, title_folded gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX graph_objects_body_trgm ON graph_objects
    USING gin (event_days, body_folded gin_trgm_ops) WITH (fastupdate = off);

-- The rewrite left the visibility map empty (as in 0016).
-- after commit: VACUUM (ANALYZE) graph_objects
