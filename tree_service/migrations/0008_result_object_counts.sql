-- How many object copies each review result stored. Summed over a scope's results, it is the
-- size of the scope without reading its objects: Search counts the matches of a term it found
-- common only in a small scope (see graph_service.search).
ALTER TABLE review_results ADD COLUMN object_count bigint;

UPDATE review_results r
SET object_count = coalesce(
    (SELECT count(*) FROM graph_objects o WHERE o.result_id = r.result_id), 0);

ALTER TABLE review_results ALTER COLUMN object_count SET NOT NULL;
