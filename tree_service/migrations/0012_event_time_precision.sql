-- An event time's precision widens it: an event dated "January 2026" (start 2026-01-01,
-- precision month) may lie anywhere in that month, so it must meet a range inside
-- mid-January. The latest instant an event may lie at is its end (or start) plus its
-- precision's period, less a microsecond; periods are counted in UTC. Immutable, so the
-- event-time index holds the widened interval; the covering indexes that filter and page
-- event times index-only hold the precision too.
CREATE FUNCTION event_time_until(start_at timestamptz, end_at timestamptz, time_precision text)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN time_precision IN ('minute', 'hour', 'day', 'month', 'year') THEN
        ((coalesce(end_at, start_at) AT TIME ZONE 'UTC')
         + CASE time_precision
               WHEN 'minute' THEN interval '1 minute'
               WHEN 'hour' THEN interval '1 hour'
               WHEN 'day' THEN interval '1 day'
               WHEN 'month' THEN interval '1 month'
               ELSE interval '1 year'
           END
         - interval '1 microsecond') AT TIME ZONE 'UTC'
    ELSE coalesce(end_at, start_at)
END;

DROP INDEX graph_objects_event_time;
CREATE INDEX graph_objects_event_time ON graph_objects
    USING gist (tstzrange(event_time_start,
                          event_time_until(event_time_start, event_time_end, event_time_precision),
                          '[]'))
    WHERE event_time_start IS NOT NULL;

DROP INDEX graph_objects_scope_order;
CREATE INDEX graph_objects_scope_order
    ON graph_objects (scope_key, type_rank, object_id, result_id)
    INCLUDE (object_type, event_time_start, event_time_end, event_time_precision,
             review_generated_at, recorded_at);

DROP INDEX graph_objects_ref;
CREATE INDEX graph_objects_ref ON graph_objects (object_type, object_id, scope_key)
    INCLUDE (result_id, type_rank, kind, event_time_start, event_time_end, event_time_precision,
             review_generated_at, recorded_at, cited_ids);
