-- The switches that gate the story-graph tools, and bindings granted wider scopes.
--
-- app_settings: one row; the supervisor app ("heartbeat") starts switched off.
-- capabilities: the `story-graph` capability, enabled, assigned to the default runtimes.
-- trees.context_state: the session's context state (JSON); `story_graph_enabled` missing = on.
--   context_revision orders explicit switches and autosaves (a stale autosave is refused).

CREATE TABLE app_settings (
    singleton         boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    heartbeat_enabled boolean NOT NULL DEFAULT false,
    revision          bigint  NOT NULL DEFAULT 1
);
INSERT INTO app_settings DEFAULT VALUES;

CREATE TABLE capabilities (
    id          text    PRIMARY KEY,
    enabled     boolean NOT NULL,
    assignments text[]  NOT NULL,
    revision    bigint  NOT NULL DEFAULT 1
);
INSERT INTO capabilities (id, enabled, assignments)
VALUES ('story-graph', true, '{Model,OpenCode,Continue,DeepSeek Harness}');

ALTER TABLE trees
    ADD COLUMN context_state    jsonb  NOT NULL DEFAULT '{}',
    ADD COLUMN context_revision bigint NOT NULL DEFAULT 1;

-- Scope keys a binding may name explicitly besides its session's current project.
ALTER TABLE bindings ADD COLUMN allowed_scopes text[] NOT NULL DEFAULT '{}';
