-- A context read walks X's neighbourhood: links into and out of X, the relations touching each
-- neighbour, and the ordering facts (times, type rank, kind) and cited sources of every copy
-- it reaches — thousands of index probes for a hub entity. Covering indexes answer them from
-- the index alone (index-only scans: no heap page per probe once vacuum has marked the pages
-- all-visible, which replicates).

-- The sources each copy cites (its 'cites' links), kept on the copy as well, so the walk reads
-- them with the copy's ordering facts instead of probing the links once more per copy.
ALTER TABLE graph_objects ADD COLUMN cited_ids text[] NOT NULL DEFAULT '{}';
UPDATE graph_objects o SET cited_ids = l.ids
FROM (
    SELECT result_id, from_type, from_id, array_agg(to_id ORDER BY to_id) AS ids
    FROM graph_links WHERE link = 'cites'
    GROUP BY result_id, from_type, from_id
) l
WHERE o.result_id = l.result_id AND o.object_type = l.from_type AND o.object_id = l.from_id;

DROP INDEX graph_objects_ref;
CREATE INDEX graph_objects_ref ON graph_objects (object_type, object_id, scope_key)
    INCLUDE (result_id, type_rank, kind, event_time_start, event_time_end, review_generated_at,
             recorded_at, cited_ids);

DROP INDEX graph_links_to;
CREATE INDEX graph_links_to ON graph_links (scope_key, to_type, to_id)
    INCLUDE (from_type, from_id, link, result_id);

DROP INDEX graph_links_from;
CREATE INDEX graph_links_from ON graph_links (scope_key, from_type, from_id)
    INCLUDE (link, to_type, to_id, result_id);

-- The relations touching an object (how the walk and validity find them): a small part of the
-- links, in an index of its own.
CREATE INDEX graph_links_relation_ends ON graph_links (scope_key, to_type, to_id)
    INCLUDE (from_id, link) WHERE from_type = 'relation';
