#!/usr/bin/env bash
# Entrypoint for a PostgreSQL streaming replica, for the official postgres image.
#
# On first start (no cluster in $PGDATA) it waits for the primary, clones it with
#   pg_basebackup -h <primary> -U <user> -D <staging> -X stream -R -S <slot>
# (creating the physical slot on the primary if it does not exist yet), moves the
# finished copy into $PGDATA and fixes its permissions; then, and on every later
# start, it execs the server, which comes up as a hot standby (-R wrote
# standby.signal and primary_conninfo/primary_slot_name).
#
# The clone is made in "$PGDATA.partial" and renamed only when complete, so an
# interrupted first start is simply retried. $PGDATA must therefore be a
# directory *inside* the mounted volume, not the mount point itself.
#
# Environment:
#   MIRRORTREE_REPLICATION_SLOT  required; this replica's own physical slot name
#                                (each replica needs a different one)
#   MIRRORTREE_PRIMARY_HOST      default "primary"
#   MIRRORTREE_PRIMARY_PORT      default 5432
#   MIRRORTREE_REPLICATION_USER  the primary's replication role, default "mirrortree_replicator"
#   POSTGRES_DB                  database used for the slot look-up, default "mirrortree"
#   PGPASSWORD                   the replication role's password on the primary
#   PGDATA                       data directory; the image sets it (/var/lib/postgresql/18/docker
#                                for postgres:18, inside the volume at /var/lib/postgresql)
set -Eeuo pipefail

export PGDATA="${PGDATA:-/var/lib/postgresql/18/docker}"
primary_host="${MIRRORTREE_PRIMARY_HOST:-primary}"
primary_port="${MIRRORTREE_PRIMARY_PORT:-5432}"
repl_user="${MIRRORTREE_REPLICATION_USER:-mirrortree_replicator}"
repl_db="${POSTGRES_DB:-mirrortree}"
slot="${MIRRORTREE_REPLICATION_SLOT:-}"

log() { echo "replica-entrypoint: $*" >&2; }

# Conventional postgres-image behaviour: "-c foo=bar ..." means "postgres -c foo=bar ...".
if [[ $# -eq 0 || "$1" == -* ]]; then
    set -- postgres "$@"
fi

# Started as root (the image default): own the data directory, then drop to postgres.
if [[ "$(id -u)" == "0" ]]; then
    mkdir -p "${PGDATA}"
    chown postgres:postgres "$(dirname "${PGDATA}")"
    find "$(dirname "${PGDATA}")" \! -user postgres -exec chown postgres:postgres '{}' +
    chmod 0700 "${PGDATA}"
    exec gosu postgres bash "${BASH_SOURCE[0]}" "$@"
fi

if [[ ! -s "${PGDATA}/PG_VERSION" ]]; then
    if [[ ! "${slot}" =~ ^[a-z0-9_]{1,63}$ ]]; then
        log "MIRRORTREE_REPLICATION_SLOT must be set to this replica's slot name" \
            "(lower-case letters, digits, underscores; got '${slot}')"
        exit 1
    fi
    if [[ -d "${PGDATA}" && -n "$(ls -A "${PGDATA}")" ]]; then
        log "${PGDATA} is not empty but holds no cluster; refusing to overwrite it"
        exit 1
    fi

    log "waiting for the primary at ${primary_host}:${primary_port}"
    until pg_isready -q -h "${primary_host}" -p "${primary_port}" -U "${repl_user}" -d "${repl_db}"
    do
        sleep 2
    done

    create_slot=()
    exists="$(psql -h "${primary_host}" -p "${primary_port}" -U "${repl_user}" -d "${repl_db}" \
        --no-psqlrc --no-password -tAc \
        "SELECT 1 FROM pg_replication_slots WHERE slot_name = '${slot}'")"
    if [[ "${exists}" != "1" ]]; then
        log "slot ${slot} does not exist on the primary yet; pg_basebackup will create it"
        create_slot=(--create-slot)
    fi

    staging="${PGDATA%/}.partial"
    rm -rf "${staging}"
    log "cloning the primary into ${PGDATA} (slot ${slot})"
    pg_basebackup -h "${primary_host}" -p "${primary_port}" -U "${repl_user}" \
        -D "${staging}" -X stream -R -S "${slot}" "${create_slot[@]}" \
        --checkpoint=fast --no-password --verbose
    chmod 0700 "${staging}"
    if ! rmdir "${PGDATA}" 2>/dev/null && [[ -e "${PGDATA}" ]]; then
        log "cannot replace ${PGDATA} (is it a mount point? use a directory inside the volume)"
        exit 1
    fi
    mv -T "${staging}" "${PGDATA}"
    log "base backup complete"
fi

chmod 0700 "${PGDATA}"
exec "$@"
