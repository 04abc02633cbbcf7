-- Ingestion stores new trigram entries in each index's pending list, merged into the index a
-- bounded batch at a time, instead of inserting every trigram of every copy into the index
-- one by one (which cost most of an ingestion's time). The list is kept small (256 kB, not
-- the default 4 MB), because every search through the index scans it: that is what made
-- 0001 turn the lists off (15 ms instead of 0.3 ms for a rare term after a large ingestion).
ALTER INDEX graph_objects_title_trgm SET (fastupdate = on, gin_pending_list_limit = 256);
ALTER INDEX graph_objects_body_trgm SET (fastupdate = on, gin_pending_list_limit = 256);
ALTER INDEX graph_objects_summary_body_trgm SET (fastupdate = on, gin_pending_list_limit = 256);
