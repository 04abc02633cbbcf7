-- T19 + T20: a delegated task may be started under a START_TASK estimate, charged to the
-- owner's quota when the task starts and settled with its spend when it ends; an estimate pays
-- for one task.
ALTER TABLE tasks ADD COLUMN estimate_id uuid UNIQUE REFERENCES estimates (id);
