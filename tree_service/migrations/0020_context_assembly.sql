-- T11: caller-written versioned summaries of context subjects, recorded context versions, and
-- the context version an answer was generated from.

CREATE TABLE context_summaries (
    subject        text        NOT NULL,  -- node:<id>, tool:<id>:<i> or citation:<id>:<i>
    version        bigint      NOT NULL CHECK (version >= 1),
    tree_id        uuid        NOT NULL REFERENCES trees (id),
    node_id        uuid        NOT NULL REFERENCES nodes (id),
    text           text        NOT NULL,
    token_estimate bigint      NOT NULL DEFAULT 0 CHECK (token_estimate >= 0),
    written_by     text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (subject, version)
);

-- Every context handed out, item for item, so that a version reads back exactly as assembled.
CREATE TABLE context_versions (
    id           uuid PRIMARY KEY,
    tree_id      uuid        NOT NULL REFERENCES trees (id),
    node_id      uuid        NOT NULL REFERENCES nodes (id),
    budget       bigint      NOT NULL,
    token_budget bigint      NOT NULL DEFAULT 0,
    used         bigint      NOT NULL,
    used_tokens  bigint      NOT NULL,
    items        jsonb       NOT NULL,
    digest       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION refuse_context_version_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'context versions are immutable (version %)', OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER context_versions_immutable
    BEFORE UPDATE OR DELETE ON context_versions
    FOR EACH ROW EXECUTE FUNCTION refuse_context_version_rewrite();

ALTER TABLE nodes ADD COLUMN context_version_id uuid REFERENCES context_versions (id);
