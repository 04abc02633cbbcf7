"""SQL of buds: answers streamed chunk by chunk under a lease."""

from tree_service.conversation.queries import NODE_COLUMNS

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
