"""SQL of estimates, quotas, charges and comparisons."""

ESTIMATE_COLUMNS = """
e.id::text, e.tree_id::text, e.owner, e.operation, e.target_id::text, e.model_strategy,
e.input_tokens, e.output_tokens, e.parallelism, e.currency, e.input_price_per_million,
e.output_price_per_million, e.per_run_fee, e.cost, e.requested_by, e.created_at,
e.charge_state, e.over_quota, e.charged_at, e.settled_at, e.actual_cost, e.approved_by,
e.approval_reason, e.approved_at,
ARRAY(SELECT u.node_id::text FROM estimate_nodes u WHERE u.estimate_id = e.id
      ORDER BY u.position) AS node_ids
"""

QUOTA_COLUMNS = """
owner, currency, limit_amount, reserved, spent, parallel_approval_cost, revision, updated_at
"""

TREE_OWNER = "SELECT owner FROM trees WHERE id = $1"

NODE_OF_TREE = "SELECT tree_id::text, kind FROM nodes WHERE id = $1"

INSERT_ESTIMATE = (
    """
INSERT INTO estimates AS e (
    id, tree_id, owner, operation, target_id, model_strategy, input_tokens, output_tokens,
    parallelism, currency, input_price_per_million, output_price_per_million, per_run_fee,
    cost, requested_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
RETURNING """
    + ESTIMATE_COLUMNS
)

SELECT_ESTIMATE = "SELECT " + ESTIMATE_COLUMNS + " FROM estimates e WHERE e.id = $1"

# Charging, approving, settling and recording a node under an estimate take its row lock, so
# each estimate is charged and settled once whatever runs concurrently.
LOCK_ESTIMATE = "SELECT " + ESTIMATE_COLUMNS + " FROM estimates e WHERE e.id = $1 FOR UPDATE"

APPROVE_ESTIMATE = """
UPDATE estimates SET approved_by = $2, approval_reason = $3, approved_at = clock_timestamp()
WHERE id = $1
"""

MARK_RESERVED = """
UPDATE estimates
SET charge_state = 'reserved', charged_at = clock_timestamp(), over_quota = $2
WHERE id = $1 AND charge_state = 'not_charged'
"""

MARK_SETTLED = """
UPDATE estimates
SET charge_state = 'settled', settled_at = clock_timestamp(), actual_cost = $2,
    actual_input_tokens = $3, actual_output_tokens = $4
WHERE id = $1 AND charge_state = 'reserved'
"""

SELECT_QUOTA = "SELECT " + QUOTA_COLUMNS + " FROM quotas WHERE owner = $1"

# The whole quota check is this one statement: under READ COMMITTED a concurrent charge that
# updated the row first makes PostgreSQL re-check the WHERE against the new row, so no two
# charges can both fit into the same remainder.
RESERVE_WITHIN_QUOTA = (
    """
UPDATE quotas SET reserved = reserved + $3, updated_at = clock_timestamp()
WHERE owner = $1 AND currency = $2 AND limit_amount - reserved - spent >= $3
RETURNING """
    + QUOTA_COLUMNS
)

# Only for an estimate the user approved: it may run above the quota.
RESERVE_APPROVED = (
    """
UPDATE quotas SET reserved = reserved + $3, updated_at = clock_timestamp()
WHERE owner = $1 AND currency = $2
RETURNING """
    + QUOTA_COLUMNS
)

SETTLE_QUOTA = (
    """
UPDATE quotas
SET reserved = reserved - $2, spent = spent + $3, updated_at = clock_timestamp()
WHERE owner = $1
RETURNING """
    + QUOTA_COLUMNS
)

INSERT_QUOTA = (
    """
INSERT INTO quotas (owner, currency, limit_amount, parallel_approval_cost)
VALUES ($1, $2, $3, $4)
ON CONFLICT (owner) DO NOTHING
RETURNING """
    + QUOTA_COLUMNS
)

UPDATE_QUOTA = (
    """
UPDATE quotas
SET currency = $2, limit_amount = $3, parallel_approval_cost = $4, revision = revision + 1,
    updated_at = clock_timestamp()
WHERE owner = $1 AND revision = $5
RETURNING """
    + QUOTA_COLUMNS
)

NEXT_ESTIMATE_NODE = """
SELECT count(*)::int FROM estimate_nodes WHERE estimate_id = $1
"""

INSERT_ESTIMATE_NODE = """
INSERT INTO estimate_nodes (node_id, estimate_id, position) VALUES ($1, $2, $3)
"""

SIBLING_ANSWERS = """
SELECT id::text, parent_id::text, tree_id::text, kind FROM nodes WHERE id = any($1::uuid[])
"""

SET_COMPARISON = """
UPDATE nodes SET comparison = $2 WHERE id = $1
"""
