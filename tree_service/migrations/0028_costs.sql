-- T20: cost visibility. An owner's pre-authorized quota, charged atomically: a charge adds to
-- `reserved` only while limit_amount - reserved - spent covers it (one UPDATE ... WHERE), so
-- concurrent charges can never overdraw it; only an approved estimate may run above it.
CREATE TABLE quotas (
    owner text PRIMARY KEY,
    currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    limit_amount numeric NOT NULL CHECK (limit_amount >= 0),
    reserved numeric NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    spent numeric NOT NULL DEFAULT 0 CHECK (spent >= 0),
    parallel_approval_cost numeric CHECK (parallel_approval_cost >= 0),
    revision bigint NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The caller's estimate of one request, priced by the caller, with its exact cost; its
-- charge (reserve, then settle) and the user's approval stay on the same row.
CREATE TABLE estimates (
    id uuid PRIMARY KEY,
    tree_id uuid NOT NULL REFERENCES trees (id),
    owner text NOT NULL,
    operation text NOT NULL CHECK (operation IN (
        'regenerate', 'continue', 'compare_candidates', 'start_task')),
    target_id uuid NOT NULL REFERENCES nodes (id),
    model_strategy text NOT NULL,
    input_tokens bigint NOT NULL CHECK (input_tokens >= 0),
    output_tokens bigint NOT NULL CHECK (output_tokens >= 0),
    parallelism int NOT NULL CHECK (parallelism >= 1),
    currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    input_price_per_million numeric NOT NULL CHECK (input_price_per_million >= 0),
    output_price_per_million numeric NOT NULL CHECK (output_price_per_million >= 0),
    per_run_fee numeric NOT NULL CHECK (per_run_fee >= 0),
    cost numeric NOT NULL CHECK (cost >= 0),
    requested_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    charge_state text NOT NULL DEFAULT 'not_charged' CHECK (charge_state IN (
        'not_charged', 'reserved', 'settled')),
    over_quota boolean NOT NULL DEFAULT false,
    charged_at timestamptz,
    settled_at timestamptz,
    actual_cost numeric CHECK (actual_cost >= 0),
    actual_input_tokens bigint,
    actual_output_tokens bigint,
    approved_by text,
    approval_reason text NOT NULL DEFAULT '',
    approved_at timestamptz,
    CHECK ((charge_state = 'not_charged') = (charged_at IS NULL)),
    CHECK ((charge_state = 'settled') = (actual_cost IS NOT NULL)),
    CHECK ((approved_by IS NULL) = (approved_at IS NULL))
);
CREATE INDEX estimates_tree ON estimates (tree_id, created_at);

-- The nodes generated under an estimate (at most its parallelism), in order.
CREATE TABLE estimate_nodes (
    node_id uuid PRIMARY KEY REFERENCES nodes (id),
    estimate_id uuid NOT NULL REFERENCES estimates (id),
    position int NOT NULL,
    UNIQUE (estimate_id, position)
);

-- T23: a comparison of sibling candidate answers is a node of its own, under their question.
ALTER TABLE nodes
    DROP CONSTRAINT nodes_kind_check,
    ADD CONSTRAINT nodes_kind_check CHECK (kind IN (
        'question', 'answer', 'continuation', 'observation', 'comparison')),
    ADD COLUMN comparison jsonb;
