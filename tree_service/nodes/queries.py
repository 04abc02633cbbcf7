"""SQL of the node core: trees, node reads and appends, paths, and the branch each node is in.
Private to the node core; other packages go through NodeStore (nodes/store.py)."""

from tree_service.nodes.rows import ANSWER_LIFECYCLE, NODE_COLUMNS, TREE_COLUMNS

INSERT_TREE = (
    """
INSERT INTO trees (id, title, owner, project_id, default_realm, default_world)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING """
    + TREE_COLUMNS
)

SELECT_TREE = "SELECT " + TREE_COLUMNS + " FROM trees WHERE id = $1"

# Holds the tree row against a purge (which locks it FOR UPDATE) while a write copies nodes of
# it, so that nothing copied can hold text a purge removed; appends still run beside it.
SELECT_TREE_HELD = SELECT_TREE + " FOR KEY SHARE\n"

TREE_EXISTS = "SELECT 1 FROM trees WHERE id = $1"

NODE_EXISTS = "SELECT 1 FROM nodes WHERE id = $1"

SELECT_NODE = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = $1"

SELECT_NODES = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = any($1::uuid[])"

IS_PURGED = "SELECT 1 FROM purged_nodes WHERE node_id = $1"
PURGED_AMONG = "SELECT node_id::text FROM purged_nodes WHERE node_id = any($1::uuid[])"

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

# The branch placement of each node $1, walking up from it (none: no moved branch above): a
# purged, then an archived branch above decides for everything under it, else the innermost.
PLACEMENTS = """
SELECT x.id::text AS id, p.branch_id, p.state
FROM unnest($1::uuid[]) AS x (id)
LEFT JOIN LATERAL (
    WITH RECURSIVE up AS (
        SELECT n.id, n.parent_id, 0 AS depth FROM nodes n WHERE n.id = x.id
        UNION ALL
        SELECT n.id, n.parent_id, up.depth + 1 FROM nodes n JOIN up ON n.id = up.parent_id
    )
    SELECT b.node_id::text AS branch_id, b.state
    FROM up JOIN branches b ON b.node_id = up.id
    ORDER BY b.state = 'purged' DESC, b.state = 'archived' DESC, up.depth
    LIMIT 1
) p ON true
"""

# Nodes of tree $1 after ordinal $2, at most $3, each placed in its branch as PLACEMENTS does
# (every node under a moved branch of the tree, walking down from the branches); archived
# branches' nodes only when $4; only answers in lifecycles $5 when it is not empty.
LIST_NODES = (
    """
WITH RECURSIVE under AS (
    SELECT b.node_id AS id, b.node_id AS branch_id, b.state, 0 AS depth
    FROM branches b WHERE b.tree_id = $1
    UNION ALL
    SELECT n.id, u.branch_id, u.state, u.depth + 1
    FROM under u JOIN nodes n ON n.parent_id = u.id
), placed AS (
    SELECT DISTINCT ON (id) id, branch_id, state
    FROM under ORDER BY id, state = 'purged' DESC, state = 'archived' DESC, depth
)
SELECT """
    + NODE_COLUMNS
    + """, p.branch_id::text AS branch_id, p.state AS branch_state
FROM nodes n LEFT JOIN placed p ON p.id = n.id
WHERE n.tree_id = $1 AND n.ordinal > $2
  AND ($4 OR p.state IS NULL OR p.state NOT IN ('archived', 'purged'))
  AND (cardinality($5::text[]) = 0 OR ("""
    + ANSWER_LIFECYCLE
    + """) = any($5::text[]))
ORDER BY n.ordinal
LIMIT $3
"""
)
