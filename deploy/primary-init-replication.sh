#!/usr/bin/env bash
# Runs once, from /docker-entrypoint-initdb.d, when the official postgres image
# initialises an empty primary data directory (later starts skip it).
#
# 1. Creates the replication role MIRRORTREE_REPLICATION_USER (default
#    mirrortree_replicator; password MIRRORTREE_REPLICATION_PASSWORD): LOGIN REPLICATION
#    and nothing else, so a replica holds no owner's password.
# 2. Allows streaming-replication connections (pg_basebackup, walreceiver) from any
#    address for that role only, with password authentication.
# 3. Creates one physical replication slot per name in MIRRORTREE_REPLICATION_SLOTS
#    (comma-separated, default "replica_1"), so the primary keeps the WAL each
#    replica still needs. A replica whose slot is missing creates it itself when it
#    clones (see replica-entrypoint.sh), so adding replicas later needs no change here.
#
# Note: an unused slot makes the primary keep WAL forever. When you remove a
# replica for good, drop its slot:  SELECT pg_drop_replication_slot('replica_2');
#
# The body runs in a subshell so that its shell options cannot leak into the
# image's entrypoint if this file is sourced (as happens when it is not executable).
(
set -Eeuo pipefail

slots="${MIRRORTREE_REPLICATION_SLOTS:-replica_1}"
auth_method="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
repl_user="${MIRRORTREE_REPLICATION_USER:-mirrortree_replicator}"
: "${MIRRORTREE_REPLICATION_PASSWORD:?set MIRRORTREE_REPLICATION_PASSWORD}"
if [[ ! "${repl_user}" =~ ^[a-z_][a-z0-9_]{0,62}$ ]]; then
    echo "mirrortree: invalid replication user name '${repl_user}'" >&2
    exit 1
fi

# The image's temporary server listens on the local socket only, where initdb
# configured trust authentication.
psql_cmd=(psql -v ON_ERROR_STOP=1 --no-psqlrc --no-password
    --username "${POSTGRES_USER}" --dbname "${POSTGRES_DB:-${POSTGRES_USER}}")

echo "mirrortree: creating the replication role ${repl_user}"
PGHOST='' PGHOSTADDR='' "${psql_cmd[@]}" --set user="${repl_user}" \
    --set password="${MIRRORTREE_REPLICATION_PASSWORD}" >/dev/null <<'SQL'
CREATE ROLE :"user" LOGIN REPLICATION PASSWORD :'password';
SQL

echo "mirrortree: allowing replication connections for ${repl_user} (${auth_method})"
{
    echo
    echo "# mirrortree: streaming replicas (pg_basebackup, walreceiver)"
    echo "host replication ${repl_user} all ${auth_method}"
} >> "${PGDATA}/pg_hba.conf"

IFS=',' read -r -a slot_list <<< "${slots}"
for slot in "${slot_list[@]}"; do
    slot="${slot//[[:space:]]/}"
    [[ -z "${slot}" ]] && continue
    if [[ ! "${slot}" =~ ^[a-z0-9_]{1,63}$ ]]; then
        echo "mirrortree: invalid replication slot name '${slot}'" \
            "(use lower-case letters, digits and underscores)" >&2
        exit 1
    fi
    echo "mirrortree: creating physical replication slot ${slot}"
    # Reserving WAL at once (the second argument): replicas cloning side by side each force
    # a checkpoint, which would otherwise recycle WAL another clone is still streaming.
    PGHOST='' PGHOSTADDR='' "${psql_cmd[@]}" --set slot="${slot}" >/dev/null <<'SQL'
SELECT pg_create_physical_replication_slot(:'slot', true)
WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = :'slot');
SQL
done
)
