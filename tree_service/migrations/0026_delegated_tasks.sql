-- T19: delegated tasks queued on a branch, claimed by workers under a lease, stopped by the
-- service at their budget, deadline or consecutive failures; a result comes back to the branch
-- as an observation node ("echo"), which only the user's acceptance turns into an answer.

ALTER TABLE nodes DROP CONSTRAINT nodes_kind_check;
ALTER TABLE nodes ADD CONSTRAINT nodes_kind_check
    CHECK (kind IN ('question', 'answer', 'continuation', 'observation'));

CREATE TABLE tasks (
    id uuid PRIMARY KEY,
    position bigserial UNIQUE,  -- queue and listing order
    tree_id uuid NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
    branch_node_id uuid NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    goal text NOT NULL,
    budget_tokens bigint NOT NULL CHECK (budget_tokens > 0),
    budget_cost_micros bigint NOT NULL CHECK (budget_cost_micros > 0),
    currency text NOT NULL,
    deadline timestamptz NOT NULL,
    capability_scope text[] NOT NULL,
    data_scope text[] NOT NULL,
    stop_conditions text[] NOT NULL,
    max_consecutive_failures integer NOT NULL CHECK (max_consecutive_failures >= 1),
    state text NOT NULL DEFAULT 'queued' CHECK (state IN (
        'queued', 'running', 'needs_instructions', 'completed', 'cancelled')),
    stop_reason text CHECK (stop_reason IN (
        'token_budget', 'cost_budget', 'deadline', 'consecutive_failures')),
    spent_tokens bigint NOT NULL DEFAULT 0,
    spent_cost_micros bigint NOT NULL DEFAULT 0,
    consecutive_failures integer NOT NULL DEFAULT 0,
    attempts integer NOT NULL DEFAULT 0,
    lease_token uuid,
    leased_by text,
    lease_seconds integer,
    lease_expires_at timestamptz,
    observation_id uuid REFERENCES nodes (id) ON DELETE SET NULL,
    accepted_answer_id uuid REFERENCES nodes (id) ON DELETE SET NULL,
    accepted_by text,
    started_by text NOT NULL,
    revision bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((state = 'running') = (lease_token IS NOT NULL)),
    CHECK ((state = 'needs_instructions') = (stop_reason IS NOT NULL))
);
-- Workers take the oldest claimable task; a lease that ran out makes its task claimable again.
CREATE INDEX tasks_claimable ON tasks (position) WHERE state IN ('queued', 'running');
-- The sweep that stops tasks past their deadline nobody is working on.
CREATE INDEX tasks_deadline ON tasks (deadline) WHERE state IN ('queued', 'running');
CREATE INDEX tasks_branch ON tasks (branch_node_id, position);
CREATE INDEX tasks_tree ON tasks (tree_id, position);

-- Everything a task did, in order: progress, spend, failures, lease losses, stops, results and
-- the user's instructions; the evidence a stopped task keeps.
CREATE TABLE task_reports (
    task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    attempt integer NOT NULL,
    kind text NOT NULL CHECK (kind IN (
        'progress', 'step_failed', 'attempt_failed', 'lease_expired', 'stopped', 'result',
        'instructions', 'cancelled')),
    message text NOT NULL,
    evidence jsonb NOT NULL DEFAULT '[]',
    tokens bigint NOT NULL DEFAULT 0,
    cost_micros bigint NOT NULL DEFAULT 0,
    reported_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (task_id, seq)
);
