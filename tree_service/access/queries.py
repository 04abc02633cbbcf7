"""SQL of access: the switches gating the story-graph tools, session context and bindings."""

SELECT_SETTINGS = """
SELECT a.heartbeat_enabled, a.revision AS app_revision,
       c.enabled, c.assignments, c.revision AS capability_revision
FROM app_settings a CROSS JOIN capabilities c
WHERE c.id = 'story-graph'
"""

UPDATE_APP = """
UPDATE app_settings SET heartbeat_enabled = $1, revision = revision + 1
WHERE revision = $2
RETURNING revision
"""

UPDATE_CAPABILITY = """
UPDATE capabilities SET enabled = $2, assignments = $3, revision = revision + 1
WHERE id = $1 AND revision = $4
RETURNING revision
"""

SELECT_CONTEXT = """
SELECT context_state, context_revision FROM trees WHERE id = $1
"""

SET_SESSION_SWITCH = """
UPDATE trees
SET context_state = jsonb_set(context_state, '{story_graph_enabled}', to_jsonb($2::bool)),
    context_revision = context_revision + 1
WHERE id = $1
RETURNING context_state, context_revision
"""

SAVE_CONTEXT = """
UPDATE trees SET context_state = $2::jsonb, context_revision = context_revision + 1
WHERE id = $1 AND context_revision = $3
RETURNING context_state, context_revision
"""

INSERT_BINDING = """
INSERT INTO bindings (id, token_hash, session_id, runtime, allowed_scopes)
VALUES ($1, $2, $3, $4, $5)
"""

# A binding is issued for a session (a tree) and carries its project.
SELECT_SESSION_PROJECT = "SELECT project_id FROM trees WHERE id = $1"
