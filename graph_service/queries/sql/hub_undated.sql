-- Generated from graph_service/queries/templates/hub_undated.sql.j2 by scripts/gen_sql.py; do not edit by hand.
-- How many of a hub's evidence copies of roles $4 have no event time.

SELECT (SELECT coalesce(sum(n.copies), 0)::bigint FROM context_counts n
        WHERE n.scope_key = $1 AND n.anchor_type = $2 AND n.anchor_id = $3
          AND n.role = 'member' AND 'member' = any($4::text[])
          AND n.object_type IN ('event', 'entity_change', 'relation', 'leaf_fact')
          AND n.undated)
       + (SELECT count(*) FROM graph_objects o
          WHERE 'self' = any($4::text[])
            AND o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
            AND o.object_type IN ('event', 'entity_change', 'relation', 'leaf_fact')
            AND (o.event_time_start IS NULL))
