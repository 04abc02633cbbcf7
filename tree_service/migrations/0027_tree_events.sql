-- WatchTree: every change a UI is told about, numbered per tree in the transaction that makes
-- it. The number is drawn under the row lock of the tree's head, so within a tree numbers are
-- handed out in commit order: a reader that has seen number n can never later find a smaller
-- one committed, and resuming "after n" misses nothing and repeats nothing.

CREATE TABLE tree_event_heads (
    tree_id uuid PRIMARY KEY REFERENCES trees (id) ON DELETE CASCADE,
    seq bigint NOT NULL
);

CREATE TABLE tree_events (
    tree_id uuid NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    kind text NOT NULL CHECK (kind IN (
        'node_appended', 'bud_ended', 'branch_state_changed', 'task_changed')),
    subject_id uuid NOT NULL,  -- the node, branch root node or task
    detail jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (tree_id, seq)
);

CREATE FUNCTION record_tree_event(tree uuid, event_kind text, subject uuid, info jsonb)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    next_seq bigint;
BEGIN
    INSERT INTO tree_event_heads AS h (tree_id, seq) VALUES (tree, 1)
    ON CONFLICT (tree_id) DO UPDATE SET seq = h.seq + 1
    RETURNING seq INTO next_seq;
    INSERT INTO tree_events (tree_id, seq, kind, subject_id, detail)
    VALUES (tree, next_seq, event_kind, subject, info);
    -- Delivered at commit only: a woken watcher always finds the event committed.
    PERFORM pg_notify('tree_events', tree::text);
END;
$$;

CREATE FUNCTION node_tree_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM record_tree_event(NEW.tree_id, 'node_appended', NEW.id, jsonb_build_object(
            'kind', NEW.kind, 'parent_id', NEW.parent_id, 'answer_state', NEW.answer_state));
    ELSIF OLD.answer_state = 'streaming' AND NEW.answer_state <> 'streaming' THEN
        PERFORM record_tree_event(NEW.tree_id, 'bud_ended', NEW.id, jsonb_build_object(
            'answer_state', NEW.answer_state, 'stop_reason', NEW.stop_reason));
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER nodes_tree_events AFTER INSERT OR UPDATE OF answer_state ON nodes
    FOR EACH ROW EXECUTE FUNCTION node_tree_event();

CREATE FUNCTION branch_tree_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM record_tree_event(b.tree_id, 'branch_state_changed', NEW.node_id, jsonb_build_object(
        'from_state', NEW.from_state, 'to_state', NEW.to_state, 'revision', NEW.revision))
    FROM branches b WHERE b.node_id = NEW.node_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER branch_transitions_tree_events AFTER INSERT ON branch_transitions
    FOR EACH ROW EXECUTE FUNCTION branch_tree_event();

CREATE FUNCTION task_tree_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR OLD.state IS DISTINCT FROM NEW.state
       OR OLD.attempts IS DISTINCT FROM NEW.attempts
       OR OLD.accepted_answer_id IS DISTINCT FROM NEW.accepted_answer_id THEN
        PERFORM record_tree_event(NEW.tree_id, 'task_changed', NEW.id, jsonb_build_object(
            'state', NEW.state, 'stop_reason', NEW.stop_reason,
            'branch_node_id', NEW.branch_node_id, 'observation_id', NEW.observation_id,
            'accepted_answer_id', NEW.accepted_answer_id, 'revision', NEW.revision));
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER tasks_tree_events AFTER INSERT OR UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION task_tree_event();
