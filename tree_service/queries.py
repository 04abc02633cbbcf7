"""SQL of the tree service, as named constants with $n parameters (nothing formatted in)."""

CLAIM_IDEMPOTENCY_KEY = """
INSERT INTO idempotency_keys (key, method, request_hash)
VALUES ($1, $2, $3)
ON CONFLICT (key) DO NOTHING
RETURNING key
"""

READ_IDEMPOTENCY_KEY = """
SELECT method, request_hash, response FROM idempotency_keys WHERE key = $1
"""

STORE_IDEMPOTENT_RESPONSE = """
UPDATE idempotency_keys SET response = $2 WHERE key = $1
"""

CURRENT_LSN = "SELECT pg_current_wal_insert_lsn()::text"

WAL_GEOMETRY = """
SELECT current_setting('wal_block_size')::int AS block_size,
       (SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size') AS segment_size
"""

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

# Appending a node bumps the tree revision and hands out the next ordinal in one statement;
# the row lock serializes appends to one tree only for the length of this statement's txn.
BUMP_TREE_FOR_APPEND = """
UPDATE trees
SET revision = revision + 1, node_count = node_count + 1, updated_at = clock_timestamp()
WHERE id = $1
RETURNING revision, node_count, default_realm, default_world, project_id, owner
"""

# Every read of a node goes through these columns; a streaming bud shows the text of its
# acknowledged chunks so far.
NODE_COLUMNS = """
n.id::text, n.tree_id::text, n.parent_id::text, n.kind, n.realm, n.world,
CASE WHEN n.answer_state = 'streaming'
     THEN coalesce((SELECT string_agg(c.text, '' ORDER BY c.seq)
                    FROM bud_chunks c WHERE c.node_id = n.id), '')
     ELSE n.text END AS text,
n.revision, n.ordinal, n.created_at, n.conditions, n.attachments, n.citations,
n.version_of::text, n.version, n.adopted_answer_id::text, n.answer_state, n.stop_reason,
n.acked_chunks, n.extends_answer_id::text, n.continuation_kind, n.reasoning_summary,
n.evidence, n.tool_trace
"""

SELECT_NODE = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = $1"

SELECT_NODES = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = any($1::uuid[])"

INSERT_NODE = (
    """
INSERT INTO nodes AS n (
    id, tree_id, parent_id, kind, realm, world, text, ordinal, conditions, attachments,
    citations, lineage_id, version_of, version, answer_state, extends_answer_id,
    continuation_kind, reasoning_summary, evidence, tool_trace)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
        $20)
RETURNING """
    + NODE_COLUMNS
)

# Locks the original of a question's version lineage: edits of any version of one question
# take their version numbers one after another. NO KEY UPDATE, because a plain FOR UPDATE would
# also block the foreign-key checks of concurrent inserts under that question (an answer being
# added) and deadlock with them.
LOCK_LINEAGE = """
SELECT o.id FROM nodes q JOIN nodes o ON o.id = q.lineage_id WHERE q.id = $1
FOR NO KEY UPDATE OF o
"""

# The next version number of a question lineage (taken under LOCK_LINEAGE; the unique index
# nodes_lineage_version backs this up).
NEXT_LINEAGE_VERSION = """
SELECT coalesce(max(version), 0) + 1 FROM nodes WHERE lineage_id = $1 AND kind = 'question'
"""

LIST_NODES = (
    "SELECT "
    + NODE_COLUMNS
    + """
FROM nodes n
WHERE n.tree_id = $1 AND n.ordinal > $2
ORDER BY n.ordinal
LIMIT $3
"""
)

# The path root → $1; $2/$3 page it (offset from the root, limit). Each row also carries the
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

INSERT_SOURCE_REVISION = """
INSERT INTO source_revisions (source_id, revision, node_id, role, text, project_id, tree_id,
                              ordinal)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
"""

# ---- buds ---------------------------------------------------------------------------------

LOCK_STREAMING_BUDS = """
SELECT id FROM nodes WHERE id = any($1::uuid[]) AND answer_state = 'streaming' FOR SHARE
"""

INSERT_CHUNKS = """
INSERT INTO bud_chunks (node_id, seq, text)
SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[])
ON CONFLICT (node_id, seq) DO NOTHING
"""

SELECT_CHUNKS = """
SELECT node_id, seq, text FROM bud_chunks
WHERE (node_id, seq) IN (SELECT * FROM unnest($1::uuid[], $2::bigint[]))
"""

RECORD_ACKED_CHUNKS = """
UPDATE nodes n SET acked_chunks = greatest(n.acked_chunks, s.seq)
FROM (SELECT node_id, max(seq) AS seq FROM unnest($1::uuid[], $2::bigint[]) AS u (node_id, seq)
      GROUP BY node_id) s
WHERE n.id = s.node_id
"""

# Starts or renews a bud's lease (only while it is streaming).
RENEW_BUD_LEASE = """
UPDATE nodes SET stream_lease_until = clock_timestamp() + make_interval(secs => $2)
WHERE id = $1 AND answer_state = 'streaming'
"""

EXPIRED_BUDS = """
SELECT id::text FROM nodes
WHERE answer_state = 'streaming' AND stream_lease_until < clock_timestamp()
ORDER BY stream_lease_until
LIMIT $1
"""

# Taken before END_BUD, in its own statement: it waits for an in-flight chunk batch (which
# holds a share lock on the bud) to commit, so END_BUD's snapshot then sees that batch's chunks.
LOCK_STREAMING_BUD = """
SELECT id FROM nodes WHERE id = $1 AND answer_state = 'streaming' FOR UPDATE
"""

# Seal or freeze: the final text is the acknowledged chunks in order; only a streaming bud
# can end, and only once.
END_BUD = (
    """
UPDATE nodes AS n
SET answer_state = $2,
    stop_reason = $3,
    text = coalesce((SELECT string_agg(c.text, '' ORDER BY c.seq)
                     FROM bud_chunks c WHERE c.node_id = n.id), ''),
    reasoning_summary = CASE WHEN $4 = '' THEN n.reasoning_summary ELSE $4 END,
    evidence = CASE WHEN $5::jsonb = '[]'::jsonb THEN n.evidence ELSE $5::jsonb END,
    tool_trace = CASE WHEN $6::jsonb = '[]'::jsonb THEN n.tool_trace ELSE $6::jsonb END,
    acked_chunks = coalesce((SELECT max(c.seq) FROM bud_chunks c WHERE c.node_id = n.id), 0),
    revision = n.revision + 1
WHERE n.id = $1 AND n.answer_state = 'streaming'
RETURNING """
    + NODE_COLUMNS
)

# ---- canonicalization -----------------------------------------------------------------------

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
       v.replaces_version_id::text,
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

SELECT_REVIEW_HASH = "SELECT request_hash FROM review_results WHERE result_id = $1"

# Results of one scope take their graph revision one after another (the lock is held to the
# end of the transaction), so a scope's revisions commit in order and the highest one read
# really covers everything below it: a cursor bound to it cannot miss a late-committing result.
LOCK_SCOPE_REVISIONS = "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))"

# For the rest of the transaction, every statement is planned for its parameters' values.
FORCE_CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan"

# The lowest links-per-object threshold hubs were made at (mirrortree.neighbourhoods).
HUB_THRESHOLD_APPLIED = "SELECT hub_links FROM context_hub_threshold"
RECORD_HUB_THRESHOLD = """
INSERT INTO context_hub_threshold (hub_links) VALUES ($1)
ON CONFLICT (single) DO UPDATE SET hub_links = least(context_hub_threshold.hub_links, $1)
"""

INSERT_REVIEW_RESULT = """
INSERT INTO review_results (
    result_id, scope_key, scope_projects, phase, covered_from, covered_to,
    review_generated_at, recorded_at, graph_revision, excluded_source_types, request_hash,
    coverage_gaps, object_count)
VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp(), nextval('graph_revision_seq'), $8, $9,
        $10, $11)
RETURNING recorded_at, graph_revision
"""

SELECT_REVIEW_RESULT = """
SELECT recorded_at, graph_revision, object_count FROM review_results WHERE result_id = $1
"""

GRAPH_OBJECT_COLUMNS = (
    "result_id",
    "object_type",
    "object_id",
    "type_rank",
    "scope_key",
    "title",
    "body",
    "kind",
    "object_revision",
    "confirmation_state",
    "event_time_start",
    "event_time_end",
    "event_time_precision",
    "event_time_basis",
    "review_generated_at",
    "recorded_at",
    "details",
    "cited_ids",
)

GRAPH_LINK_COLUMNS = ("scope_key", "result_id", "from_type", "from_id", "link", "to_type", "to_id")

# The newest stored copy of each named object in one scope: ($1 scope key, $2 types, $3 ids).
NEWEST_COPIES_IN_SCOPE = """
SELECT DISTINCT ON (o.object_type, o.object_id)
       o.object_type, o.object_id, o.result_id, o.object_revision
FROM unnest($2::text[], $3::text[]) AS wanted (object_type, object_id)
JOIN graph_objects o
  ON o.object_type = wanted.object_type AND o.object_id = wanted.object_id AND o.scope_key = $1
JOIN review_results r ON r.result_id = o.result_id
ORDER BY o.object_type, o.object_id, r.graph_revision DESC
"""

# A source reference id names one saved fragment for good within a scope: the copies of the
# references a result records ($2 ids, $3 fragments, $4 details as JSON) that an earlier
# result of scope $1 recorded with other content, the earliest such copy per id.
SOURCE_REFERENCE_CONFLICTS = """
SELECT DISTINCT ON (o.object_id) o.object_id, o.result_id, o.body, o.details
FROM unnest($2::text[], $3::text[], $4::text[]) AS mine (object_id, body, details)
JOIN graph_objects o
  ON o.object_type = 'source_reference' AND o.object_id = mine.object_id AND o.scope_key = $1
JOIN review_results r ON r.result_id = o.result_id
WHERE o.body IS DISTINCT FROM mine.body OR o.details IS DISTINCT FROM mine.details::jsonb
ORDER BY o.object_id, r.graph_revision
"""

OBJECT_IN_SCOPE = """
SELECT EXISTS (
    SELECT 1 FROM graph_objects WHERE scope_key = $1 AND object_type = $2 AND object_id = $3)
"""

SELECT_PREFERENCES_BY_ID = """
SELECT id, scope_key, revision FROM preferences WHERE id = any($1::text[])
"""

# ---- sources and preferences ------------------------------------------------------------

SELECT_SOURCE_FOR_UPDATE = """
SELECT source_type, revision FROM sources WHERE source_id = $1 FOR UPDATE
"""

# A create that loses a race with another create of the same id inserts nothing (no row back).
INSERT_SOURCE = """
INSERT INTO sources (source_id, source_type, project_id, title, text, revision, deleted)
VALUES ($1, $2, $3, $4, $5, 1, $5::text IS NULL)
ON CONFLICT (source_id) DO NOTHING
RETURNING revision, updated_at
"""

UPDATE_SOURCE = """
UPDATE sources
SET project_id = $2, title = $3, text = $4, deleted = $4::text IS NULL,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE source_id = $1
RETURNING revision, updated_at
"""

SELECT_PREFERENCE_FOR_UPDATE = """
SELECT revision FROM preferences WHERE id = $1 FOR UPDATE
"""

INSERT_PREFERENCE = """
INSERT INTO preferences (id, scope_key, subject, text, about, confirmed_by, revision)
VALUES ($1, $2, $3, $4, $5::jsonb, $6, 1)
ON CONFLICT (id) DO NOTHING
RETURNING revision, updated_at
"""

UPDATE_PREFERENCE = """
UPDATE preferences
SET scope_key = $2, subject = $3, text = $4, about = $5::jsonb, confirmed_by = $6,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE id = $1
RETURNING revision, updated_at
"""

INSERT_BINDING = """
INSERT INTO bindings (id, token_hash, session_id, runtime, allowed_scopes)
VALUES ($1, $2, $3, $4, $5)
"""

# ---- switches gating the story-graph tools (see tree_service.gating) -----------------------

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
