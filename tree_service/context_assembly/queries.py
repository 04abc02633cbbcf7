"""SQL of context assembly: summaries, memory, and recorded context versions."""

SUMMARY_COLUMNS = "subject, version, text, token_estimate, written_by, created_at"

LATEST_SUMMARY_VERSION = (
    "SELECT coalesce(max(version), 0) FROM context_summaries WHERE subject = $1"
)

INSERT_SUMMARY = (
    """
INSERT INTO context_summaries (subject, version, tree_id, node_id, text, token_estimate,
                               written_by)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (subject, version) DO NOTHING
RETURNING """
    + SUMMARY_COLUMNS
)

# The latest summary of each subject in $1.
LATEST_SUMMARIES = (
    "SELECT DISTINCT ON (subject) "
    + SUMMARY_COLUMNS
    + " FROM context_summaries WHERE subject = any($1::text[]) ORDER BY subject, version DESC"
)

# Approved long-term memory: the user-confirmed preferences of Global and of the project $1.
MEMORY = """
SELECT id, subject, text FROM preferences
WHERE scope_key = 'global' OR scope_key = $1
ORDER BY scope_key = 'global' DESC, id COLLATE "C"
"""

SELECT_TREE_PROJECT = "SELECT project_id FROM trees WHERE id = $1"

INSERT_CONTEXT_VERSION = """
INSERT INTO context_versions (id, tree_id, node_id, budget, token_budget, used, used_tokens,
                              items, digest)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING created_at
"""

SELECT_CONTEXT_VERSION = """
SELECT id::text, node_id::text, budget, token_budget, used, used_tokens, items::text AS items,
       digest, created_at
FROM context_versions WHERE id = $1
"""

SELECT_SUMMARY = (
    "SELECT " + SUMMARY_COLUMNS + " FROM context_summaries WHERE subject = $1 AND version = $2"
)
