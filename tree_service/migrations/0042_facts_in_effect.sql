-- T18 and T24 read where they hold: context assembly reads the facts stated in the trees of a
-- project (and its memory layer would otherwise scan every tree), and the projection of a
-- canonicalization reads the commitments stated at the version's nodes (a purge's clearing of
-- them by node, too).
CREATE INDEX trees_project ON trees (project_id) WHERE project_id IS NOT NULL;
CREATE INDEX commitments_node ON commitments (node_id);
