-- tree_service analyzes the scope column of the graph tables when a scope outgrows what the
-- planner knows of it (tree_service.ingestion.statistics). It serves as mirrortree_writer,
-- which may not ANALYZE tables it does not own (PostgreSQL before 17 has no MAINTAIN
-- privilege), so the owner lends it exactly that, and nothing else.
CREATE FUNCTION refresh_graph_statistics() RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp
AS $$ ANALYZE graph_objects (scope_key), graph_links (scope_key) $$;

REVOKE EXECUTE ON FUNCTION refresh_graph_statistics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION refresh_graph_statistics() TO mirrortree_writer;
