-- The mirror tree's write model: question versions, candidate answers and buds, continuations,
-- adoption, canonical main lines with their candidates, and every node as a story-graph
-- source with revisions.

ALTER TABLE trees ADD COLUMN default_world text;

ALTER TABLE nodes
    ADD COLUMN world             text,
    ADD COLUMN conditions        jsonb  NOT NULL DEFAULT '{}',
    ADD COLUMN attachments       jsonb  NOT NULL DEFAULT '[]',
    ADD COLUMN citations         jsonb  NOT NULL DEFAULT '[]',
    ADD COLUMN lineage_id        uuid,        -- questions: the original of the version lineage
    ADD COLUMN version_of        uuid   REFERENCES nodes (id),
    ADD COLUMN version           bigint NOT NULL DEFAULT 1,
    ADD COLUMN adopted_answer_id uuid   REFERENCES nodes (id),
    ADD COLUMN answer_state      text   CHECK (answer_state IN ('streaming', 'sealed', 'frozen')),
    ADD COLUMN stop_reason       text,
    ADD COLUMN acked_chunks      bigint NOT NULL DEFAULT 0,
    ADD COLUMN extends_answer_id uuid   REFERENCES nodes (id),
    ADD COLUMN continuation_kind text   CHECK (continuation_kind IN (
                                    'elaboration', 'verification', 'tool_work', 'deeper_reasoning')),
    ADD COLUMN reasoning_summary text   NOT NULL DEFAULT '',
    ADD COLUMN evidence          jsonb  NOT NULL DEFAULT '[]',
    ADD COLUMN tool_trace        jsonb  NOT NULL DEFAULT '[]',
    ADD CONSTRAINT nodes_world_with_world_realm CHECK ((realm = 'world') = (world IS NOT NULL)),
    ADD CONSTRAINT nodes_answer_state_only_on_answers
        CHECK ((kind = 'answer') = (answer_state IS NOT NULL)),
    ADD CONSTRAINT nodes_continuation_kind_only_on_continuations
        CHECK ((kind = 'continuation') = (continuation_kind IS NOT NULL)),
    ADD CONSTRAINT nodes_root_is_a_question CHECK (parent_id IS NOT NULL OR kind = 'question');

-- Question versions of one lineage are numbered without gaps.
CREATE UNIQUE INDEX nodes_lineage_version ON nodes (lineage_id, version) WHERE kind = 'question';

-- Chunks of buds: the primary key makes a re-sent chunk a no-op, never a duplicate.
CREATE TABLE bud_chunks (
    node_id uuid   NOT NULL REFERENCES nodes (id),
    seq     bigint NOT NULL CHECK (seq >= 1),
    text    text   NOT NULL,
    PRIMARY KEY (node_id, seq)
);

-- The head of each main line: (tree, canonical scope, world) → its latest version number.
CREATE TABLE main_lines (
    tree_id uuid   NOT NULL REFERENCES trees (id),
    scope   text   NOT NULL CHECK (scope IN ('real_experience', 'world_canon', 'rehearsal')),
    world   text   NOT NULL DEFAULT '',
    version bigint NOT NULL,
    PRIMARY KEY (tree_id, scope, world)
);

CREATE TABLE main_line_versions (
    id                  uuid PRIMARY KEY,
    tree_id             uuid        NOT NULL REFERENCES trees (id),
    scope               text        NOT NULL,
    world               text        NOT NULL DEFAULT '',
    version             bigint      NOT NULL,
    node_ids            uuid[]      NOT NULL,
    snapshot            jsonb       NOT NULL,
    confirmed_by        text        NOT NULL,
    invitation_id       text,
    replaces_version_id uuid        REFERENCES main_line_versions (id),
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (tree_id, scope, world, version)
);

-- A main-line version is immutable: a later canonicalization appends, it never rewrites.
CREATE FUNCTION refuse_main_line_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'main-line versions are immutable (version %)', OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
CREATE TRIGGER main_line_versions_immutable
    BEFORE UPDATE OR DELETE ON main_line_versions
    FOR EACH ROW EXECUTE FUNCTION refuse_main_line_rewrite();

-- What a canonicalization may produce: candidates awaiting their own review, never approvals.
CREATE TABLE canon_candidates (
    id         uuid PRIMARY KEY,
    version_id uuid NOT NULL REFERENCES main_line_versions (id),
    kind       text NOT NULL,
    detail     text NOT NULL DEFAULT '',
    status     text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected'))
);
CREATE INDEX canon_candidates_version ON canon_candidates (version_id);

-- The ledger of effects beyond the conversation (real-world actions, authorizations, bonds,
-- persona changes, costs). Only an explicit, separately confirmed command may write here;
-- adoption and canonicalization never do.
CREATE TABLE effects (
    id         uuid PRIMARY KEY,
    tree_id    uuid        NOT NULL REFERENCES trees (id),
    kind       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Every node is a story-graph message source. A question's source is its version lineage
-- (an edit adds a revision); an answer or continuation is its own source. A streaming bud gets
-- its revision when it is sealed or frozen.
CREATE TABLE source_revisions (
    source_id  uuid        NOT NULL,
    revision   bigint      NOT NULL,
    node_id    uuid        NOT NULL REFERENCES nodes (id),
    role       text        NOT NULL CHECK (role IN ('user', 'assistant')),
    text       text        NOT NULL,
    project_id text,
    tree_id    uuid        NOT NULL REFERENCES trees (id),
    ordinal    bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (source_id, revision)
);
CREATE INDEX source_revisions_node ON source_revisions (node_id);
