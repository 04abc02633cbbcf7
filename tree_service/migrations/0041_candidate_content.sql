-- T22 and seed 001 §6: a canon candidate carries the content the caller proposed (a heart
-- trace, a memory and what it is about); an accepted long-term memory names the confirmed
-- preference it became. Candidates recorded before have no content, and say so by being empty.
-- They are listed in the order they were proposed.
ALTER TABLE canon_candidates
    ADD COLUMN position  integer NOT NULL DEFAULT 0,
    ADD COLUMN subject   text NOT NULL DEFAULT '',
    ADD COLUMN text      text NOT NULL DEFAULT '',
    ADD COLUMN memory_id text REFERENCES preferences (id);
