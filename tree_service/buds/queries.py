"""SQL of buds: answers streamed chunk by chunk under a lease."""

from tree_service.nodes.rows import NODE_COLUMNS

# A batch of chunks ($1 buds, $2 seqs, $3 texts) stored in one statement, which is its own
# transaction: only the chunks of buds still streaming are kept (each such bud share-locked,
# so an ending bud waits for the batch or the batch sees it ended), and a re-sent chunk is
# stored once. The bud's row is not written: while it streams, its text and count of
# acknowledged chunks are read from its chunks (NODE_COLUMNS). One row per chunk: `live`, and
# the text stored under its seq (this chunk's, or the one stored before it).
STORE_CHUNKS = """
WITH batch AS (
    SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[]) AS b (node_id, seq, text)
), live AS (
    SELECT id FROM nodes
    WHERE id = any($1::uuid[]) AND answer_state = 'streaming'
    FOR SHARE
), inserted AS (
    INSERT INTO bud_chunks (node_id, seq, text)
    SELECT b.node_id, b.seq, b.text FROM batch b JOIN live ON live.id = b.node_id
    ON CONFLICT (node_id, seq) DO NOTHING
    RETURNING node_id, seq, text
)
SELECT b.node_id, b.seq, live.id IS NOT NULL AS live,
       coalesce(i.text, (SELECT c.text FROM bud_chunks c
                         WHERE c.node_id = b.node_id AND c.seq = b.seq)) AS stored
FROM batch b
LEFT JOIN live ON live.id = b.node_id
LEFT JOIN inserted i ON i.node_id = b.node_id AND i.seq = b.seq
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

# The buds streaming in tree $1, locked each as LOCK_STREAMING_BUD locks one.
STREAMING_IN_TREE = """
SELECT id FROM nodes WHERE tree_id = $1 AND answer_state = 'streaming' ORDER BY id FOR UPDATE
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
