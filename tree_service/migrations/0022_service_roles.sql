-- Least privilege: tree_service serves as mirrortree_writer (rows only: no DDL, no owner
-- rights), graph_service as mirrortree_reader (SELECT only, so it cannot write even on the
-- primary it reads the switches from); only the owner, who runs these migrations, changes the
-- schema. Deployment tooling creates both as login roles with their own credentials; a
-- database migrated before that gets them as group roles, to be given LOGIN later.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mirrortree_writer') THEN
        CREATE ROLE mirrortree_writer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'mirrortree_reader') THEN
        CREATE ROLE mirrortree_reader NOLOGIN;
    END IF;
END
$$;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO mirrortree_writer, mirrortree_reader;

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO mirrortree_writer;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO mirrortree_writer;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO mirrortree_reader;
-- The migration ledger is the owner's alone.
REVOKE INSERT, UPDATE, DELETE ON schema_migrations FROM mirrortree_writer;

-- Tables and sequences later migrations create get the same grants.
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO mirrortree_writer;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO mirrortree_writer;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO mirrortree_reader;
