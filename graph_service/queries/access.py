"""Who is calling, and whether the story-graph tools are switched on for them."""

BINDING_BY_TOKEN_HASH = """
SELECT b.id::text AS binding_id, b.session_id::text AS session_id, b.runtime, t.project_id,
       b.allowed_scopes
FROM bindings b JOIN trees t ON t.id = b.session_id
WHERE b.token_hash = $1 AND b.revoked_at IS NULL
"""

SESSION_PROJECT = """
SELECT project_id FROM trees WHERE id = $1
"""

# The switches gating the tools for one session ($1, NULL for none); see graph_service.gate.
GATE_SWITCHES = """
SELECT a.heartbeat_enabled, c.enabled, c.assignments,
       (SELECT t.context_state -> 'story_graph_enabled' FROM trees t WHERE t.id = $1)
           AS session_switch
FROM app_settings a CROSS JOIN capabilities c
WHERE c.id = 'story-graph'
"""
