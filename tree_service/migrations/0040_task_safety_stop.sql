-- A safety stop stated in a tree stops its delegated tasks too (seed 001 §7: a current safety
-- stop takes effect at once): they wait for the user's instructions with this reason.
ALTER TABLE tasks DROP CONSTRAINT tasks_stop_reason_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_stop_reason_check CHECK (stop_reason IN (
    'token_budget', 'cost_budget', 'deadline', 'consecutive_failures', 'safety_stop'));
