-- Search reads a relevance tier by walking graph_objects_scope_order in result order (see
-- graph_service.search). With the filter columns included, the walk applies the type and time
-- filters to index entries alone (index-only) and visits the heap only for the copies that
-- pass them, to match the text: a search within one month reads one month's copies, not all.
DROP INDEX graph_objects_scope_order;
CREATE INDEX graph_objects_scope_order
    ON graph_objects (scope_key, type_rank, object_id, result_id)
    INCLUDE (object_type, event_time_start, event_time_end, review_generated_at, recorded_at);

-- When the text is rare, the trigram indexes find it; an event's time is the closed interval
-- [start, coalesce(end, start)], and a GiST index over it lets the planner intersect a time
-- filter with them (BitmapAnd) instead of rechecking every text match's time on the heap. The
-- constraint (RecordReview already refuses such input) keeps every stored interval a range.
ALTER TABLE graph_objects ADD CONSTRAINT graph_objects_event_time_order
    CHECK (event_time_end IS NULL OR event_time_end >= event_time_start);

CREATE INDEX graph_objects_event_time ON graph_objects
    USING gist (tstzrange(event_time_start, coalesce(event_time_end, event_time_start), '[]'))
    WHERE event_time_start IS NOT NULL;
