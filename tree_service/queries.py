"""SQL of the shared transactional core: idempotency keys and the commit position."""

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
