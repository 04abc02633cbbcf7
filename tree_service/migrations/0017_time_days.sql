-- Search within a time range reads the range's matches through the trigram indexes ANDed
-- with the range's own: the event-time index, or the primary key's range of each result in
-- range. For a term in 1 of 20 copies, each trigram index gave 33,000 entries, 8-9 ms each at
-- 1M objects, to keep the 682 that lie in one week of event time. So each copy now keeps the
-- days of its times — those its event time touches (event_days), the day of its result's
-- review (review_days) and of its recording (recorded_days) — and the trigram indexes hold
-- them as their first columns: within a range, a trigram index yields only the entries filed
-- under the range's days, and the exact range rule is checked on those alone
-- (graph_service.queries.RANGE_DAY_TEXT_SCANS). Without a range the indexes serve the text
-- alone, as before: GIN reads only the entries of the columns a condition names.
--
-- A day is numbered from the epoch: floor(seconds since 1970-01-01 UTC / 86,400). An epoch
-- is the same in every time zone, so these functions are immutable.

-- Computed for every copy stored: as plain SQL with a subquery, the event's days cost 29 µs a
-- copy at 1M objects (each call runs a query); in PL/pgSQL, 2.7 µs.

-- The number of the day `at` lies in.
CREATE FUNCTION day_number(at timestamptz)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN floor(extract(epoch FROM at) / 86400)::int;

-- The days of the closed interval from `from_at` to `until_at`, in order.
CREATE FUNCTION days_between(from_at timestamptz, until_at timestamptz)
RETURNS int[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    days int[] := '{}';
BEGIN
    FOR day IN day_number(from_at)..day_number(until_at) LOOP
        days := days || day;
    END LOOP;
    RETURN days;
END
$$;

-- The days an event's time (its interval, widened by its precision: event_time_until)
-- touches; NULL when its time is unknown. An event that touches more than 64 days is filed
-- under a single number no day has instead (-2147483648: PostgreSQL's earliest timestamp is
-- in day -2,440,588), which every range's days include (range_days): a month-precision event
-- lists its 28-31 days, a year would list 365.
CREATE FUNCTION event_time_days(start_at timestamptz, end_at timestamptz, time_precision text)
RETURNS int[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    until_at timestamptz;
BEGIN
    IF start_at IS NULL THEN
        RETURN NULL;
    END IF;
    until_at := event_time_until(start_at, end_at, time_precision);
    IF day_number(until_at) - day_number(start_at) >= 64 THEN
        RETURN ARRAY[(-2147483648)::int];
    END IF;
    RETURN days_between(start_at, until_at);
END
$$;

-- The days a copy in the closed range from `from_at` to `until_at` may be filed under: every
-- day of the range, and the long events' number.
CREATE FUNCTION range_days(from_at timestamptz, until_at timestamptz)
RETURNS int[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN days_between(from_at, until_at) || (-2147483648)::int;

-- The old indexes go first, so that the rewrite below does not rebuild them.
DROP INDEX graph_objects_title_trgm;
DROP INDEX graph_objects_body_trgm;

-- Stored, not expressions of the index: a trigram match must be rechecked on the copy, and
-- the recheck would compute the days again for every candidate (measured with weeks of event
-- time: 7 ms for 2,000 candidates).
ALTER TABLE graph_objects
    ADD COLUMN event_days int[] GENERATED ALWAYS AS (
        event_time_days(event_time_start, event_time_end, event_time_precision)) STORED,
    ADD COLUMN review_days int[] GENERATED ALWAYS AS (
        ARRAY[day_number(review_generated_at)]) STORED,
    ADD COLUMN recorded_days int[] GENERATED ALWAYS AS (ARRAY[day_number(recorded_at)]) STORED;

-- fastupdate off, as before (0001).
CREATE INDEX graph_objects_title_trgm ON graph_objects
    USING gin (event_days, review_days, recorded_days, title_folded gin_trgm_ops)
    WITH (fastupdate = off);
CREATE INDEX graph_objects_body_trgm ON graph_objects
    USING gin (event_days, review_days, recorded_days, body_folded gin_trgm_ops)
    WITH (fastupdate = off);

-- The rewrite left the visibility map empty (as in 0016).
-- after commit: VACUUM (ANALYZE) graph_objects
