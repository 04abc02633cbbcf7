-- Stored write responses keep no words a purge or a revocation must forget: this build strips
-- them as it stores each response and fills them in from the current state on a replay
-- (tree_service/stored_responses.py). Rows stored before, or by an earlier build still serving
-- during an upgrade, are marked here and stripped by tree_service at its start and before each
-- purge or revocation.
ALTER TABLE idempotency_keys ADD COLUMN words_stripped boolean NOT NULL DEFAULT false;
CREATE INDEX idempotency_keys_unstripped ON idempotency_keys (key)
    WHERE NOT words_stripped AND response IS NOT NULL;
