-- A hub's collection pages (graph_service.context.StoredNeighbourhood) in evidence order:
-- event time (unknown last, all unknowns equal), type rank, stable id, result id, text by
-- code point. A first page of a thousand events is then the first entries of the hub's range
-- for that type, not a sort of all of them; the rest of a member's columns ride along, so the
-- page is read index-only.
CREATE INDEX context_members_evidence_order ON context_members (
    scope_key, anchor_type, anchor_id, object_type,
    (event_time_start IS NULL),
    (coalesce(event_time_start, '0001-01-02 00:00:00+00'::timestamptz)),
    type_rank, object_id COLLATE "C", result_id COLLATE "C"
) INCLUDE (kind, event_time_start, event_time_end, event_time_precision, review_generated_at,
           recorded_at);
