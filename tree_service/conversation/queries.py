"""SQL of the conversation: question versions and adoption."""

from tree_service.nodes.rows import NODE_COLUMNS

# Orders the edits of one question's versions on its original; NO KEY UPDATE, so that it does
# not block (and deadlock with) the foreign-key checks of answers inserted under the question.
LOCK_LINEAGE = """
SELECT o.id FROM nodes q JOIN nodes o ON o.id = q.lineage_id WHERE q.id = $1
FOR NO KEY UPDATE OF o
"""

# The next version number of a question lineage (taken under LOCK_LINEAGE; the unique index
# nodes_lineage_version backs this up).
NEXT_LINEAGE_VERSION = """
SELECT coalesce(max(version), 0) + 1 FROM nodes WHERE lineage_id = $1 AND kind = 'question'
"""

ADOPT_ANSWER = (
    """
UPDATE nodes AS n SET adopted_answer_id = $2, revision = revision + 1
WHERE n.id = $1 AND n.kind = 'question' AND n.revision = $3
RETURNING """
    + NODE_COLUMNS
)
