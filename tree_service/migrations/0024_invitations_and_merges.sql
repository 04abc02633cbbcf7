-- T10: the system's invitation to canonicalize a key node; only the user's Canonicalize
-- (accepting it) or decline decides it.
CREATE TABLE canon_invitations (
    id uuid PRIMARY KEY,
    position bigserial UNIQUE,  -- listing order
    tree_id uuid NOT NULL REFERENCES trees (id),
    node_id uuid NOT NULL REFERENCES nodes (id),
    reason text NOT NULL,
    proposed_by text NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'accepted', 'declined')),
    decided_by text,
    decision_reason text NOT NULL DEFAULT '',
    decided_at timestamptz,
    version_id uuid REFERENCES main_line_versions (id),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((state = 'accepted') = (version_id IS NOT NULL)),
    CHECK ((state = 'pending') = (decided_by IS NULL))
);
-- One open invitation per node: a second would only repeat the first.
CREATE UNIQUE INDEX canon_invitations_one_pending ON canon_invitations (node_id)
    WHERE state = 'pending';
CREATE INDEX canon_invitations_tree ON canon_invitations (tree_id, position);

-- T22: canon candidates reviewed by the user, revisioned, with who and why.
ALTER TABLE canon_candidates
    ADD COLUMN revision bigint NOT NULL DEFAULT 1,
    ADD COLUMN reviewed_by text,
    ADD COLUMN review_reason text NOT NULL DEFAULT '',
    ADD COLUMN reviewed_at timestamptz,
    ADD CONSTRAINT canon_candidates_reviewed CHECK ((status = 'pending') = (reviewed_by IS NULL));

-- T15: a question of a target tree merging source nodes of another tree by reference. The
-- source has no foreign key on purpose: the reference outlives the source it names.
CREATE TABLE merge_references (
    question_id uuid NOT NULL REFERENCES nodes (id),
    position int NOT NULL,
    tree_id uuid NOT NULL REFERENCES trees (id),
    source_node_id uuid NOT NULL,
    source_tree_id uuid NOT NULL,
    merged_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (question_id, position)
);
CREATE INDEX merge_references_source ON merge_references (source_node_id);
