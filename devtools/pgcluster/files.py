"""The configuration files the cluster manager writes into each data folder, and why.

initdb and pg_basebackup leave PostgreSQL's stock configuration; the manager adds one include
file of its own settings (ports, loopback-only listening, replication) and replaces pg_hba.conf
with trust on loopback, so a start after a changed port or setting is a rewrite plus a restart.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from devtools.pgcluster.config import (
    ADMIN_ROLE,
    CONF_FILE,
    ClusterConfig,
)
from devtools.pgcluster.processes import Node
from devtools.pgcluster.runner import Runner
from devtools.pgcluster.sql import literal


def write_if_changed(runner: Runner, path: Path, content: str) -> bool:
    """Write content to path (owned by the PostgreSQL user); return whether it changed."""
    with contextlib.suppress(FileNotFoundError):
        if path.read_text() == content:
            return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(content)
    tmp.chmod(0o600)
    runner.chown(tmp)
    tmp.replace(path)
    return True


def _settings(cfg: ClusterConfig, node: Node) -> str:
    settings: list[tuple[str, str]] = [
        ("listen_addresses", literal(cfg.host)),
        ("port", str(node.port)),
        # TCP only: socket paths have length limits and need a writable shared directory.
        ("unix_socket_directories", "''"),
        ("max_connections", "200"),
        ("shared_buffers", literal(cfg.shared_buffers)),
        ("wal_level", "replica"),
        ("max_wal_senders", "10"),
        ("max_replication_slots", "10"),
        ("hot_standby", "on"),
        ("hot_standby_feedback", "on"),
        # Reconnect quickly after the primary restarts instead of the default 5 s.
        ("wal_retrieve_retry_interval", "'1s'"),
        # pg_ctl -l collects the server's stderr into logs/.
        ("logging_collector", "off"),
        ("synchronous_commit", "on"),
    ]
    if cfg.fast:
        # Durability against OS crashes is irrelevant for throwaway test clusters.
        settings += [("fsync", "off"), ("full_page_writes", "off")]
    if node.is_replica:
        conninfo = (
            f"host={cfg.host} port={cfg.primary_port} user={ADMIN_ROLE} "
            f"application_name={node.application_name}"
        )
        settings += [
            ("primary_conninfo", literal(conninfo)),
            ("primary_slot_name", literal(node.slot)),
        ]
    lines = [f"# Managed by devtools.pgcluster for the {node.name}; rewritten on every start."]
    lines += [f"{name} = {value}" for name, value in settings]
    return "\n".join(lines) + "\n"


HBA_CONF = """\
# Managed by devtools.pgcluster: a development cluster reachable only over loopback TCP.
# TYPE  DATABASE     USER  ADDRESS       METHOD
host    all          all   127.0.0.1/32  trust
host    all          all   ::1/128       trust
host    replication  all   127.0.0.1/32  trust
host    replication  all   ::1/128       trust
"""

_INCLUDE_RE = re.compile(rf"^\s*include\s*=?\s*'{re.escape(CONF_FILE)}'", re.MULTILINE)


def configure(runner: Runner, cfg: ClusterConfig, node: Node) -> bool:
    """Write the managed settings into node's data dir; return whether anything changed."""
    main_conf = node.datadir / "postgresql.conf"
    text = main_conf.read_text()
    changed = False
    if not _INCLUDE_RE.search(text):
        text += f"\n# Settings managed by devtools.pgcluster\ninclude = '{CONF_FILE}'\n"
        changed |= write_if_changed(runner, main_conf, text)
    changed |= write_if_changed(runner, node.datadir / CONF_FILE, _settings(cfg, node))
    changed |= write_if_changed(runner, node.datadir / "pg_hba.conf", HBA_CONF)
    return changed
