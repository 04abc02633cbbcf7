"""SQL of canonicalization: main lines, their versions and snapshots, invitations to
canonicalize and the review of canon candidates."""

START_MAIN_LINE = """
INSERT INTO main_lines (tree_id, scope, world, version) VALUES ($1, $2, $3, 1)
ON CONFLICT (tree_id, scope, world) DO NOTHING
RETURNING version
"""

ADVANCE_MAIN_LINE = """
UPDATE main_lines SET version = version + 1
WHERE tree_id = $1 AND scope = $2 AND world = $3 AND version = $4
RETURNING version
"""

MAIN_LINE_HEAD = """
SELECT version FROM main_lines WHERE tree_id = $1 AND scope = $2 AND world = $3
"""

MAIN_LINE_VERSION_ID = """
SELECT id FROM main_line_versions
WHERE tree_id = $1 AND scope = $2 AND world = $3 AND version = $4
"""

INSERT_MAIN_LINE_VERSION = """
INSERT INTO main_line_versions (id, tree_id, scope, world, version, node_ids, snapshot,
                                confirmed_by, invitation_id, replaces_version_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING created_at
"""

INSERT_CANDIDATE = """
INSERT INTO canon_candidates (id, version_id, position, kind, detail, subject, text)
VALUES ($1, $2, $3, $4, $5, $6, $7)
"""

# Without their snapshots, which can be large: each comes with the size it is stored in
# (compressed or not), and a page reads them as it fills (MAIN_LINE_SNAPSHOTS).
LIST_MAIN_LINE_VERSIONS = """
SELECT v.id::text, v.tree_id::text, v.scope, v.world, v.version, v.node_ids::text[] AS node_ids,
       pg_column_size(v.snapshot) AS snapshot_stored_bytes, v.confirmed_by, v.created_at,
       v.replaces_version_id::text, v.invitation_id,
       coalesce((SELECT json_agg(json_build_object('id', c.id, 'kind', c.kind,
                                                   'detail', c.detail, 'status', c.status,
                                                   'revision', c.revision,
                                                   'reviewed_by', c.reviewed_by,
                                                   'review_reason', c.review_reason,
                                                   'reviewed_at', c.reviewed_at,
                                                   'subject', c.subject, 'text', c.text,
                                                   'memory_id', c.memory_id)
                                 ORDER BY c.position, c.kind, c.detail, c.id)
                 FROM canon_candidates c WHERE c.version_id = v.id), '[]') AS candidates
FROM main_line_versions v
WHERE v.tree_id = $1 AND ($2::text IS NULL OR v.scope = $2) AND ($3::text = '' OR v.world = $3)
  AND ($4::uuid IS NULL
       OR (v.created_at, v.version, v.id)
          < (SELECT a.created_at, a.version, a.id FROM main_line_versions a WHERE a.id = $4))
ORDER BY v.created_at DESC, v.version DESC, v.id DESC
LIMIT $5
"""

MAIN_LINE_SNAPSHOTS = (
    "SELECT id::text, snapshot FROM main_line_versions WHERE id = any($1::text[]::uuid[])"
)

# The version a page token names ($1), when it is one of tree $2's versions.
MAIN_LINE_VERSION_OF_TREE = "SELECT 1 FROM main_line_versions WHERE id = $1 AND tree_id = $2"

# One page of a version's snapshot ($1): nodes after position $2 (zero-based), at most $3,
# each with the snapshot's length; no row when the version holds none there.
MAIN_LINE_SNAPSHOT_PAGE = """
SELECT jsonb_array_length(v.snapshot) AS snapshot_length, n.node
FROM main_line_versions v,
     jsonb_array_elements(v.snapshot) WITH ORDINALITY AS n (node, position)
WHERE v.id = $1 AND n.position > $2
ORDER BY n.position
LIMIT $3
"""

MAIN_LINE_SNAPSHOT_LENGTH = (
    "SELECT jsonb_array_length(snapshot) FROM main_line_versions WHERE id = $1"
)

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
reviewed_at, subject, text, memory_id
"""

VERSION_EXISTS = "SELECT 1 FROM main_line_versions WHERE id = $1"

LIST_CANDIDATES = (
    "SELECT "
    + CANDIDATE_COLUMNS
    + """
FROM canon_candidates
WHERE version_id = $1 AND ($2 OR status = 'pending')
ORDER BY position, kind, detail, id
"""
)

LOCK_CANDIDATE = "SELECT " + CANDIDATE_COLUMNS + " FROM canon_candidates WHERE id = $1 FOR UPDATE"

SELECT_CANDIDATES = (
    "SELECT " + CANDIDATE_COLUMNS + " FROM canon_candidates WHERE id = any($1::uuid[])"
)

# Where a candidate's version was projected: its scope and world, and the tree's project.
CANDIDATE_VERSION = """
SELECT v.id::text AS version_id, v.scope, v.world, t.project_id
FROM main_line_versions v JOIN trees t ON t.id = v.tree_id
WHERE v.id = $1
"""

# Only the candidate's own row (and the memory an accepted one became, $5, written before it):
# a review writes nothing outside the version's scope.
REVIEW_CANDIDATE = (
    """
UPDATE canon_candidates
SET status = $2, reviewed_by = $3, review_reason = $4, reviewed_at = clock_timestamp(),
    revision = revision + 1, memory_id = $5
WHERE id = $1
RETURNING """
    + CANDIDATE_COLUMNS
)

SELECT_INVITATIONS = (
    "SELECT " + INVITATION_COLUMNS + " FROM canon_invitations WHERE id = any($1::uuid[])"
)
