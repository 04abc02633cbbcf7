"""The life cycle of the two servers: create the primary (initdb), copy the replica from it
(pg_basebackup through a replication slot), start, stop and wait until each answers and the
replica streams."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import pwd
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from devtools.pgcluster.config import (
    ADMIN_ROLE,
    ENV_DATA_DIR,
    ENV_OS_USER,
    ENV_PG_BIN,
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    STREAM_TIMEOUT_S,
    ClusterConfig,
    ClusterError,
)
from devtools.pgcluster.files import configure, write_if_changed
from devtools.pgcluster.processes import (
    Layout,
    Node,
    check_port_free,
    log_tail,
    postmaster_pid,
    postmaster_port,
    wait_processes_gone,
)
from devtools.pgcluster.runner import Runner
from devtools.pgcluster.sql import ident, literal, query, try_query

log = logging.getLogger(__name__)


def has_cluster_files(datadir: Path) -> bool:
    """Whether datadir holds a created cluster (its version file and control file)."""
    return (datadir / "PG_VERSION").is_file() and (datadir / "global" / "pg_control").is_file()


def is_empty_or_missing(path: Path) -> bool:
    """Whether path does not exist or is an empty folder."""
    return not path.exists() or (path.is_dir() and not any(path.iterdir()))


def check_version(node: Node, major: int) -> None:
    """Refuse a data folder created by another major version than the binaries'."""
    version = (node.datadir / "PG_VERSION").read_text().strip()
    if version != str(major):
        raise ClusterError(
            f"the {node.name} in {node.datadir} was created by PostgreSQL {version}, but the "
            f"binaries found are PostgreSQL {major}; point {ENV_PG_BIN} at PostgreSQL {version} "
            f"binaries, or delete {node.datadir.parent} to start over (its data is lost)"
        )


def check_owner(runner: Runner, node: Node) -> None:
    """Refuse a data folder owned by another OS user than the one PostgreSQL runs as."""
    if runner.user.name is None:
        return
    owner = node.datadir.stat().st_uid
    if owner != runner.user.uid:
        try:
            owner_name = pwd.getpwuid(owner).pw_name
        except KeyError:
            owner_name = str(owner)
        raise ClusterError(
            f"{node.datadir} belongs to OS user {owner_name!r}, but PostgreSQL would run as "
            f"{runner.user.name!r}; set {ENV_OS_USER}={owner_name} or run "
            f"`chown -R {runner.user.name} {node.datadir}`"
        )


def start_node(runner: Runner, cfg: ClusterConfig, node: Node) -> None:
    """Start node with pg_ctl, clearing what a crashed server left behind."""
    # Children of a crashed postmaster may still be exiting and holding shared memory.
    wait_processes_gone(node, 15)
    pidfile = node.datadir / "postmaster.pid"
    if pidfile.exists() and postmaster_pid(node.datadir) is None:
        # postgres only ignores a stale lock file if its pid is gone, but a crashed postmaster
        # lingers as a zombie where nothing reaps orphans (e.g. in containers).
        log.info("removing stale %s left by a crashed server", pidfile)
        pidfile.unlink()
    check_port_free(cfg.host, node)
    log.info("starting the %s on %s:%d", node.name, cfg.host, node.port)
    res = runner.tool(
        "pg_ctl",
        *("-D", str(node.datadir), "-l", str(node.logfile)),
        *("-w", "-t", str(START_TIMEOUT_S), "start"),
        timeout=START_TIMEOUT_S + 30,
    )
    if res.returncode != 0:
        output = (res.stdout + res.stderr).strip()
        raise ClusterError(
            f"the {node.name} in {node.datadir} did not start: {output}\n{log_tail(node)}"
        )


def stop_node(runner: Runner, node: Node) -> None:
    """Stop node (fast, else immediate) and wait until its processes are gone."""
    if postmaster_pid(node.datadir) is not None:
        log.info("stopping the %s", node.name)
        base = ("-D", str(node.datadir), "-w", "-t", str(STOP_TIMEOUT_S))
        res = runner.tool("pg_ctl", *base, "-m", "fast", "stop", timeout=STOP_TIMEOUT_S + 30)
        if res.returncode != 0 and postmaster_pid(node.datadir) is not None:
            log.warning("fast shutdown of the %s failed, using immediate mode", node.name)
            runner.tool("pg_ctl", *base, "-m", "immediate", "stop", timeout=STOP_TIMEOUT_S + 30)
    wait_processes_gone(node, 30)


def wait_accepting(runner: Runner, cfg: ClusterConfig, node: Node) -> None:
    """Wait until node answers a query."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while try_query(runner, cfg.host, node.port, "SELECT 1") != "1":
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the {node.name} on {cfg.host}:{node.port} does not accept connections; "
                f"run `python -m devtools.pgcluster stop` and start again\n{log_tail(node)}"
            )
        time.sleep(0.2)


def ensure_running(runner: Runner, cfg: ClusterConfig, node: Node, changed: bool) -> None:
    """Start node if stopped; restart it if its settings changed while it was running."""
    if postmaster_pid(node.datadir) is not None:
        if not changed and postmaster_port(node.datadir) == node.port:
            wait_accepting(runner, cfg, node)
            return
        log.info("settings of the %s changed; restarting it", node.name)
        stop_node(runner, node)
    start_node(runner, cfg, node)
    wait_accepting(runner, cfg, node)


def init_primary(runner: Runner, cfg: ClusterConfig, node: Node) -> None:
    """Create the primary's cluster with initdb."""
    log.info("creating the primary in %s", node.datadir)
    if node.datadir.exists():
        runner.chown(node.datadir)
    base = [
        *("-D", str(node.datadir), "-U", ADMIN_ROLE),
        *("--auth=trust", "--encoding=UTF8", "--no-instructions"),
    ]
    if cfg.fast:
        base.append("--no-sync")
    # C.UTF-8 keeps pg_trgm aware of non-ASCII letters; plain C exists everywhere.
    res = runner.tool("initdb", *base, "--locale=C.UTF-8")
    if res.returncode != 0 and "locale" in res.stderr.lower():
        log.info("locale C.UTF-8 is unavailable; using C with UTF8 encoding")
        res = runner.tool("initdb", *base, "--locale=C")
    if res.returncode != 0:
        raise ClusterError(
            f"initdb failed for {node.datadir}:\n{(res.stdout + res.stderr).strip()}\n"
            f"If {node.datadir} is left behind, delete it and run start again."
        )


def ensure_role_and_database(runner: Runner, cfg: ClusterConfig, node: Node) -> None:
    """Create the services' role and database on the primary if missing."""
    role_exists = query(
        runner, cfg.host, node, f"SELECT 1 FROM pg_roles WHERE rolname = {literal(cfg.user)}"
    )
    if role_exists != "1":
        log.info("creating role %s", cfg.user)
        query(runner, cfg.host, node, f"CREATE ROLE {ident(cfg.user)} LOGIN SUPERUSER")
    db_exists = query(
        runner,
        cfg.host,
        node,
        f"SELECT 1 FROM pg_database WHERE datname = {literal(cfg.database)}",
    )
    if db_exists != "1":
        log.info("creating database %s", cfg.database)
        query(
            runner,
            cfg.host,
            node,
            f"CREATE DATABASE {ident(cfg.database)} OWNER {ident(cfg.user)}",
        )


def system_identifier(runner: Runner, node: Node) -> str:
    """The system identifier in node's control file (a replica shares its primary's)."""
    res = runner.tool("pg_controldata", str(node.datadir))
    match = re.search(r"Database system identifier:\s*(\d+)", res.stdout)
    if res.returncode != 0 or match is None:
        raise ClusterError(
            f"cannot read the control file of the {node.name} in {node.datadir}: "
            f"{res.stderr.strip()}"
        )
    return match.group(1)


def slot_exists(runner: Runner, cfg: ClusterConfig, primary: Node, replica: Node) -> bool:
    """Whether the replica's replication slot exists on the primary."""
    sql = f"SELECT 1 FROM pg_replication_slots WHERE slot_name = {literal(replica.slot)}"
    return query(runner, cfg.host, primary, sql) == "1"


def create_replica(runner: Runner, cfg: ClusterConfig, primary: Node, replica: Node) -> None:
    """Copy the primary into the replica's folder with pg_basebackup and a new slot."""
    log.info("creating the %s in %s", replica.name, replica.datadir)
    slot = replica.slot
    active = query(
        runner,
        cfg.host,
        primary,
        f"SELECT active FROM pg_replication_slots WHERE slot_name = {literal(slot)}",
    )
    if active == "t":
        raise ClusterError(
            f"replication slot {slot} on the primary is in use by another standby; stop that "
            "standby (or drop the slot) and run start again"
        )
    if active == "f":
        # Left over from an earlier replica; a fresh base backup needs a fresh slot.
        query(runner, cfg.host, primary, f"SELECT pg_drop_replication_slot({literal(slot)})")
    args = [
        *("-h", cfg.host, "-p", str(primary.port), "-U", ADMIN_ROLE, "-w"),
        *("-D", str(replica.datadir), "-X", "stream", "-C", "-S", slot),
        "--checkpoint=fast",
    ]
    if cfg.fast:
        args.append("--no-sync")
    res = runner.tool("pg_basebackup", *args)
    if res.returncode != 0:
        raise ClusterError(
            f"pg_basebackup could not copy the primary into {replica.datadir}:\n"
            f"{res.stderr.strip()}\n{log_tail(primary)}"
        )
    # standby.signal is written last: it marks a complete replica (see ensure_replica).
    write_if_changed(runner, replica.datadir / "standby.signal", "")


def ensure_replica(
    runner: Runner, cfg: ClusterConfig, primary: Node, replica: Node, major: int
) -> None:
    """Create, repair or reconfigure the replica as needed, and have it running."""
    datadir = replica.datadir
    recreate = False
    if not is_empty_or_missing(datadir):
        if not (has_cluster_files(datadir) and (datadir / "standby.signal").is_file()):
            log.warning("the replica in %s is incomplete; recreating it", datadir)
            recreate = True
        else:
            check_owner(runner, replica)
            check_version(replica, major)
            if system_identifier(runner, replica) != system_identifier(runner, primary):
                raise ClusterError(
                    f"the replica in {datadir} was copied from a different primary; delete "
                    f"{datadir} (`rm -rf {datadir}`) and run start again to recreate it"
                )
            if not slot_exists(runner, cfg, primary, replica):
                log.warning("replication slot %s is missing; recreating the replica", replica.slot)
                recreate = True
    if recreate:
        stop_node(runner, replica)
        shutil.rmtree(datadir)
    if is_empty_or_missing(datadir):
        if datadir.exists():
            datadir.rmdir()
        create_replica(runner, cfg, primary, replica)
    changed = configure(runner, cfg, replica)
    ensure_running(runner, cfg, replica, changed)


def wait_streaming(runner: Runner, cfg: ClusterConfig, primary: Node, replica: Node) -> None:
    """Wait until the replica is a standby streaming from the primary."""
    deadline = time.monotonic() + STREAM_TIMEOUT_S
    state_sql = (
        "SELECT state FROM pg_stat_replication "
        f"WHERE application_name = {literal(replica.application_name)}"
    )
    while True:
        recovering = try_query(runner, cfg.host, replica.port, "SELECT pg_is_in_recovery()")
        if recovering == "f":
            raise ClusterError(
                f"the replica in {replica.datadir} is not a standby (was it promoted?); delete "
                f"{replica.datadir} and run start again to recreate it"
            )
        state = try_query(runner, cfg.host, primary.port, state_sql)
        if recovering == "t" and state == "streaming":
            return
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the replica did not start streaming from the primary within "
                f"{STREAM_TIMEOUT_S} s (replication state: {state or 'none'}); see the logs, "
                f"or delete {replica.datadir} and run start again to recreate it\n"
                f"{log_tail(replica)}\n{log_tail(primary)}"
            )
        time.sleep(0.1)


def prepare_data_dir(runner: Runner, layout: Layout) -> None:
    """Create the data folder and hand it to the PostgreSQL OS user, who must reach it."""
    logs = layout.primary.logfile.parent
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ClusterError(
            f"cannot create the data folder {layout.root}: {exc.strerror}; "
            f"choose another place with {ENV_DATA_DIR}"
        ) from None
    if runner.user.name is None:
        return
    runner.chown(layout.root)
    runner.chown(logs)
    for logfile in (node.logfile for node in layout.nodes):
        if logfile.exists():
            runner.chown(logfile)
    if runner.exec(["test", "-w", str(layout.root), "-a", "-x", str(layout.root)]).returncode == 0:
        return
    blocked = runner.blocked_folder(layout.root.parent) or layout.root
    raise ClusterError(
        f"PostgreSQL runs as OS user {runner.user.name!r}, which cannot enter {blocked} and so "
        f"cannot reach the data folder {layout.root}; set {ENV_DATA_DIR} to a folder under a "
        f"path every user may traverse, or run `chmod o+x {blocked}`"
    )


@contextlib.contextmanager
def locked(layout: Layout) -> Iterator[None]:
    """Hold the data folder's lock file for the block."""
    # Serialises concurrent start/stop calls on the same data folder (launcher vs. CLI).
    with layout.lockfile.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
