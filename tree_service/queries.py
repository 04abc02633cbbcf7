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
INSERT INTO trees (id, title, owner, project_id, default_realm)
VALUES ($1, $2, $3, $4, $5)
RETURNING id::text, title, owner, project_id, default_realm, revision, created_at, updated_at
"""

SELECT_TREE = """
SELECT id::text, title, owner, project_id, default_realm, revision, created_at, updated_at
FROM trees WHERE id = $1
"""

# Appending a node bumps the tree revision and hands out the next ordinal in one statement;
# the row lock serializes appends to one tree only for the length of this statement's txn.
BUMP_TREE_FOR_APPEND = """
UPDATE trees
SET revision = revision + 1, node_count = node_count + 1, updated_at = clock_timestamp()
WHERE id = $1
RETURNING revision, node_count, default_realm
"""

SELECT_NODE_PARENT = """
SELECT tree_id::text, kind, realm FROM nodes WHERE id = $1
"""

INSERT_NODE = """
INSERT INTO nodes (id, tree_id, parent_id, kind, realm, text, ordinal)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id::text, tree_id::text, parent_id::text, kind, realm, text, revision, ordinal,
          created_at
"""

LIST_NODES = """
SELECT id::text, tree_id::text, parent_id::text, kind, realm, text, revision, ordinal, created_at
FROM nodes
WHERE tree_id = $1 AND ordinal > $2
ORDER BY ordinal
LIMIT $3
"""

SELECT_REVIEW_HASH = "SELECT request_hash FROM review_results WHERE result_id = $1"

INSERT_REVIEW_RESULT = """
INSERT INTO review_results (
    result_id, scope_key, scope_projects, phase, covered_from, covered_to,
    review_generated_at, recorded_at, graph_revision, excluded_source_types, request_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, clock_timestamp(), nextval('graph_revision_seq'), $8, $9)
RETURNING recorded_at, graph_revision
"""

SELECT_REVIEW_RESULT = """
SELECT r.recorded_at, r.graph_revision,
       (SELECT count(*) FROM graph_objects o WHERE o.result_id = r.result_id) AS object_count
FROM review_results r WHERE r.result_id = $1
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
)

INSERT_BINDING = """
INSERT INTO bindings (id, token_hash, session_id, runtime) VALUES ($1, $2, $3, $4)
"""

SELECT_BINDING_BY_ID = """
SELECT b.id::text, b.session_id::text, b.runtime, t.project_id
FROM bindings b JOIN trees t ON t.id = b.session_id
WHERE b.id = $1
"""
