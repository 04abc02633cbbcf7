-- The story graph's remaining objects and read paths: leaf facts, the links between objects
-- (so a context read walks an index instead of scanning JSON), non-message sources with
-- revisions, and confirmed long-term preferences.

ALTER TABLE graph_objects DROP CONSTRAINT graph_objects_object_type_check;
ALTER TABLE graph_objects ADD CONSTRAINT graph_objects_object_type_check CHECK (object_type IN (
    'story_line', 'event', 'entity', 'entity_change', 'relation', 'summary', 'source_reference',
    'leaf_fact'));

-- Every stored copy of one object, across results: the context read and the ownership check
-- ("does this id exist in another scope?") look objects up by type and stable id.
CREATE INDEX graph_objects_ref ON graph_objects (object_type, object_id, scope_key);

-- Directed links recorded by a result: story line → its events, event → entities it
-- involves, change → entity/event, relation → its two ends ('<kind>.from', '<kind>.to'),
-- leaf fact → what it is about, summary → its facts, anything → the sources it cites ('cites').
-- Ends are stable ids; the object at an end may live in an earlier result of the same scope,
-- or (for a 'contradicts.to' end) be a preference.
CREATE TABLE graph_links (
    scope_key text NOT NULL,
    result_id text NOT NULL REFERENCES review_results (result_id),
    from_type text NOT NULL,
    from_id   text NOT NULL,
    link      text NOT NULL,
    to_type   text NOT NULL,
    to_id     text NOT NULL,
    PRIMARY KEY (result_id, from_type, from_id, link, to_type, to_id)
);
CREATE INDEX graph_links_to ON graph_links (scope_key, to_type, to_id);
CREATE INDEX graph_links_from ON graph_links (scope_key, from_type, from_id);

-- Free-text coverage gaps a review reports about itself.
ALTER TABLE review_results ADD COLUMN coverage_gaps text[] NOT NULL DEFAULT '{}';

-- Sources other than messages (messages are tree nodes, see source_revisions). Only the
-- current text is kept: a reference to an older revision reads as unavailable.
CREATE TABLE sources (
    source_id   text PRIMARY KEY,
    source_type text        NOT NULL CHECK (source_type IN ('task_status', 'knowledge', 'document')),
    project_id  text,
    title       text        NOT NULL DEFAULT '',
    text        text,                             -- NULL once deleted
    revision    bigint      NOT NULL CHECK (revision >= 1),
    deleted     boolean     NOT NULL DEFAULT false,
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Confirmed long-term preferences. A review never rewrites one; a conflicting graph fact is a
-- 'contradicts' relation to it, read as a pending difference.
CREATE TABLE preferences (
    id           text PRIMARY KEY,
    scope_key    text        NOT NULL,  -- 'global' or 'projects:<one project>'
    subject      text        NOT NULL,
    text         text        NOT NULL,
    about        jsonb       NOT NULL DEFAULT '[]',  -- [{"type": ..., "id": ...}]
    confirmed_by text        NOT NULL,
    revision     bigint      NOT NULL CHECK (revision >= 1),
    updated_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX preferences_scope ON preferences (scope_key, id);
