-- Search matches text case-insensitively, as ILIKE does: both sides lowered (lower(), the
-- database's collation), then LIKE. Lowering is most of the cost of a match: at 1M objects,
-- the title and body of the 13,415 copies in one week of event time took 15-25 ms to match
-- with ILIKE, 3.5-8 ms lowered once and matched with LIKE — and a search matches every copy
-- it walks or reads in a time range. So each copy keeps its title and body lowered, and a
-- search lowers its pattern once (graph_service.queries.SEARCH_OPENING). The trigram indexes
-- move to the lowered text: pg_trgm folds case itself, so they hold the same trigrams.
ALTER TABLE graph_objects
    ADD COLUMN title_folded text GENERATED ALWAYS AS (lower(title)) STORED,
    ADD COLUMN body_folded text GENERATED ALWAYS AS (lower(body)) STORED;

DROP INDEX graph_objects_title_trgm;
DROP INDEX graph_objects_body_trgm;
DROP INDEX graph_objects_summary_body_trgm;
-- fastupdate off, as before (0001): a pending list left by a large ingestion makes every
-- later search scan it until vacuum merges it.
CREATE INDEX graph_objects_title_trgm ON graph_objects
    USING gin (title_folded gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX graph_objects_body_trgm ON graph_objects
    USING gin (body_folded gin_trgm_ops) WITH (fastupdate = off);
CREATE INDEX graph_objects_summary_body_trgm ON graph_objects
    USING gin (body_folded gin_trgm_ops) WITH (fastupdate = off)
    WHERE object_type = 'summary';

-- The rewrite above left the table's visibility map empty: Search's walks read
-- graph_objects_scope_order index-only, and would visit the heap for every entry (at 1M
-- objects a walk within one month took 14 ms instead of 8) until the table is vacuumed.
-- after commit: VACUUM (ANALYZE) graph_objects
