"""SQL of context assembly: summaries, memory (preferences and facts in effect), and recorded
context versions."""

from tree_service.commitments import COLUMNS as FACT_COLUMNS

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

# Approved long-term memory: the user-confirmed preferences of Global and of the project $1,
# and for a node of a world those of that world's canon ($2; NULL otherwise).
MEMORY = """
SELECT id, subject, text FROM preferences
WHERE scope_key = 'global' OR scope_key = $1 OR scope_key = $2
ORDER BY scope_key = 'global' DESC, scope_key = $1 DESC, id COLLATE "C"
"""

SELECT_TREE_PROJECT = "SELECT project_id FROM trees WHERE id = $1"

# Statements that could hold as facts for a node of realm $2 and world $3 (NULL for the real
# realm): those of the kinds $4 stated in that realm and world, newest first, at most $5, each
# with the main-line versions holding its node, oldest first (whether one holds is
# commitments.holds_in's to say, from these). A purged node's statement is forgotten: never read.
# ... in the trees of project $1.
FACTS_OF_PROJECT = (
    "SELECT "
    + FACT_COLUMNS
    + """
FROM trees t JOIN commitments c ON c.tree_id = t.id
WHERE t.project_id = $1 AND c.realm = $2 AND c.world IS NOT DISTINCT FROM $3
  AND c.kind = any($4::text[])
  AND NOT EXISTS (SELECT 1 FROM purged_nodes p WHERE p.node_id = c.node_id)
ORDER BY c.created_at DESC, c.id DESC
LIMIT $5
"""
)

# ... in tree $1 alone (a tree without a project).
FACTS_OF_TREE = (
    "SELECT "
    + FACT_COLUMNS
    + """
FROM commitments c
WHERE c.tree_id = $1 AND c.realm = $2 AND c.world IS NOT DISTINCT FROM $3
  AND c.kind = any($4::text[])
  AND NOT EXISTS (SELECT 1 FROM purged_nodes p WHERE p.node_id = c.node_id)
ORDER BY c.created_at DESC, c.id DESC
LIMIT $5
"""
)

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
