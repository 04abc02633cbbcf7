"""The data folder's layout, and what runs in it: postmaster pid files, live postgres processes
(Linux /proc), taken ports and the servers' log tails."""

from __future__ import annotations

import errno
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from devtools.pgcluster.config import (
    APPLICATION_NAME,
    ENV_PRIMARY_PORT,
    ENV_REPLICA_PORT,
    LOG_TAIL_LINES,
    SLOT_NAME,
    ClusterConfig,
    ClusterError,
    ClusterInfo,
)


@dataclass(frozen=True)
class Node:
    """One server of the cluster: its data folder, port and log."""

    name: str  # "primary", "replica", "replica2", …
    datadir: Path
    port: int
    port_env: str
    logfile: Path
    slot: str = ""  # a replica's replication slot on the primary (empty: the primary)
    application_name: str = ""  # a replica's name in the primary's pg_stat_replication

    @property
    def is_replica(self) -> bool:
        return bool(self.slot)


@dataclass(frozen=True)
class Layout:
    """Where everything of one cluster lives inside its data folder."""

    root: Path
    primary: Node
    replicas: tuple[Node, ...]
    lockfile: Path

    @property
    def replica(self) -> Node:
        return self.replicas[0]

    @property
    def nodes(self) -> tuple[Node, ...]:
        return (self.primary, *self.replicas)


def layout_of(cfg: ClusterConfig) -> Layout:
    """The layout of cfg's data folder."""
    root = Path(os.path.abspath(cfg.data_dir.expanduser()))
    logs = root / "logs"
    replicas = []
    for i, port in enumerate(cfg.replica_ports):
        name = "replica" if i == 0 else f"replica{i + 1}"
        suffix = "" if i == 0 else f"_{i + 1}"
        replicas.append(
            Node(
                name,
                root / name,
                port,
                ENV_REPLICA_PORT,
                logs / f"{name}.log",
                slot=SLOT_NAME + suffix,
                application_name=APPLICATION_NAME + suffix,
            )
        )
    return Layout(
        root=root,
        primary=Node(
            "primary", root / "primary", cfg.primary_port, ENV_PRIMARY_PORT, logs / "primary.log"
        ),
        replicas=tuple(replicas),
        lockfile=root / ".lock",
    )


def cluster_info(cfg: ClusterConfig) -> ClusterInfo:
    """The services' connection strings for cfg."""
    host = f"[{cfg.host}]" if ":" in cfg.host else cfg.host
    user = quote(cfg.user, safe="")
    database = quote(cfg.database, safe="")
    replicas = tuple(f"postgresql://{user}@{host}:{port}/{database}" for port in cfg.replica_ports)
    return ClusterInfo(
        primary_dsn=f"postgresql://{user}@{host}:{cfg.primary_port}/{database}",
        replica_dsn=replicas[0],
        replica_dsns=replicas,
    )


_PROC = Path("/proc")


def _is_postgres_in(pid: int, datadir: Path) -> bool:
    """Whether pid is a live postgres process working in datadir (Linux /proc)."""
    try:
        cwd = os.readlink(_PROC / str(pid) / "cwd")
        exe = os.readlink(_PROC / str(pid) / "exe")
    except OSError:
        # Gone, a zombie, or not ours to inspect.
        return False
    exe_name = Path(exe.removesuffix(" (deleted)")).name
    return exe_name in ("postgres", "postmaster") and cwd == os.path.realpath(datadir)


def _pid_alive(pid: int) -> bool:
    stat = _PROC / str(pid) / "stat"
    if _PROC.is_dir():
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def postmaster_pid(datadir: Path) -> int | None:
    """The pid of the postmaster running in datadir, or None (absent or stale postmaster.pid)."""
    try:
        first = (datadir / "postmaster.pid").read_text().split("\n", 1)[0].strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not first.lstrip("-").isdigit():
        return None
    # A negative pid marks a single-user backend; it still owns the directory.
    pid = abs(int(first))
    if _PROC.is_dir():
        return pid if _is_postgres_in(pid, datadir) else None
    return pid if _pid_alive(pid) else None


def postmaster_port(datadir: Path) -> int | None:
    """The port the postmaster in datadir listens on, from its pid file."""
    try:
        lines = (datadir / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    if len(lines) > 3 and lines[3].strip().isdigit():
        return int(lines[3].strip())
    return None


def postgres_processes(datadir: Path) -> list[int]:
    """Every live postgres process (postmaster and children) serving datadir."""
    if not _PROC.is_dir():
        pid = postmaster_pid(datadir)
        return [] if pid is None else [pid]
    pids = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit() and _is_postgres_in(int(entry.name), datadir):
            pids.append(int(entry.name))
    return pids


def wait_processes_gone(node: Node, timeout: float) -> None:
    """Wait until no postgres process serves node's data folder."""
    deadline = time.monotonic() + timeout
    while True:
        left = postgres_processes(node.datadir)
        if not left:
            return
        if time.monotonic() > deadline:
            pids = ", ".join(map(str, left))
            raise ClusterError(
                f"postgres processes {pids} of the {node.name} in {node.datadir} did not exit "
                f"within {timeout:.0f} s; stop them (kill {pids}) and try again"
            )
        time.sleep(0.1)


def log_tail(node: Node) -> str:
    """The last lines of node's log, to quote in an error."""
    try:
        lines = node.logfile.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
    except OSError:
        return f"(no log at {node.logfile})"
    body = "\n".join(f"  {line}" for line in lines)
    return f"last lines of {node.logfile}:\n{body}"


def _port_in_use(host: str, port: int) -> bool:
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ClusterError(f"cannot resolve host {host!r}: {exc}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            # Same options as the postmaster, so lingering TIME_WAIT sockets do not count.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return True
                raise ClusterError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return False


def check_port_free(host: str, node: Node) -> None:
    """Refuse a port another program listens on, naming the variable to change."""
    if _port_in_use(host, node.port):
        raise ClusterError(
            f"port {node.port} on {host} is in use by another program; "
            f"set {node.port_env} to a free port"
        )
