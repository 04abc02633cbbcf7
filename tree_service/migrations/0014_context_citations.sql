-- The sources a hub's context cites: every (source reference, result) that a copy of the hub
-- or one of its stored members cites, one row each, in the order a context read lists them
-- (reference id, then result id, by code point). Kept with context_members (see
-- mirrortree/neighbourhoods.py): a hub's first context read then reads its first sources and
-- their count from one index range, instead of gathering and ordering a thousand citations
-- from its members' cited ids. The times are the citing copies' result's (every copy of a
-- result has the same).
CREATE TABLE context_citations (
    scope_key           text        NOT NULL,
    anchor_type         text        NOT NULL,
    anchor_id           text        NOT NULL,
    source_id           text        NOT NULL,
    result_id           text        NOT NULL,
    review_generated_at timestamptz NOT NULL,
    recorded_at         timestamptz NOT NULL
);

CREATE UNIQUE INDEX context_citations_order ON context_citations (
    scope_key, anchor_type, anchor_id, source_id COLLATE "C", result_id COLLATE "C"
) INCLUDE (review_generated_at, recorded_at);

-- The hubs made before this table.
INSERT INTO context_citations
SELECT s.scope_key, s.anchor_type, s.anchor_id, c.id, s.result_id, s.review_generated_at,
       s.recorded_at
FROM (SELECT scope_key, anchor_type, anchor_id, result_id, cited_ids, review_generated_at,
             recorded_at
      FROM context_members
      UNION ALL
      SELECT h.scope_key, h.object_type, h.object_id, o.result_id, o.cited_ids,
             o.review_generated_at, o.recorded_at
      FROM context_hubs h
      JOIN graph_objects o
        ON o.scope_key = h.scope_key AND o.object_type = h.object_type
       AND o.object_id = h.object_id) s,
     unnest(s.cited_ids) AS c (id)
ON CONFLICT DO NOTHING;
