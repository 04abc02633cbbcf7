-- G9: GetContext lists the leaves a scope linked that are about the object read, found through
-- the `about` links of the scope's uses rather than by reading every use of the scope. No
-- pending list (fastupdate), as for the text indexes: every read would scan it whole.
CREATE INDEX leaf_uses_about ON leaf_uses USING gin (about jsonb_path_ops)
    WITH (fastupdate = off) WHERE linked;
