-- T17 and T18: arbiter rulings, real-world actions in the effects ledger, and the layered
-- commitments and facts stated inside branches.

-- An arbiter's (司命) ruling on an action proposed at a node; immutable once recorded.
CREATE TABLE arbiter_rulings (
    id         uuid PRIMARY KEY,
    tree_id    uuid        NOT NULL REFERENCES trees (id),
    node_id    uuid        NOT NULL REFERENCES nodes (id),
    arbiter    text        NOT NULL,
    action     text        NOT NULL,
    allowed    boolean     NOT NULL,
    reason     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX arbiter_rulings_node ON arbiter_rulings (node_id);

-- The effects ledger gets what a real-world action records; a real-world action always names
-- its node, the real-experience main-line version holding that node, and the ruling that
-- allowed it.
ALTER TABLE effects
    ADD COLUMN node_id     uuid  REFERENCES nodes (id),
    ADD COLUMN ruling_id   uuid  REFERENCES arbiter_rulings (id),
    ADD COLUMN main_line_version_id uuid REFERENCES main_line_versions (id),
    ADD COLUMN tool        text  NOT NULL DEFAULT '',
    ADD COLUMN action      text  NOT NULL DEFAULT '',
    ADD COLUMN parameters  jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN recorded_by text  NOT NULL DEFAULT '',
    ADD CONSTRAINT effects_real_world_action_is_ruled
        CHECK (kind <> 'real_world_action'
               OR (node_id IS NOT NULL AND ruling_id IS NOT NULL
                   AND main_line_version_id IS NOT NULL));
CREATE INDEX effects_tree_order ON effects (tree_id, created_at, id);

-- Commitments and facts stated at a node. Their effect state is derived when read (from the
-- node's realm, confirmations, withdrawal and the main-line versions holding the node).
CREATE TABLE commitments (
    id           uuid PRIMARY KEY,
    tree_id      uuid        NOT NULL REFERENCES trees (id),
    node_id      uuid        NOT NULL REFERENCES nodes (id),
    kind         text        NOT NULL CHECK (kind IN (
                     'safety_stop', 'authorization', 'relationship', 'experience', 'stated_fact')),
    statement    text        NOT NULL,
    realm        text        NOT NULL,
    world        text,
    stated_by    text        NOT NULL,
    confirmed_by text,
    confirmed_at timestamptz,
    withdrawn_by text,
    withdrawn_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX commitments_tree_order ON commitments (tree_id, created_at, id);
CREATE INDEX commitments_live_stops ON commitments (tree_id)
    WHERE kind = 'safety_stop' AND withdrawn_at IS NULL;
