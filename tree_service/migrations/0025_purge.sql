-- T16: a purge removes an archived branch's content after an impact preview; what stays is a
-- tombstone per purge and per node, so that nothing which pointed at the branch dangles.
ALTER TABLE branches DROP CONSTRAINT branches_state_check;
ALTER TABLE branches ADD CONSTRAINT branches_state_check
    CHECK (state IN ('active', 'paused', 'concluded', 'archived', 'purged'));

CREATE TABLE purges (
    id uuid PRIMARY KEY,
    branch_id uuid NOT NULL UNIQUE REFERENCES nodes (id),  -- a branch is purged once
    tree_id uuid NOT NULL REFERENCES trees (id),
    preview_token text NOT NULL,
    purged_by text NOT NULL,
    reason text NOT NULL,
    purged_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    response bytea NOT NULL  -- what the purge answered, answered again to the same request
);

CREATE TABLE purged_nodes (
    node_id uuid PRIMARY KEY REFERENCES nodes (id),
    purge_id uuid NOT NULL REFERENCES purges (id),
    tree_id uuid NOT NULL REFERENCES trees (id)
);
CREATE INDEX purged_nodes_purge ON purged_nodes (purge_id);

-- Main-line versions and recorded contexts stay immutable, but for the one rewrite a purge
-- makes inside its own transaction (it names itself in `mirrortree.purge`): their content.
CREATE OR REPLACE FUNCTION refuse_main_line_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND coalesce(current_setting('mirrortree.purge', true), '') <> ''
       AND to_jsonb(NEW) - 'snapshot' = to_jsonb(OLD) - 'snapshot' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'main-line versions are immutable (version %)', OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;

CREATE OR REPLACE FUNCTION refuse_context_version_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND coalesce(current_setting('mirrortree.purge', true), '') <> ''
       AND to_jsonb(NEW) - 'items' = to_jsonb(OLD) - 'items' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'context versions are immutable (version %)', OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
