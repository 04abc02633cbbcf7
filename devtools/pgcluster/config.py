"""Where the local cluster lives and how it is reached: its settings and the names it uses."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

MIN_PG_MAJOR = 15
# The bootstrap superuser administers the cluster and feeds the replica; services use cfg.user.
ADMIN_ROLE = "postgres"
SLOT_NAME = "mirrortree_replica"
APPLICATION_NAME = "mirrortree_replica"
CONF_FILE = "mirrortree.conf"
FALLBACK_OS_USER = "mirrortree"

ENV_DATA_DIR = "MIRRORTREE_DATA_DIR"
ENV_PRIMARY_PORT = "MIRRORTREE_PG_PRIMARY_PORT"
ENV_REPLICA_PORT = "MIRRORTREE_PG_REPLICA_PORT"
ENV_REPLICAS = "MIRRORTREE_PG_REPLICAS"
# Each replica holds a WAL sender and a slot on the primary (max_wal_senders leaves room for
# pg_basebackup's own two).
MAX_REPLICAS = 8
ENV_PG_BIN = "MIRRORTREE_PG_BIN"
ENV_OS_USER = "MIRRORTREE_PG_OS_USER"

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 60
STREAM_TIMEOUT_S = 30
COMMAND_TIMEOUT_S = 300
LOG_TAIL_LINES = 25

_REPO_ROOT = Path(__file__).resolve().parents[2]


class ClusterError(Exception):
    """A failure the user can act on; the message says what happened and what to do."""


@dataclass(frozen=True)
class ClusterConfig:
    """Where the local cluster lives and how it is reached."""

    data_dir: Path
    primary_port: int = 55432
    replica_port: int = 55433
    host: str = "127.0.0.1"
    database: str = "mirrortree"
    user: str = "mirrortree"
    fast: bool = False
    # PostgreSQL's own default, right for development and tests; a deployment (or a benchmark
    # of one) sizes it to the data it serves.
    shared_buffers: str = "128MB"
    # Streaming replicas; the first listens on replica_port, the others on more_replica_ports
    # when given, else on the ports after replica_port.
    replicas: int = 1
    more_replica_ports: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.replicas <= MAX_REPLICAS:
            raise ValueError(f"replicas must be from 1 to {MAX_REPLICAS}, not {self.replicas}")
        if self.more_replica_ports and len(self.more_replica_ports) != self.replicas - 1:
            raise ValueError(
                f"{self.replicas} replicas need {self.replicas - 1} more replica ports, "
                f"not {len(self.more_replica_ports)}"
            )
        for port in (self.primary_port, *self.replica_ports):
            if not 1 <= port <= 65535:
                raise ValueError(f"port {port} is out of range; use a port between 1 and 65535")
        if self.primary_port in self.replica_ports:
            raise ValueError(f"the primary and a replica cannot share port {self.primary_port}")
        if len(set(self.replica_ports)) != len(self.replica_ports):
            raise ValueError(f"two replicas cannot share a port: {self.replica_ports}")
        if not self.host or not self.database or not self.user:
            raise ValueError("host, database and user must not be empty")

    @property
    def replica_ports(self) -> tuple[int, ...]:
        if self.more_replica_ports:
            return (self.replica_port, *self.more_replica_ports)
        return tuple(self.replica_port + i for i in range(self.replicas))

    @classmethod
    def from_env(cls) -> ClusterConfig:
        """Build a config from MIRRORTREE_DATA_DIR and the MIRRORTREE_PG_*_PORT variables."""
        raw_dir = os.environ.get(ENV_DATA_DIR, "").strip()
        data_dir = Path(raw_dir).expanduser() if raw_dir else default_data_dir()
        primary_port = _port_from_env(ENV_PRIMARY_PORT, cls.primary_port)
        replica_port = _port_from_env(ENV_REPLICA_PORT, cls.replica_port)
        if primary_port == replica_port:
            raise ValueError(
                f"{ENV_PRIMARY_PORT} and {ENV_REPLICA_PORT} are both {primary_port}; "
                "the primary and the replica need different ports"
            )
        raw_count = os.environ.get(ENV_REPLICAS, "").strip() or "1"
        if not raw_count.isdigit() or not 1 <= int(raw_count) <= MAX_REPLICAS:
            raise ValueError(
                f"{ENV_REPLICAS}={raw_count!r} is not a replica count; use 1 to {MAX_REPLICAS} "
                f"(their ports follow {ENV_REPLICA_PORT})"
            )
        count = int(raw_count)
        if primary_port in range(replica_port, replica_port + count):
            raise ValueError(
                f"{ENV_PRIMARY_PORT}={primary_port} is among the replicas' ports "
                f"({ENV_REPLICA_PORT}={replica_port} and the {count - 1} after it)"
            )
        return cls(
            data_dir=data_dir, primary_port=primary_port, replica_port=replica_port, replicas=count
        )


def default_data_dir() -> Path:
    """`<repo>/.data`, unless root runs us from a folder other users cannot traverse.

    PostgreSQL runs as a non-root OS user when started by root; if the project sits under a
    private folder (e.g. /root), that user could never reach `<repo>/.data`. Then the data goes
    to a per-project folder under /var/tmp instead of failing.
    """
    preferred = _REPO_ROOT / ".data"
    if os.geteuid() != 0:
        return preferred
    blocked = any(
        not (parent.stat().st_mode & stat.S_IXOTH) for parent in (_REPO_ROOT, *_REPO_ROOT.parents)
    )
    if not blocked:
        return preferred
    digest = hashlib.sha256(str(_REPO_ROOT).encode()).hexdigest()[:12]
    return Path("/var/tmp") / f"mirrortree-{digest}"


@dataclass(frozen=True)
class ClusterInfo:
    """Connection strings for the running cluster."""

    primary_dsn: str
    replica_dsn: str  # the first replica's
    replica_dsns: tuple[str, ...] = ()  # every replica's, the first one first


def _port_from_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        port = int(raw)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise ValueError(f"{name}={raw!r} is not a valid port; use an integer from 1 to 65535")
    return port
