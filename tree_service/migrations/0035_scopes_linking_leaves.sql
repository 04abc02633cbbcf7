-- Search and GetContext read the leaves a scope linked only when it linked any: their openings
-- ask whether the scope has a linked use through this index of linked uses alone, one probe,
-- where the primary key would read every leaf the scope recorded itself before finding none.
-- Without it every search planned its read of linked leaves with its values (about 1 ms of
-- the replica's CPU) to find nothing in most scopes.
CREATE INDEX leaf_uses_linked ON leaf_uses (scope_key) WHERE linked;
