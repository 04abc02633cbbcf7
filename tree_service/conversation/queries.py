"""SQL of the conversation tree: trees, nodes, paths, adoption and main lines."""

from tree_service.lifecycle.queries import LIFECYCLE

INSERT_TREE = """
INSERT INTO trees (id, title, owner, project_id, default_realm, default_world)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id::text, title, owner, project_id, default_realm, default_world, revision, created_at,
          updated_at
"""

SELECT_TREE = """
SELECT id::text, title, owner, project_id, default_realm, default_world, revision, created_at,
       updated_at
FROM trees WHERE id = $1
"""

# Canonicalize holds the tree row against a purge (which locks it FOR UPDATE) while it copies
# the selected nodes, so no version can hold text a purge removed; appends still run beside it.
SELECT_TREE_FOR_CANON = SELECT_TREE.rstrip() + " FOR KEY SHARE\n"

# Every read of a node goes through these columns; a streaming bud shows the text and count
# of its acknowledged chunks so far (ending it stores both in its row).
NODE_COLUMNS = (
    """
n.id::text, n.tree_id::text, n.parent_id::text, n.kind, n.realm, n.world,
CASE WHEN n.answer_state = 'streaming'
     THEN coalesce((SELECT string_agg(c.text, '' ORDER BY c.seq)
                    FROM bud_chunks c WHERE c.node_id = n.id), '')
     ELSE n.text END AS text,
n.revision, n.ordinal, n.created_at, n.conditions, n.attachments, n.citations,
n.version_of::text, n.version, n.adopted_answer_id::text, n.answer_state, n.stop_reason,
CASE WHEN n.answer_state = 'streaming'
     THEN coalesce((SELECT max(c.seq) FROM bud_chunks c WHERE c.node_id = n.id), 0)
     ELSE n.acked_chunks END AS acked_chunks,
n.extends_answer_id::text, n.continuation_kind, n.reasoning_summary,
n.evidence, n.tool_trace, n.context_version_id::text, n.comparison, ("""
    + LIFECYCLE
    + """) AS lifecycle
"""
)

SELECT_NODE = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = $1"

SELECT_NODES = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = any($1::uuid[])"

# A whole append in one statement, so that the tree's row stays locked for as little as
# possible: the tree's revision and ordinal bump, the node (realm $5 and world $6 NULL: the
# tree's default), and, unless it is a bud still streaming, the node's message source revision
# (W2, as IngestionStore.record_message writes it; $21-$23: its source id, revision and
# role). No row: no tree $2.
APPEND_NODE = (
    """
WITH bump AS (
    UPDATE trees
    SET revision = revision + 1, node_count = node_count + 1, updated_at = clock_timestamp()
    WHERE id = $2
    RETURNING revision, node_count, default_realm, default_world, project_id
), appended AS (
    INSERT INTO nodes AS n (
        id, tree_id, parent_id, kind, realm, world, text, ordinal, conditions, attachments,
        citations, lineage_id, version_of, version, answer_state, extends_answer_id,
        continuation_kind, reasoning_summary, evidence, tool_trace, context_version_id)
    SELECT $1::uuid, $2, $3::uuid, $4::text, coalesce($5::text, b.default_realm),
           CASE WHEN $5 IS NOT NULL THEN $6::text
                WHEN b.default_realm = 'world' THEN b.default_world END,
           $7::text, b.node_count, $8::jsonb, $9::jsonb, $10::jsonb, $11::uuid, $12::uuid,
           $13::bigint, $14::text, $15::uuid, $16::text, $17::text, $18::jsonb, $19::jsonb,
           $20::uuid
    FROM bump b
    RETURNING """
    + NODE_COLUMNS
    + """
), source AS (
    INSERT INTO source_revisions (source_id, revision, node_id, role, text, project_id,
                                  tree_id, ordinal)
    SELECT $21::uuid, $22::bigint, $1, $23::text, $7, b.project_id, $2, b.node_count
    FROM bump b JOIN appended ON true
    WHERE $14::text IS DISTINCT FROM 'streaming' AND $4::text <> 'observation'
)
SELECT appended.*, b.revision AS tree_revision FROM appended, bump b
"""
)

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

# The path root → $1, paged by $2 (offset from the root) and $3 (limit), each row with the
# path's full length.
SELECT_PATH = (
    """
WITH RECURSIVE up (id, depth) AS (
    SELECT id, 0 FROM nodes WHERE id = $1
    UNION ALL
    SELECT p.parent_id, up.depth + 1
    FROM up JOIN nodes p ON p.id = up.id
    WHERE p.parent_id IS NOT NULL
)
SELECT count(*) OVER () AS path_length, """
    + NODE_COLUMNS
    + """
FROM up JOIN nodes n ON n.id = up.id
ORDER BY up.depth DESC
OFFSET $2 LIMIT $3
"""
)

# Which of the ids $2 lie on the path root → $1 (the node itself included).
ON_PATH_TO = """
WITH RECURSIVE up (id) AS (
    SELECT id FROM nodes WHERE id = $1
    UNION ALL
    SELECT p.parent_id FROM up JOIN nodes p ON p.id = up.id WHERE p.parent_id IS NOT NULL
)
SELECT id::text FROM up WHERE id = any($2::uuid[])
"""

ADOPT_ANSWER = (
    """
UPDATE nodes AS n SET adopted_answer_id = $2, revision = revision + 1
WHERE n.id = $1 AND n.kind = 'question' AND n.revision = $3
RETURNING """
    + NODE_COLUMNS
)

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
INSERT INTO canon_candidates (id, version_id, kind, detail) VALUES ($1, $2, $3, $4)
"""

# Without their snapshots, which can be large: each comes with the size it is stored in
# (compressed or not), and a page reads them as it fills (MAIN_LINE_SNAPSHOTS).
LIST_MAIN_LINE_VERSIONS = """
SELECT v.id::text, v.tree_id::text, v.scope, v.world, v.version, v.node_ids::text[] AS node_ids,
       pg_column_size(v.snapshot) AS snapshot_stored_bytes, v.confirmed_by, v.created_at,
       v.replaces_version_id::text, v.invitation_id,
       coalesce((SELECT json_agg(json_build_object('id', c.id, 'kind', c.kind,
                                                   'detail', c.detail, 'status', c.status)
                                 ORDER BY c.kind, c.detail)
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
