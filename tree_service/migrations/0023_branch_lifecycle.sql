-- Answer lifecycle reads ask "is this node in any main-line version?" per node.
CREATE INDEX main_line_versions_node_ids ON main_line_versions USING gin (node_ids);

-- A branch is the subtree under a node; it gets a row at its first transition (until then it
-- is active at revision 1), so that every state change is revisioned and on record.
CREATE TABLE branches (
    node_id uuid PRIMARY KEY REFERENCES nodes (id),
    tree_id uuid NOT NULL REFERENCES trees (id),
    state text NOT NULL CHECK (state IN ('active', 'paused', 'concluded', 'archived')),
    revision bigint NOT NULL CHECK (revision >= 1),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX branches_tree ON branches (tree_id, state);

CREATE TABLE branch_transitions (
    node_id uuid NOT NULL REFERENCES branches (node_id),
    revision bigint NOT NULL,  -- the branch's revision this transition produced
    from_state text NOT NULL,
    to_state text NOT NULL,
    changed_by text NOT NULL,
    reason text NOT NULL DEFAULT '',
    summary text,  -- conclusions only
    open_branch_ids uuid[],
    candidate_ids uuid[],
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (node_id, revision),
    CHECK ((to_state = 'concluded') = (summary IS NOT NULL))
);

-- T14: a tree transplanted from a branch, with its origin. The source has no foreign key on
-- purpose: the origin stays on record whatever later happens to the source.
CREATE TABLE transplants (
    tree_id uuid PRIMARY KEY REFERENCES trees (id),
    source_tree_id uuid NOT NULL,
    source_node_id uuid NOT NULL,
    source_tree_revision bigint NOT NULL,
    ancestor_path jsonb NOT NULL,  -- the source path above the branch, as it was
    copies jsonb NOT NULL,  -- source node id -> its copy's id
    transplanted_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX transplants_source ON transplants (source_node_id);
