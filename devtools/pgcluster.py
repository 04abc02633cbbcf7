"""The embedded default database: a local PostgreSQL primary plus one hot-standby replica.

Both servers live in a project data folder (``primary/`` and ``replica/`` plus ``logs/``), listen
on loopback TCP only and are built from the machine's PostgreSQL (>= 15) server binaries. The
replica streams from the primary through a physical replication slot, so it can always catch up.

Used by the launcher (``make run``), by the test suite and on the command line::

    python -m devtools.pgcluster {start,stop,status}

PostgreSQL refuses to run as root, so when this module runs as root every PostgreSQL binary is
run as an unprivileged OS user instead (``MIRRORTREE_PG_OS_USER``, else ``postgres``, else a
system user ``mirrortree`` created on demand).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

log = logging.getLogger(__name__)

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
ENV_PG_BIN = "MIRRORTREE_PG_BIN"
ENV_OS_USER = "MIRRORTREE_PG_OS_USER"

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 60
STREAM_TIMEOUT_S = 30
COMMAND_TIMEOUT_S = 300
LOG_TAIL_LINES = 25

REQUIRED_BINARIES = ("postgres", "initdb", "pg_ctl", "pg_basebackup", "pg_controldata", "psql")

INSTALL_HINT = (
    f"Install the PostgreSQL server, version {MIN_PG_MAJOR} or newer:\n"
    "  Debian/Ubuntu: sudo apt-get install postgresql\n"
    "  Fedora:        sudo dnf install postgresql-server\n"
    "  macOS:         brew install postgresql@16\n"
    f"If it is installed in an unusual place, set {ENV_PG_BIN} to the directory that holds "
    "initdb and pg_ctl.\n"
    "Alternatively run the database in containers with `docker compose up`."
)

_REPO_ROOT = Path(__file__).resolve().parent.parent


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

    def __post_init__(self) -> None:
        for port in (self.primary_port, self.replica_port):
            if not 1 <= port <= 65535:
                raise ValueError(f"port {port} is out of range; use a port between 1 and 65535")
        if self.primary_port == self.replica_port:
            raise ValueError(f"the primary and the replica cannot share port {self.primary_port}")
        if not self.host or not self.database or not self.user:
            raise ValueError("host, database and user must not be empty")

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
        return cls(data_dir=data_dir, primary_port=primary_port, replica_port=replica_port)


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
    replica_dsn: str


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


# ---------------------------------------------------------------------------------------------
# Finding the server binaries


def find_pg_bindir() -> Path:
    """Return the directory holding the PostgreSQL (>= 15) server binaries.

    MIRRORTREE_PG_BIN wins when set; otherwise ``pg_config``, the PATH and the usual install
    locations of Debian/Ubuntu, RHEL/Fedora, source builds and Homebrew are searched, newest first.
    """
    override = os.environ.get(ENV_PG_BIN, "").strip()
    if override:
        bindir = Path(override).expanduser()
        problem = _bindir_problem(bindir)
        if problem is not None:
            raise ClusterError(f"{ENV_PG_BIN}={override}: {problem}.\n{INSTALL_HINT}")
        return bindir
    rejected: list[str] = []
    for candidate in _candidate_bindirs():
        problem = _bindir_problem(candidate)
        if problem is None:
            return candidate
        if candidate.is_dir() and (candidate / "postgres").exists():
            rejected.append(f"  {candidate}: {problem}")
    found = ("\nFound but not usable:\n" + "\n".join(rejected)) if rejected else ""
    raise ClusterError(
        f"no PostgreSQL server binaries (version {MIN_PG_MAJOR} or newer) found.{found}\n"
        f"{INSTALL_HINT}"
    )


def _server_major(bindir: Path) -> int | None:
    try:
        out = subprocess.run(
            [str(bindir / "postgres"), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        ).stdout
    except OSError:
        return None
    match = re.search(r"\(PostgreSQL\)\s+(\d+)", out)
    return int(match.group(1)) if match else None


def _bindir_problem(bindir: Path) -> str | None:
    if not bindir.is_dir():
        return "not a directory"
    missing = [b for b in REQUIRED_BINARIES if not os.access(bindir / b, os.X_OK)]
    if missing:
        return f"missing {', '.join(missing)}"
    major = _server_major(bindir)
    if major is None:
        return "could not determine the server version"
    if major < MIN_PG_MAJOR:
        return f"PostgreSQL {major} is too old, {MIN_PG_MAJOR} or newer is needed"
    return None


def _versioned_dirs(parent: Path, pattern: str) -> list[tuple[int, Path]]:
    """Children of parent whose name matches pattern (one group: the major version)."""
    try:
        children = list(parent.iterdir())
    except OSError:
        return []
    found = []
    for child in children:
        match = re.fullmatch(pattern, child.name)
        if match and int(match.group(1)) >= MIN_PG_MAJOR:
            found.append((int(match.group(1)), child))
    return found


def _candidate_bindirs() -> list[Path]:
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            res = subprocess.run(
                [pg_config, "--bindir", "--version"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            lines = res.stdout.splitlines()
            version = re.search(r"PostgreSQL\s+(\d+)", res.stdout)
            if res.returncode == 0 and lines and version and int(version.group(1)) >= MIN_PG_MAJOR:
                candidates.append(Path(lines[0].strip()))
    for tool in ("initdb", "pg_ctl"):
        found = shutil.which(tool)
        if found:
            candidates.append(Path(found).resolve().parent)
    versioned: list[tuple[int, Path]] = []
    versioned += [(n, d / "bin") for n, d in _versioned_dirs(Path("/usr/lib/postgresql"), r"(\d+)")]
    versioned += [(n, d / "bin") for n, d in _versioned_dirs(Path("/usr"), r"pgsql-(\d+)")]
    for brew in (Path("/opt/homebrew/opt"), Path("/usr/local/opt")):
        versioned += [(n, d / "bin") for n, d in _versioned_dirs(brew, r"postgresql@(\d+)")]
    versioned += [
        (n, d / "bin") for n, d in _versioned_dirs(Path("/opt/local/lib"), r"postgresql(\d+)")
    ]
    candidates += [d for _, d in sorted(versioned, key=lambda item: -item[0])]
    candidates += [
        Path("/usr/local/pgsql/bin"),
        Path("/opt/homebrew/opt/postgresql/bin"),
        Path("/usr/local/opt/postgresql/bin"),
        Path("/Applications/Postgres.app/Contents/Versions/latest/bin"),
        Path("/opt/homebrew/bin"),
        Path("/usr/local/bin"),
        Path("/usr/bin"),
    ]
    unique: list[Path] = []
    for candidate in candidates:
        if candidate not in unique:
            unique.append(candidate)
    return unique


# ---------------------------------------------------------------------------------------------
# Running PostgreSQL binaries as a non-root user


@dataclass(frozen=True)
class _OsUser:
    name: str | None  # None: run as the current user
    uid: int
    gid: int


def _resolve_os_user() -> _OsUser:
    if os.geteuid() != 0:
        return _OsUser(None, os.geteuid(), os.getegid())
    wanted = os.environ.get(ENV_OS_USER, "").strip()
    if wanted:
        try:
            entry = pwd.getpwnam(wanted)
        except KeyError:
            raise ClusterError(
                f"{ENV_OS_USER}={wanted} names no OS user; create that user or unset the variable"
            ) from None
        if entry.pw_uid == 0:
            raise ClusterError(
                f"{ENV_OS_USER}={wanted} is root, but PostgreSQL refuses to run as root; "
                "name an unprivileged user"
            )
        return _OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)
    for name in ("postgres", FALLBACK_OS_USER):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            if entry.pw_uid != 0:
                return _OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)
    useradd = shutil.which("useradd", path=_admin_path())
    if useradd is None:
        raise ClusterError(
            "PostgreSQL refuses to run as root and there is no `postgres` OS user to run it as; "
            f"create an unprivileged user and set {ENV_OS_USER} to its name"
        )
    log.info("creating system user %s to run PostgreSQL as (it refuses root)", FALLBACK_OS_USER)
    res = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", FALLBACK_OS_USER],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    try:
        entry = pwd.getpwnam(FALLBACK_OS_USER)
    except KeyError:
        raise ClusterError(
            f"could not create the OS user {FALLBACK_OS_USER!r} to run PostgreSQL: "
            f"{res.stderr.strip()}; create an unprivileged user and set {ENV_OS_USER} to its name"
        ) from None
    return _OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _admin_path() -> str:
    # root's PATH may lack the sbin directories that hold runuser/useradd when started from a
    # minimal environment.
    parts = os.environ.get("PATH", "").split(os.pathsep)
    parts += ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
    return os.pathsep.join(p for p in parts if p)


def _clean_env() -> dict[str, str]:
    # Inherited libpq variables (PGHOST, PGPASSWORD, PGOPTIONS, ...) would silently redirect or
    # alter our explicit connections; the message locale keeps captured errors in English.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    for key in ("LC_ALL", "LANGUAGE"):
        env.pop(key, None)
    env["LC_MESSAGES"] = "C"
    env["PGCONNECT_TIMEOUT"] = "5"
    return env


@dataclass(frozen=True)
class _Runner:
    bindir: Path
    user: _OsUser
    prefix: tuple[str, ...]

    @classmethod
    def create(cls, bindir: Path) -> _Runner:
        user = _resolve_os_user()
        if user.name is None:
            return cls(bindir, user, ())
        runuser = shutil.which("runuser", path=_admin_path())
        if runuser:
            return cls(bindir, user, (runuser, "-u", user.name, "--"))
        setpriv = shutil.which("setpriv", path=_admin_path())
        if setpriv:
            ids = (f"--reuid={user.uid}", f"--regid={user.gid}", "--init-groups")
            return cls(bindir, user, (setpriv, *ids, "--"))
        raise ClusterError(
            "PostgreSQL refuses to run as root and neither runuser nor setpriv is available to "
            "switch users; run this command as an unprivileged user"
        )

    def exec(
        self, argv: Sequence[str], *, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run argv as the PostgreSQL OS user, capturing output; never raises on exit status."""
        try:
            return subprocess.run(
                [*self.prefix, *argv],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=_clean_env(),
                # The OS user may not be allowed into the caller's working directory.
                cwd="/",
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise ClusterError(
                f"`{' '.join(argv)}` did not finish within {timeout:.0f} s"
            ) from None

    def tool(
        self, name: str, *args: str, timeout: float = COMMAND_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run a binary from the PostgreSQL bin directory."""
        return self.exec([str(self.bindir / name), *args], timeout=timeout)

    def chown(self, path: Path) -> None:
        """Hand path to the PostgreSQL OS user (only needed when running as root)."""
        if self.user.name is not None:
            os.chown(path, self.user.uid, self.user.gid)


# ---------------------------------------------------------------------------------------------
# Data folder layout and process inspection


@dataclass(frozen=True)
class _Node:
    name: str  # "primary" or "replica"
    datadir: Path
    port: int
    port_env: str
    logfile: Path


@dataclass(frozen=True)
class _Layout:
    root: Path
    primary: _Node
    replica: _Node
    lockfile: Path


def _layout(cfg: ClusterConfig) -> _Layout:
    root = Path(os.path.abspath(cfg.data_dir.expanduser()))
    logs = root / "logs"
    return _Layout(
        root=root,
        primary=_Node(
            "primary", root / "primary", cfg.primary_port, ENV_PRIMARY_PORT, logs / "primary.log"
        ),
        replica=_Node(
            "replica", root / "replica", cfg.replica_port, ENV_REPLICA_PORT, logs / "replica.log"
        ),
        lockfile=root / ".lock",
    )


def _cluster_info(cfg: ClusterConfig) -> ClusterInfo:
    host = f"[{cfg.host}]" if ":" in cfg.host else cfg.host
    user = quote(cfg.user, safe="")
    database = quote(cfg.database, safe="")
    return ClusterInfo(
        primary_dsn=f"postgresql://{user}@{host}:{cfg.primary_port}/{database}",
        replica_dsn=f"postgresql://{user}@{host}:{cfg.replica_port}/{database}",
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


def _postmaster_pid(datadir: Path) -> int | None:
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


def _postmaster_port(datadir: Path) -> int | None:
    try:
        lines = (datadir / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    if len(lines) > 3 and lines[3].strip().isdigit():
        return int(lines[3].strip())
    return None


def _postgres_processes(datadir: Path) -> list[int]:
    """Every live postgres process (postmaster and children) serving datadir."""
    if not _PROC.is_dir():
        pid = _postmaster_pid(datadir)
        return [] if pid is None else [pid]
    pids = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit() and _is_postgres_in(int(entry.name), datadir):
            pids.append(int(entry.name))
    return pids


def _wait_processes_gone(node: _Node, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        left = _postgres_processes(node.datadir)
        if not left:
            return
        if time.monotonic() > deadline:
            pids = ", ".join(map(str, left))
            raise ClusterError(
                f"postgres processes {pids} of the {node.name} in {node.datadir} did not exit "
                f"within {timeout:.0f} s; stop them (kill {pids}) and try again"
            )
        time.sleep(0.1)


def _log_tail(node: _Node) -> str:
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


def _check_port_free(host: str, node: _Node) -> None:
    if _port_in_use(host, node.port):
        raise ClusterError(
            f"port {node.port} on {host} is in use by another program; "
            f"set {node.port_env} to a free port"
        )


# ---------------------------------------------------------------------------------------------
# SQL through psql


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _ident(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _psql(
    runner: _Runner, host: str, port: int, sql: str, *, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return runner.tool(
        "psql",
        *("-X", "-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"),
        *("-h", host, "-p", str(port), "-U", ADMIN_ROLE, "-d", "postgres", "-c", sql),
        timeout=timeout,
    )


def _query(runner: _Runner, host: str, node: _Node, sql: str) -> str:
    res = _psql(runner, host, node.port, sql)
    if res.returncode != 0:
        raise ClusterError(
            f"query on the {node.name} ({host}:{node.port}) failed: {res.stderr.strip()}\n"
            f"{_log_tail(node)}"
        )
    return res.stdout.strip()


def _try_query(runner: _Runner, host: str, port: int, sql: str) -> str | None:
    res = _psql(runner, host, port, sql, timeout=15)
    return res.stdout.strip() if res.returncode == 0 else None


# ---------------------------------------------------------------------------------------------
# Configuration files


def _write_if_changed(runner: _Runner, path: Path, content: str) -> bool:
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


def _settings(cfg: ClusterConfig, node: _Node) -> str:
    settings: list[tuple[str, str]] = [
        ("listen_addresses", _literal(cfg.host)),
        ("port", str(node.port)),
        # TCP only: socket paths have length limits and need a writable shared directory.
        ("unix_socket_directories", "''"),
        ("max_connections", "200"),
        ("shared_buffers", _literal(cfg.shared_buffers)),
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
    if node.name == "replica":
        conninfo = (
            f"host={cfg.host} port={cfg.primary_port} user={ADMIN_ROLE} "
            f"application_name={APPLICATION_NAME}"
        )
        settings += [
            ("primary_conninfo", _literal(conninfo)),
            ("primary_slot_name", _literal(SLOT_NAME)),
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


def _configure(runner: _Runner, cfg: ClusterConfig, node: _Node) -> bool:
    """Write the managed settings into node's data dir; return whether anything changed."""
    main_conf = node.datadir / "postgresql.conf"
    text = main_conf.read_text()
    changed = False
    if not _INCLUDE_RE.search(text):
        text += f"\n# Settings managed by devtools.pgcluster\ninclude = '{CONF_FILE}'\n"
        changed |= _write_if_changed(runner, main_conf, text)
    changed |= _write_if_changed(runner, node.datadir / CONF_FILE, _settings(cfg, node))
    changed |= _write_if_changed(runner, node.datadir / "pg_hba.conf", HBA_CONF)
    return changed


# ---------------------------------------------------------------------------------------------
# Node life cycle


def _has_cluster_files(datadir: Path) -> bool:
    return (datadir / "PG_VERSION").is_file() and (datadir / "global" / "pg_control").is_file()


def _is_empty_or_missing(path: Path) -> bool:
    return not path.exists() or (path.is_dir() and not any(path.iterdir()))


def _check_version(node: _Node, major: int) -> None:
    version = (node.datadir / "PG_VERSION").read_text().strip()
    if version != str(major):
        raise ClusterError(
            f"the {node.name} in {node.datadir} was created by PostgreSQL {version}, but the "
            f"binaries found are PostgreSQL {major}; point {ENV_PG_BIN} at PostgreSQL {version} "
            f"binaries, or delete {node.datadir.parent} to start over (its data is lost)"
        )


def _check_owner(runner: _Runner, node: _Node) -> None:
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


def _start_node(runner: _Runner, cfg: ClusterConfig, node: _Node) -> None:
    # Children of a crashed postmaster may still be exiting and holding shared memory.
    _wait_processes_gone(node, 15)
    pidfile = node.datadir / "postmaster.pid"
    if pidfile.exists() and _postmaster_pid(node.datadir) is None:
        # postgres only ignores a stale lock file if its pid is gone, but a crashed postmaster
        # lingers as a zombie where nothing reaps orphans (e.g. in containers).
        log.info("removing stale %s left by a crashed server", pidfile)
        pidfile.unlink()
    _check_port_free(cfg.host, node)
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
            f"the {node.name} in {node.datadir} did not start: {output}\n{_log_tail(node)}"
        )


def _stop_node(runner: _Runner, node: _Node) -> None:
    if _postmaster_pid(node.datadir) is not None:
        log.info("stopping the %s", node.name)
        base = ("-D", str(node.datadir), "-w", "-t", str(STOP_TIMEOUT_S))
        res = runner.tool("pg_ctl", *base, "-m", "fast", "stop", timeout=STOP_TIMEOUT_S + 30)
        if res.returncode != 0 and _postmaster_pid(node.datadir) is not None:
            log.warning("fast shutdown of the %s failed, using immediate mode", node.name)
            runner.tool("pg_ctl", *base, "-m", "immediate", "stop", timeout=STOP_TIMEOUT_S + 30)
    _wait_processes_gone(node, 30)


def _wait_accepting(runner: _Runner, cfg: ClusterConfig, node: _Node) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while _try_query(runner, cfg.host, node.port, "SELECT 1") != "1":
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the {node.name} on {cfg.host}:{node.port} does not accept connections; "
                f"run `python -m devtools.pgcluster stop` and start again\n{_log_tail(node)}"
            )
        time.sleep(0.2)


def _ensure_running(runner: _Runner, cfg: ClusterConfig, node: _Node, changed: bool) -> None:
    """Start node if stopped; restart it if its settings changed while it was running."""
    if _postmaster_pid(node.datadir) is not None:
        if not changed and _postmaster_port(node.datadir) == node.port:
            _wait_accepting(runner, cfg, node)
            return
        log.info("settings of the %s changed; restarting it", node.name)
        _stop_node(runner, node)
    _start_node(runner, cfg, node)
    _wait_accepting(runner, cfg, node)


def _init_primary(runner: _Runner, cfg: ClusterConfig, node: _Node) -> None:
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


def _ensure_role_and_database(runner: _Runner, cfg: ClusterConfig, node: _Node) -> None:
    role_exists = _query(
        runner, cfg.host, node, f"SELECT 1 FROM pg_roles WHERE rolname = {_literal(cfg.user)}"
    )
    if role_exists != "1":
        log.info("creating role %s", cfg.user)
        _query(runner, cfg.host, node, f"CREATE ROLE {_ident(cfg.user)} LOGIN SUPERUSER")
    db_exists = _query(
        runner,
        cfg.host,
        node,
        f"SELECT 1 FROM pg_database WHERE datname = {_literal(cfg.database)}",
    )
    if db_exists != "1":
        log.info("creating database %s", cfg.database)
        _query(
            runner,
            cfg.host,
            node,
            f"CREATE DATABASE {_ident(cfg.database)} OWNER {_ident(cfg.user)}",
        )


def _system_identifier(runner: _Runner, node: _Node) -> str:
    res = runner.tool("pg_controldata", str(node.datadir))
    match = re.search(r"Database system identifier:\s*(\d+)", res.stdout)
    if res.returncode != 0 or match is None:
        raise ClusterError(
            f"cannot read the control file of the {node.name} in {node.datadir}: "
            f"{res.stderr.strip()}"
        )
    return match.group(1)


def _slot_exists(runner: _Runner, cfg: ClusterConfig, primary: _Node) -> bool:
    sql = f"SELECT 1 FROM pg_replication_slots WHERE slot_name = {_literal(SLOT_NAME)}"
    return _query(runner, cfg.host, primary, sql) == "1"


def _create_replica(runner: _Runner, cfg: ClusterConfig, primary: _Node, replica: _Node) -> None:
    log.info("creating the replica in %s", replica.datadir)
    active = _query(
        runner,
        cfg.host,
        primary,
        f"SELECT active FROM pg_replication_slots WHERE slot_name = {_literal(SLOT_NAME)}",
    )
    if active == "t":
        raise ClusterError(
            f"replication slot {SLOT_NAME} on the primary is in use by another standby; stop that "
            "standby (or drop the slot) and run start again"
        )
    if active == "f":
        # Left over from an earlier replica; a fresh base backup needs a fresh slot.
        _query(runner, cfg.host, primary, f"SELECT pg_drop_replication_slot({_literal(SLOT_NAME)})")
    args = [
        *("-h", cfg.host, "-p", str(primary.port), "-U", ADMIN_ROLE, "-w"),
        *("-D", str(replica.datadir), "-X", "stream", "-C", "-S", SLOT_NAME),
        "--checkpoint=fast",
    ]
    if cfg.fast:
        args.append("--no-sync")
    res = runner.tool("pg_basebackup", *args)
    if res.returncode != 0:
        raise ClusterError(
            f"pg_basebackup could not copy the primary into {replica.datadir}:\n"
            f"{res.stderr.strip()}\n{_log_tail(primary)}"
        )
    # standby.signal is written last: it marks a complete replica (see _ensure_replica).
    _write_if_changed(runner, replica.datadir / "standby.signal", "")


def _ensure_replica(
    runner: _Runner, cfg: ClusterConfig, primary: _Node, replica: _Node, major: int
) -> None:
    datadir = replica.datadir
    recreate = False
    if not _is_empty_or_missing(datadir):
        if not (_has_cluster_files(datadir) and (datadir / "standby.signal").is_file()):
            log.warning("the replica in %s is incomplete; recreating it", datadir)
            recreate = True
        else:
            _check_owner(runner, replica)
            _check_version(replica, major)
            if _system_identifier(runner, replica) != _system_identifier(runner, primary):
                raise ClusterError(
                    f"the replica in {datadir} was copied from a different primary; delete "
                    f"{datadir} (`rm -rf {datadir}`) and run start again to recreate it"
                )
            if not _slot_exists(runner, cfg, primary):
                log.warning("replication slot %s is missing; recreating the replica", SLOT_NAME)
                recreate = True
    if recreate:
        _stop_node(runner, replica)
        shutil.rmtree(datadir)
    if _is_empty_or_missing(datadir):
        if datadir.exists():
            datadir.rmdir()
        _create_replica(runner, cfg, primary, replica)
    changed = _configure(runner, cfg, replica)
    _ensure_running(runner, cfg, replica, changed)


def _wait_streaming(runner: _Runner, cfg: ClusterConfig, primary: _Node, replica: _Node) -> None:
    deadline = time.monotonic() + STREAM_TIMEOUT_S
    state_sql = (
        "SELECT state FROM pg_stat_replication "
        f"WHERE application_name = {_literal(APPLICATION_NAME)}"
    )
    while True:
        recovering = _try_query(runner, cfg.host, replica.port, "SELECT pg_is_in_recovery()")
        if recovering == "f":
            raise ClusterError(
                f"the replica in {replica.datadir} is not a standby (was it promoted?); delete "
                f"{replica.datadir} and run start again to recreate it"
            )
        state = _try_query(runner, cfg.host, primary.port, state_sql)
        if recovering == "t" and state == "streaming":
            return
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the replica did not start streaming from the primary within "
                f"{STREAM_TIMEOUT_S} s (replication state: {state or 'none'}); see the logs, "
                f"or delete {replica.datadir} and run start again to recreate it\n"
                f"{_log_tail(replica)}\n{_log_tail(primary)}"
            )
        time.sleep(0.1)


def _prepare_data_dir(runner: _Runner, layout: _Layout) -> None:
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
    for logfile in (layout.primary.logfile, layout.replica.logfile):
        if logfile.exists():
            runner.chown(logfile)
    if runner.exec(["test", "-w", str(layout.root), "-a", "-x", str(layout.root)]).returncode == 0:
        return
    blocked = layout.root
    for ancestor in reversed(layout.root.parents):
        if runner.exec(["test", "-x", str(ancestor)]).returncode != 0:
            blocked = ancestor
            break
    raise ClusterError(
        f"PostgreSQL runs as OS user {runner.user.name!r}, which cannot enter {blocked} and so "
        f"cannot reach the data folder {layout.root}; set {ENV_DATA_DIR} to a folder under a "
        f"path every user may traverse, or run `chmod o+x {blocked}`"
    )


@contextlib.contextmanager
def _locked(layout: _Layout) -> Iterator[None]:
    # Serialises concurrent start/stop calls on the same data folder (launcher vs. CLI).
    with layout.lockfile.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------
# Public API


@contextlib.contextmanager
def _explained_permission_errors(layout: _Layout) -> Iterator[None]:
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
    layout = _layout(cfg)
    with _explained_permission_errors(layout):
        return _start(cfg, layout)


def _start(cfg: ClusterConfig, layout: _Layout) -> ClusterInfo:
    primary, replica = layout.primary, layout.replica
    bindir = find_pg_bindir()
    major = _server_major(bindir)
    if major is None:
        raise ClusterError(f"cannot determine the PostgreSQL version of {bindir}")
    runner = _Runner.create(bindir)

    primary_created = _has_cluster_files(primary.datadir)
    if not primary_created and not _is_empty_or_missing(primary.datadir):
        raise ClusterError(
            f"the primary data folder {primary.datadir} is incomplete (an earlier creation was "
            "probably interrupted); it is not deleted automatically. Delete it "
            f"(`rm -rf {primary.datadir}`) and run start again"
        )
    # Fail on taken ports before spending time on initdb or base backups.
    for node in (primary, replica):
        running = _postmaster_pid(node.datadir) is not None
        if not running or _postmaster_port(node.datadir) != node.port:
            _check_port_free(cfg.host, node)

    _prepare_data_dir(runner, layout)
    with _locked(layout):
        if primary_created:
            _check_owner(runner, primary)
            _check_version(primary, major)
        else:
            _init_primary(runner, cfg, primary)
        changed = _configure(runner, cfg, primary)
        _ensure_running(runner, cfg, primary, changed)
        _ensure_role_and_database(runner, cfg, primary)
        _ensure_replica(runner, cfg, primary, replica, major)
        _wait_streaming(runner, cfg, primary, replica)
    return _cluster_info(cfg)


def stop(cfg: ClusterConfig) -> None:
    """Stop the replica, then the primary, and wait until their processes are gone."""
    layout = _layout(cfg)
    nodes = (layout.replica, layout.primary)
    with _explained_permission_errors(layout):
        if not layout.root.is_dir() or not any(_postgres_processes(n.datadir) for n in nodes):
            return
        runner = _Runner.create(find_pg_bindir())
        with _locked(layout):
            for node in nodes:
                _stop_node(runner, node)


def replica_data_folder(cfg: ClusterConfig) -> Path:
    """Where the replica keeps its data files."""
    return _layout(cfg).replica.datadir


def running(cfg: ClusterConfig) -> tuple[str, ...]:
    """The servers ("primary", "replica") whose postmaster is alive; cheap enough to poll.

    The launcher uses it to tell a cluster it starts from one that was already running, and
    to notice a server that went away while the stack runs.
    """
    layout = _layout(cfg)
    return tuple(
        node.name
        for node in (layout.primary, layout.replica)
        if _postmaster_pid(node.datadir) is not None
    )


def _node_status(cfg: ClusterConfig, node: _Node, runner: _Runner | None) -> str:
    datadir = node.datadir
    if _is_empty_or_missing(datadir):
        return "not created"
    if not _has_cluster_files(datadir) or (
        node.name == "replica" and not (datadir / "standby.signal").is_file()
    ):
        return "incomplete"
    pid = _postmaster_pid(datadir)
    if pid is None or runner is None:
        return "stopped"
    port = _postmaster_port(datadir) or node.port
    where = f"{cfg.host}:{port}"
    if node.name == "primary":
        ok = _try_query(runner, cfg.host, port, "SELECT 1") == "1"
        return f"running on {where}" if ok else f"running (pid {pid}) but not accepting on {where}"
    row = _try_query(
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
    """Describe both servers: "not created", "incomplete", "stopped", or how they run."""
    layout = _layout(cfg)
    nodes = (layout.primary, layout.replica)
    with _explained_permission_errors(layout):
        runner = None
        if any(_postmaster_pid(n.datadir) is not None for n in nodes):
            runner = _Runner.create(find_pg_bindir())
        return {node.name: _node_status(cfg, node, runner) for node in nodes}


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: ``python -m devtools.pgcluster {start,stop,status}``."""
    parser = argparse.ArgumentParser(
        prog="python -m devtools.pgcluster",
        description="Manage the embedded local PostgreSQL (a primary plus a streaming replica). "
        f"Configured by {ENV_DATA_DIR}, {ENV_PRIMARY_PORT}, {ENV_REPLICA_PORT}, {ENV_PG_BIN} "
        f"and {ENV_OS_USER}.",
    )
    parser.add_argument("command", choices=("start", "stop", "status"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        cfg = ClusterConfig.from_env()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.command == "start":
            info = start(cfg)
            print(f"primary: {info.primary_dsn}")
            print(f"replica: {info.replica_dsn}")
        elif args.command == "stop":
            stop(cfg)
            print("stopped")
        else:
            for name, state in status(cfg).items():
                print(f"{name}: {state}")
    except ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
