"""The public operations on the local cluster: start, stop, status and running."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from devtools.pgcluster.access import runner_for
from devtools.pgcluster.binaries import find_pg_bindir, server_major
from devtools.pgcluster.config import ENV_DATA_DIR, ClusterConfig, ClusterError, ClusterInfo
from devtools.pgcluster.files import configure
from devtools.pgcluster.nodes import (
    check_owner,
    check_version,
    ensure_replica,
    ensure_role_and_database,
    ensure_running,
    has_cluster_files,
    init_primary,
    is_empty_or_missing,
    locked,
    prepare_data_dir,
    stop_node,
    wait_streaming,
)
from devtools.pgcluster.processes import (
    Layout,
    Node,
    check_port_free,
    cluster_info,
    layout_of,
    postgres_processes,
    postmaster_pid,
    postmaster_port,
)
from devtools.pgcluster.roles import ensure_service_roles
from devtools.pgcluster.runner import Runner
from devtools.pgcluster.sql import try_query


@contextlib.contextmanager
def _explained_permission_errors(layout: Layout) -> Iterator[None]:
    try:
        yield
    except PermissionError as exc:
        where = exc.filename or layout.root
        raise ClusterError(
            f"permission denied on {where}: the data folder {layout.root} was probably created "
            f"by another OS user; run as that user, or choose another folder with {ENV_DATA_DIR}"
        ) from exc


def start(cfg: ClusterConfig) -> ClusterInfo:
    """Create what is missing, start what is stopped and return once the replica streams.

    Idempotent: on a running cluster it only checks health (and restarts a server whose managed
    settings, such as its port, changed).
    """
    layout = layout_of(cfg)
    with _explained_permission_errors(layout):
        return _start(cfg, layout)


def _start(cfg: ClusterConfig, layout: Layout) -> ClusterInfo:
    primary = layout.primary
    bindir = find_pg_bindir()
    major = server_major(bindir)
    if major is None:
        raise ClusterError(f"cannot determine the PostgreSQL version of {bindir}")
    runner = runner_for(bindir)

    primary_created = has_cluster_files(primary.datadir)
    if not primary_created and not is_empty_or_missing(primary.datadir):
        raise ClusterError(
            f"the primary data folder {primary.datadir} is incomplete (an earlier creation was "
            "probably interrupted); it is not deleted automatically. Delete it "
            f"(`rm -rf {primary.datadir}`) and run start again"
        )
    # Fail on taken ports before spending time on initdb or base backups.
    for node in layout.nodes:
        running = postmaster_pid(node.datadir) is not None
        if not running or postmaster_port(node.datadir) != node.port:
            check_port_free(cfg.host, node)

    prepare_data_dir(runner, layout)
    with locked(layout):
        if primary_created:
            check_owner(runner, primary)
            check_version(primary, major)
        else:
            init_primary(runner, cfg, primary)
        changed = configure(runner, cfg, primary)
        ensure_running(runner, cfg, primary, changed)
        ensure_role_and_database(runner, cfg, primary)
        ensure_service_roles(runner, cfg, primary)
        for replica in layout.replicas:
            ensure_replica(runner, cfg, primary, replica, major)
        for replica in layout.replicas:
            wait_streaming(runner, cfg, primary, replica)
    return cluster_info(cfg)


def stop(cfg: ClusterConfig) -> None:
    """Stop the replicas, then the primary, and wait until their processes are gone."""
    layout = layout_of(cfg)
    nodes = (*layout.replicas, layout.primary)
    with _explained_permission_errors(layout):
        if not layout.root.is_dir() or not any(postgres_processes(n.datadir) for n in nodes):
            return
        runner = runner_for(find_pg_bindir())
        with locked(layout):
            for node in nodes:
                stop_node(runner, node)


def replica_data_folder(cfg: ClusterConfig) -> Path:
    """Where the replica keeps its data files."""
    return layout_of(cfg).replica.datadir


def running(cfg: ClusterConfig) -> tuple[str, ...]:
    """The servers ("primary", "replica", "replica2", …) whose postmaster is alive; cheap
    enough to poll.

    The launcher uses it to tell a cluster it starts from one that was already running, and
    to notice a server that went away while the stack runs.
    """
    layout = layout_of(cfg)
    return tuple(node.name for node in layout.nodes if postmaster_pid(node.datadir) is not None)


def _node_status(cfg: ClusterConfig, node: Node, runner: Runner | None) -> str:
    datadir = node.datadir
    if is_empty_or_missing(datadir):
        return "not created"
    if not has_cluster_files(datadir) or (
        node.is_replica and not (datadir / "standby.signal").is_file()
    ):
        return "incomplete"
    pid = postmaster_pid(datadir)
    if pid is None or runner is None:
        return "stopped"
    port = postmaster_port(datadir) or node.port
    where = f"{cfg.host}:{port}"
    if not node.is_replica:
        ok = try_query(runner, cfg.host, port, "SELECT 1") == "1"
        return f"running on {where}" if ok else f"running (pid {pid}) but not accepting on {where}"
    row = try_query(
        runner,
        cfg.host,
        port,
        "SELECT coalesce((SELECT status FROM pg_stat_wal_receiver), 'none') || ' ' || "
        "coalesce(pg_last_wal_replay_lsn()::text, 'none')",
    )
    if row is None:
        return f"running (pid {pid}) but not accepting on {where}"
    receiver, lsn = row.split(" ", 1)
    if receiver == "streaming":
        return f"streaming from primary, replay lsn {lsn}"
    return f"running on {where}, not streaming (wal receiver: {receiver}), replay lsn {lsn}"


def status(cfg: ClusterConfig) -> dict[str, str]:
    """Describe each server: "not created", "incomplete", "stopped", or how they run."""
    layout = layout_of(cfg)
    nodes = layout.nodes
    with _explained_permission_errors(layout):
        runner = None
        if any(postmaster_pid(n.datadir) is not None for n in nodes):
            runner = runner_for(find_pg_bindir())
        return {node.name: _node_status(cfg, node, runner) for node in nodes}
