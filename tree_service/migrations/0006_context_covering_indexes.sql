-- A context read walks X's neighbourhood: links into and out of X, the relations touching each
-- neighbour, the sources each one cites, and the ordering facts (times, type rank, kind) of
-- every copy it reaches — thousands of index probes for a hub entity. These covering versions
-- of the three indexes it probes answer them from the index alone (index-only scans: no heap
-- page per probe once vacuum has marked the pages all-visible, which replicates).
DROP INDEX graph_objects_ref;
CREATE INDEX graph_objects_ref ON graph_objects (object_type, object_id, scope_key)
    INCLUDE (result_id, type_rank, kind, event_time_start, event_time_end, review_generated_at,
             recorded_at);

DROP INDEX graph_links_to;
CREATE INDEX graph_links_to ON graph_links (scope_key, to_type, to_id)
    INCLUDE (from_type, from_id, link, result_id);

DROP INDEX graph_links_from;
CREATE INDEX graph_links_from ON graph_links (scope_key, from_type, from_id)
    INCLUDE (link, to_type, to_id, result_id);

-- Two narrower walks of the same read, each over a small part of the links: the relations
-- touching an object (also how validity is found), and the sources an object cites.
CREATE INDEX graph_links_relation_ends ON graph_links (scope_key, to_type, to_id)
    INCLUDE (from_id, link) WHERE from_type = 'relation';
CREATE INDEX graph_links_citations ON graph_links (scope_key, from_type, from_id)
    INCLUDE (to_id, result_id) WHERE link = 'cites';
