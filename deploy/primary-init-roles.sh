#!/usr/bin/env bash
# Runs once, from /docker-entrypoint-initdb.d, when the official postgres image
# initialises an empty primary data directory (later starts skip it).
#
# Creates the services' least-privilege login roles (SECURITY.md):
#   mirrortree_writer  tree_service serves as it: rows only, no DDL
#                      (password MIRRORTREE_PG_WRITER_PASSWORD)
#   mirrortree_reader  graph_service reads as it: SELECT only, sessions read-only
#                      (password MIRRORTREE_PG_READER_PASSWORD)
# $POSTGRES_USER stays the schema owner, which tree_service migrates as. Migration
# 0022 grants the two roles their rights; replicas inherit the roles by cloning.
#
# The body runs in a subshell so that its shell options cannot leak into the
# image's entrypoint if this file is sourced (as happens when it is not executable).
(
set -Eeuo pipefail

: "${MIRRORTREE_PG_WRITER_PASSWORD:?set MIRRORTREE_PG_WRITER_PASSWORD}"
: "${MIRRORTREE_PG_READER_PASSWORD:?set MIRRORTREE_PG_READER_PASSWORD}"

echo "mirrortree: creating the login roles mirrortree_writer and mirrortree_reader"
PGHOST='' PGHOSTADDR='' psql -v ON_ERROR_STOP=1 --no-psqlrc --no-password \
    --username "${POSTGRES_USER}" --dbname "${POSTGRES_DB:-${POSTGRES_USER}}" \
    --set writer_password="${MIRRORTREE_PG_WRITER_PASSWORD}" \
    --set reader_password="${MIRRORTREE_PG_READER_PASSWORD}" >/dev/null <<'SQL'
CREATE ROLE mirrortree_writer LOGIN PASSWORD :'writer_password';
CREATE ROLE mirrortree_reader LOGIN PASSWORD :'reader_password';
ALTER ROLE mirrortree_reader SET default_transaction_read_only = on;
SQL
)
