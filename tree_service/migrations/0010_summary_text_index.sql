-- A summary's text weighs like a title in Search (a match there ranks with title matches,
-- tier 2, not with descriptions, tier 1). When a tier's matches are rare, Search finds them
-- through the trigram indexes: tier 2 through the title index and this one, which holds the
-- summaries' text alone — small, so the tier never reads every description that matches.
CREATE INDEX graph_objects_summary_body_trgm ON graph_objects
    USING gin (body gin_trgm_ops) WITH (fastupdate = off)
    WHERE object_type = 'summary';
