-- The evidenced relations touching an object (validity, on every page of Search and
-- GetContext) are joined to their relation's copy by result id. graph_links_relation_ends did
-- not hold the result id, so PostgreSQL read them through graph_links_to instead, filtering
-- every link of the object: about a thousand for an entity many events mention, 0.3 ms each.
-- With the result id included, they are an index-only scan of the relation links alone.
DROP INDEX graph_links_relation_ends;
CREATE INDEX graph_links_relation_ends ON graph_links (scope_key, to_type, to_id)
    INCLUDE (from_id, link, result_id) WHERE from_type = 'relation';
