-- Generated from graph_service/queries/templates/search_unknown_time_count.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- A search's matches without an event time (in no event-time range), up to the cap $4.

SELECT count(*) FROM (
    SELECT 1 FROM graph_objects o
    WHERE o.scope_key = $1
      AND o.object_type = any($2::text[])
      AND (o.title_folded LIKE $3 OR o.body_folded LIKE $3)
      AND o.event_time_start IS NULL
    LIMIT $4) capped
