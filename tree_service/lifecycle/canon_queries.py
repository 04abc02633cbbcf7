"""SQL of canonicalization invitations (T10) and canon candidate reviews (T22)."""

from __future__ import annotations

INVITATION_COLUMNS = """
id::text, tree_id::text, node_id::text, reason, proposed_by, state, created_at, decided_by,
decision_reason, decided_at, version_id::text
"""

INSERT_INVITATION = (
    """
INSERT INTO canon_invitations (id, tree_id, node_id, reason, proposed_by)
VALUES ($1, $2, $3, $4, $5)
RETURNING """
    + INVITATION_COLUMNS
)

PENDING_INVITATION_OF_NODE = (
    "SELECT id::text FROM canon_invitations WHERE node_id = $1 AND state = 'pending'"
)

NODE_CANONICALIZED = "SELECT 1 FROM main_line_versions WHERE node_ids @> ARRAY[$1::uuid] LIMIT 1"

LOCK_INVITATION = (
    "SELECT " + INVITATION_COLUMNS + " FROM canon_invitations WHERE id = $1 FOR UPDATE"
)

DECLINE_INVITATION = (
    """
UPDATE canon_invitations
SET state = 'declined', decided_by = $2, decision_reason = $3, decided_at = clock_timestamp()
WHERE id = $1
RETURNING """
    + INVITATION_COLUMNS
)

ACCEPT_INVITATION = """
UPDATE canon_invitations
SET state = 'accepted', decided_by = $2, decided_at = clock_timestamp(), version_id = $3
WHERE id = $1
"""

TREE_EXISTS = "SELECT 1 FROM trees WHERE id = $1"

# Invitations of tree $1 after position $2 in states $4 (empty: any), at most $3.
LIST_INVITATIONS = (
    "SELECT position, "
    + INVITATION_COLUMNS
    + """
FROM canon_invitations
WHERE tree_id = $1 AND position > $2 AND (cardinality($4::text[]) = 0 OR state = any($4))
ORDER BY position
LIMIT $3
"""
)

CANDIDATE_COLUMNS = """
id::text, version_id::text, kind, detail, status, revision, reviewed_by, review_reason,
reviewed_at
"""

VERSION_EXISTS = "SELECT 1 FROM main_line_versions WHERE id = $1"

LIST_CANDIDATES = (
    "SELECT "
    + CANDIDATE_COLUMNS
    + """
FROM canon_candidates
WHERE version_id = $1 AND ($2 OR status = 'pending')
ORDER BY kind, detail, id
"""
)

LOCK_CANDIDATE = "SELECT " + CANDIDATE_COLUMNS + " FROM canon_candidates WHERE id = $1 FOR UPDATE"

# Only the candidate's own row: a review writes nothing outside the version's scope.
REVIEW_CANDIDATE = (
    """
UPDATE canon_candidates
SET status = $2, reviewed_by = $3, review_reason = $4, reviewed_at = clock_timestamp(),
    revision = revision + 1
WHERE id = $1
RETURNING """
    + CANDIDATE_COLUMNS
)
