"""SQL of delegated tasks, their reports and the tree's event stream."""

TASK_COLUMNS = """
t.id::text, t.position, t.tree_id::text, t.branch_node_id::text, t.goal, t.budget_tokens,
t.budget_cost_micros, t.currency, t.deadline, t.capability_scope, t.data_scope,
t.stop_conditions, t.max_consecutive_failures, t.state, t.stop_reason, t.spent_tokens,
t.spent_cost_micros, t.consecutive_failures, t.attempts, t.lease_token::text, t.leased_by,
t.lease_seconds, t.lease_expires_at, t.observation_id::text, t.accepted_answer_id::text,
t.started_by, t.revision, t.created_at, t.updated_at, t.estimate_id::text
"""

INSERT_TASK = (
    """
INSERT INTO tasks AS t (
    id, tree_id, branch_node_id, goal, budget_tokens, budget_cost_micros, currency, deadline,
    capability_scope, data_scope, stop_conditions, max_consecutive_failures, started_by,
    estimate_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
RETURNING """
    + TASK_COLUMNS
)

SELECT_TASK = "SELECT " + TASK_COLUMNS + " FROM tasks t WHERE t.id = $1"

# With the database's clock, the one leases and deadlines are compared with in SQL.
SELECT_TASK_NOW = (
    "SELECT " + TASK_COLUMNS + ", clock_timestamp() AS now FROM tasks t WHERE t.id = $1"
)

LOCK_TASK = SELECT_TASK_NOW + " FOR UPDATE"

# Claimable: queued, or running under a lease that ran out (its worker is gone). SKIP LOCKED
# lets concurrent claimers pass over each other's candidates instead of queueing behind them;
# the state is re-checked on the locked row, so no two claims can take one task. One row at a
# time, so that a claim holds no task it does not take, past those it passed over ($4) and
# every task hanging on a node it found in a closed branch ($5).
NEXT_CLAIMABLE = """
SELECT t.id, t.branch_node_id::text AS branch_node_id FROM tasks t
WHERE (t.state = 'queued' OR (t.state = 'running' AND t.lease_expires_at <= clock_timestamp()))
  AND t.capability_scope <@ $1::text[]
  AND ($2::uuid IS NULL OR t.tree_id = $2)
  AND ($3::uuid IS NULL OR t.branch_node_id = $3)
  AND t.id <> all($4::uuid[])
  AND t.branch_node_id <> all($5::uuid[])
ORDER BY t.position
LIMIT 1
FOR UPDATE SKIP LOCKED
"""

# The tree row of task $1, locked as an append to it locks it.
LOCK_TASK_TREE = """
SELECT 1 FROM trees WHERE id = (SELECT tree_id FROM tasks WHERE id = $1) FOR NO KEY UPDATE
"""

# The tasks of tree $1 a safety stop holds: queued, or running (under any lease).
HELD_BY_STOP = (
    "SELECT "
    + TASK_COLUMNS
    + """
FROM tasks t
WHERE t.tree_id = $1 AND t.state IN ('queued', 'running')
ORDER BY t.position
FOR UPDATE
"""
)

# Tasks whose deadline passed while nobody ran them, or whose worker vanished past it.
OVERDUE = """
SELECT t.id FROM tasks t
WHERE t.state IN ('queued', 'running') AND t.deadline <= clock_timestamp()
  AND (t.state = 'queued' OR t.lease_expires_at <= clock_timestamp())
ORDER BY t.deadline
LIMIT $1
FOR UPDATE SKIP LOCKED
"""

LEASE_TASK = (
    """
UPDATE tasks AS t
SET state = 'running', lease_token = $2, leased_by = $3, lease_seconds = $4::integer,
    lease_expires_at = clock_timestamp() + make_interval(secs => $4::integer),
    attempts = attempts + 1, revision = revision + 1, updated_at = clock_timestamp()
WHERE t.id = $1
RETURNING """
    + TASK_COLUMNS
)

RENEW_LEASE = (
    """
UPDATE tasks AS t
SET lease_expires_at = clock_timestamp() + make_interval(secs => lease_seconds),
    updated_at = clock_timestamp()
WHERE t.id = $1
RETURNING """
    + TASK_COLUMNS
)

# A worker's report: spend is added and failures counted; the lease stays.
ACCOUNT = (
    """
UPDATE tasks AS t
SET spent_tokens = spent_tokens + $2, spent_cost_micros = spent_cost_micros + $3,
    consecutive_failures = CASE WHEN $4 THEN consecutive_failures + 1 ELSE 0 END,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE t.id = $1
RETURNING """
    + TASK_COLUMNS
)

# Leaves the running state: requeued ('queued'), stopped, completed or cancelled.
SETTLE = (
    """
UPDATE tasks AS t
SET state = $2, stop_reason = $3, observation_id = coalesce($4, observation_id),
    lease_token = NULL, leased_by = NULL, lease_seconds = NULL, lease_expires_at = NULL,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE t.id = $1
RETURNING """
    + TASK_COLUMNS
)

RESUME = (
    """
UPDATE tasks AS t
SET state = 'queued', stop_reason = NULL, consecutive_failures = 0,
    budget_tokens = $2, budget_cost_micros = $3, deadline = $4,
    revision = revision + 1, updated_at = clock_timestamp()
WHERE t.id = $1
RETURNING """
    + TASK_COLUMNS
)

ACCEPT = (
    """
UPDATE tasks AS t
SET accepted_answer_id = $2, accepted_by = $3, revision = revision + 1,
    updated_at = clock_timestamp()
WHERE t.id = $1
RETURNING """
    + TASK_COLUMNS
)

INSERT_REPORT = """
INSERT INTO task_reports (task_id, seq, attempt, kind, message, evidence, tokens, cost_micros,
                          reported_by)
SELECT $1::uuid, coalesce(max(seq), 0) + 1, $2::integer, $3::text, $4::text, $5::jsonb,
       $6::bigint, $7::bigint, $8::text
FROM task_reports WHERE task_id = $1::uuid
"""

SELECT_REPORTS = """
SELECT seq, attempt, kind, message, evidence, tokens, cost_micros, reported_by, created_at
FROM (SELECT * FROM task_reports WHERE task_id = $1 ORDER BY seq DESC LIMIT $2) r
ORDER BY seq
"""

LIST_TASKS = (
    "SELECT "
    + TASK_COLUMNS
    + """
FROM tasks t
WHERE t.tree_id = $1 AND ($2::uuid IS NULL OR t.branch_node_id = $2)
  AND (cardinality($3::text[]) = 0 OR t.state = any($3::text[]))
  AND t.position > $4
ORDER BY t.position
LIMIT $5
"""
)


# ---- the event stream ----------------------------------------------------------------------

EVENTS_AFTER = """
SELECT seq, kind, subject_id::text, detail::text, created_at
FROM tree_events WHERE tree_id = $1 AND seq > $2
ORDER BY seq
LIMIT $3
"""

# The task an estimate already pays for, if any.
TASK_OF_ESTIMATE = "SELECT id::text FROM tasks WHERE estimate_id = $1"
