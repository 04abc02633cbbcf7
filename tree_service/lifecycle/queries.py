"""SQL of branch states and their transitions."""

from __future__ import annotations

from tree_service.nodes.rows import ANSWER_LIFECYCLE

# Opens a branch's row at revision 1 (active) the first time it is moved; then locks it so
# that of concurrent transitions at one revision exactly one applies.
OPEN_BRANCH = """
INSERT INTO branches (node_id, tree_id, state, revision) VALUES ($1, $2, 'active', 1)
ON CONFLICT (node_id) DO NOTHING
"""

LOCK_BRANCH = "SELECT state, revision FROM branches WHERE node_id = $1 FOR UPDATE"

MOVE_BRANCH = """
UPDATE branches SET state = $2, revision = revision + 1, updated_at = clock_timestamp()
WHERE node_id = $1
RETURNING revision
"""

INSERT_TRANSITION = """
INSERT INTO branch_transitions (node_id, revision, from_state, to_state, changed_by, reason,
                                summary, open_branch_ids, candidate_ids)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
"""

# What a conclusion records: the questions in the branch with no adopted answer, and the
# answers no question adopted, in creation order.
BRANCH_OPEN_ENDS = (
    """
WITH RECURSIVE sub AS (
    SELECT id FROM nodes WHERE id = $1
    UNION ALL
    SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id
)
SELECT n.id, n.kind, n.adopted_answer_id IS NULL AS unanswered,
       ("""
    + ANSWER_LIFECYCLE
    + """) AS lifecycle
FROM sub JOIN nodes n ON n.id = sub.id
ORDER BY n.ordinal
"""
)

SELECT_BRANCH = """
SELECT node_id::text, tree_id::text, state, revision FROM branches WHERE node_id = $1
"""

SELECT_TRANSITIONS = """
SELECT node_id::text, revision, from_state, to_state, changed_by, reason, created_at, summary,
       coalesce(open_branch_ids::text[], '{}') AS open_ids,
       coalesce(candidate_ids::text[], '{}') AS candidate_ids
FROM branch_transitions WHERE node_id = any($1::uuid[])
ORDER BY node_id, revision
"""

# Moved branches of tree $1 after root ordinal $2, archived ones when $3, in states $5 (empty:
# any), at most $4.
LIST_BRANCHES = """
SELECT b.node_id::text, b.tree_id::text, b.state, b.revision, n.ordinal
FROM branches b JOIN nodes n ON n.id = b.node_id
WHERE b.tree_id = $1 AND n.ordinal > $2 AND ($3 OR b.state NOT IN ('archived', 'purged'))
  AND (cardinality($5::text[]) = 0 OR b.state = any($5::text[]))
ORDER BY n.ordinal
LIMIT $4
"""
