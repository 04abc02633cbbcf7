-- Whose is each record a request can name: the id of every record a tree owns, with its tree.
-- A caller limited to some owners is refused a request naming another owner's record of any
-- kind (tree_service/ownership.py), through this one view rather than a list of tables kept
-- in code; tests hold it to the registry there and to the catalog, so a new table whose ids
-- travel in requests is added here or the suite fails.
CREATE VIEW owned_records (id, tree_id) AS
    SELECT id, id FROM trees
    UNION ALL SELECT id, tree_id FROM nodes
    UNION ALL SELECT id, tree_id FROM main_line_versions
    UNION ALL SELECT c.id, v.tree_id
              FROM canon_candidates c JOIN main_line_versions v ON v.id = c.version_id
    UNION ALL SELECT id, tree_id FROM canon_invitations
    UNION ALL SELECT id, tree_id FROM arbiter_rulings
    UNION ALL SELECT id, tree_id FROM commitments
    UNION ALL SELECT id, tree_id FROM context_versions
    UNION ALL SELECT id, tree_id FROM citation_authorizations
    UNION ALL SELECT id, tree_id FROM estimates
    UNION ALL SELECT id, tree_id FROM tasks;
