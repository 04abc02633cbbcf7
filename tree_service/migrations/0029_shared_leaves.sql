-- G9: leaf facts keyed by what they were extracted from (source, version, covered range,
-- extraction contract), extracted once and used by every scope that reviews the same text.

-- A part of a source version extracted successfully under a contract; `analysis` counts the
-- extractions of that source version and contract (a re-analysis is the next one).
CREATE TABLE leaf_extractions (
    source_type      text        NOT NULL,
    source_id        text        NOT NULL,
    source_version   text        NOT NULL,
    contract_version text        NOT NULL,
    analysis         integer     NOT NULL CHECK (analysis >= 1),
    covered          int8range   NOT NULL CHECK (NOT isempty(covered) AND lower(covered) >= 0),
    scope_key        text        NOT NULL,
    result_id        text        NOT NULL,
    recorded_at      timestamptz NOT NULL
);
CREATE INDEX leaf_extractions_key
    ON leaf_extractions (source_type, source_id, source_version, contract_version, analysis);

-- One stored leaf: its text is also the graph_objects copy of the result that first
-- extracted it (scope_key, result_id, object_id), which that scope reads as before.
CREATE TABLE leaves (
    leaf_id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_type          text        NOT NULL,
    source_id            text        NOT NULL,
    source_version       text        NOT NULL,
    contract_version     text        NOT NULL,
    analysis             integer     NOT NULL CHECK (analysis >= 1),
    fragment             int8range   NOT NULL CHECK (NOT isempty(fragment)),
    text                 text        NOT NULL,
    text_hash            bytea       NOT NULL,
    source_project       text,
    confirmation_state   text,
    event_time_start     timestamptz,
    event_time_end       timestamptz,
    event_time_precision text,
    event_time_basis     text,
    scope_key            text        NOT NULL,
    result_id            text        NOT NULL,
    object_id            text        NOT NULL,
    recorded_at          timestamptz NOT NULL,
    text_folded          text GENERATED ALWAYS AS (lower(text)) STORED,
    UNIQUE (source_type, source_id, source_version, contract_version, analysis, fragment,
            text_hash)
);
-- A project's leaves in recorded order (the visibility rule of a project scope).
CREATE INDEX leaves_project ON leaves (source_project, leaf_id);
CREATE INDEX leaves_source ON leaves (source_type, source_id, leaf_id);
CREATE INDEX leaves_text_trgm ON leaves USING gin (text_folded gin_trgm_ops)
    WITH (fastupdate = off);

-- Each scope's use of a leaf: the leaf fact a result recorded (first extraction) or linked
-- (a match), under the id and with the `about` links that result gave it — what a leaf is
-- about is the scope's own interpretation, never shared.
CREATE TABLE leaf_uses (
    scope_key text   NOT NULL,
    object_id text   NOT NULL,
    result_id text   NOT NULL,
    leaf_id   bigint NOT NULL REFERENCES leaves (leaf_id),
    linked    boolean NOT NULL,
    about     jsonb  NOT NULL DEFAULT '[]',
    PRIMARY KEY (scope_key, object_id, result_id)
);
CREATE INDEX leaf_uses_leaf ON leaf_uses (leaf_id, scope_key);
