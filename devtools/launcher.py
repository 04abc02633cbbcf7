"""`make run`: the whole stack on the embedded default, in the foreground.

Starts the local PostgreSQL primary + streaming replica (devtools.pgcluster), tree_service
(which migrates the primary), loads the demo data through TreeService, starts graph_service on
the replica, the MCP gateway over Streamable HTTP and the web view, then prints the MCP
endpoint, a development binding token, an example call and the web view's sign-in link.
Ctrl-C, SIGTERM or SIGHUP (the terminal closed) stops everything it started, in reverse order,
at once, even during start-up; PostgreSQL is stopped only when this run started it. The run
exits when a service or the PostgreSQL primary goes away; a replica that stops and comes back
is reported, and graph_service reads from the other replicas meanwhile (MIRRORTREE_PG_REPLICAS
starts more than one).

Each run records its own pid and the services' pids in the data folder's `run/`, so a run that
was killed (SIGKILL) leaves nothing behind that `python -m devtools.launcher stop` (`make
stack-stop`) cannot find: it stops a live run, the services a killed run left (each checked to
be the very process that was recorded) and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TextIO

from devtools import demo, pgcluster
from devtools.pgcluster import roles
from mirrortree.envconfig import env_int
from mirrortree.healthcheck import check

STARTUP_TIMEOUT_S = 60.0


class LaunchError(Exception):
    """The stack could not be started; the message says what to do."""


class Interrupted(BaseException):
    """A stop signal arrived (Ctrl-C, SIGTERM, SIGHUP).

    A BaseException so that start-up's polling loops, which treat every Exception as "not up
    yet", cannot swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


SERVICES = ("tree_service", "graph_service", "gateway", "webview")
LAUNCHER = "launcher"


def say(text: str, stream: TextIO | None = None) -> None:
    """Print, ignoring a terminal that is gone (SIGHUP): stopping must go on regardless."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=stream or sys.stdout, flush=True)


# ---- recorded processes --------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    """A process the launcher recorded in `run/<name>.pid`: enough to recognise it later
    (its pid may have been reused by then)."""

    name: str
    pid: int
    argv: tuple[str, ...]
    started: str  # /proc/<pid>/stat start time (clock ticks since boot); "" where unknown

    @classmethod
    def of(cls, name: str, pid: int, argv: tuple[str, ...] | None = None) -> Recorded | None:
        """The live process pid; argv is what it was started with, when known (a process
        that has only just been spawned may not show its new command line yet)."""
        identity = _identity(pid)
        if identity is None:
            return None
        return cls(name, pid, identity[0] if argv is None else argv, identity[1])

    def alive(self) -> bool:
        """Whether the pid still runs the very process that was recorded."""
        return _identity(self.pid) == (self.argv, self.started)


def _identity(pid: int) -> tuple[tuple[str, ...], str] | None:
    """(command line, start time) of a live process, or None."""
    proc = Path("/proc") / str(pid)
    if Path("/proc/self").exists():
        try:
            argv = (proc / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        if stat[0] in ("Z", "X"):
            return None
        return tuple(a.decode(errors="replace") for a in argv), stat[19]
    try:  # no /proc (macOS): the command line alone
        out = subprocess.run(
            ["ps", "-p", str(pid), "-o", "command="],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (tuple(out.split()), "") if out else None


@dataclass(frozen=True)
class RunDir:
    """`<data>/run`: a pid file per recorded process and the lock a live run holds."""

    path: Path

    @property
    def lockfile(self) -> Path:
        return self.path / "launcher.lock"

    def record(self, name: str, pid: int, argv: tuple[str, ...] | None = None) -> None:
        entry = Recorded.of(name, pid, argv)
        if entry is None:
            return  # already gone; Stack.died() reports it
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{name}.pid.tmp"
        tmp.write_text(
            json.dumps({"pid": entry.pid, "argv": list(entry.argv), "started": entry.started})
        )
        tmp.replace(self.path / f"{name}.pid")

    def forget(self, name: str) -> None:
        (self.path / f"{name}.pid").unlink(missing_ok=True)

    def recorded(self, name: str) -> Recorded | None:
        try:
            data = json.loads((self.path / f"{name}.pid").read_text())
            return Recorded(name, int(data["pid"]), tuple(data["argv"]), str(data["started"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def alive(self, names: tuple[str, ...] = SERVICES) -> list[Recorded]:
        """The recorded processes among names that still run."""
        found = [self.recorded(name) for name in names]
        return [entry for entry in found if entry is not None and entry.alive()]

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held for a run's whole life: a second run from the same data folder is refused
        before it touches anything (the first run's PostgreSQL above all)."""
        self.path.mkdir(parents=True, exist_ok=True)
        with self.lockfile.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                other = self.recorded(LAUNCHER)
                who = f" (pid {other.pid})" if other is not None and other.alive() else ""
                raise LaunchError(
                    f"another `make run`{who} is running from {self.path.parent}; stop it "
                    "first (Ctrl-C in its terminal, or `make stack-stop`), or give this one its "
                    "own MIRRORTREE_DATA_DIR and ports"
                ) from None
            self.record(LAUNCHER, os.getpid())
            try:
                yield
            finally:
                self.forget(LAUNCHER)
                fcntl.flock(handle, fcntl.LOCK_UN)


def terminate(entry: Recorded, timeout: float = 15) -> None:
    """SIGTERM a recorded process (only if it is still that process), SIGKILL after timeout."""
    if not entry.alive():
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(entry.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while entry.alive():
        if time.monotonic() > deadline:
            say(f"{entry.name} (pid {entry.pid}) did not stop in {timeout:.0f} s; killing it")
            with contextlib.suppress(ProcessLookupError):
                os.kill(entry.pid, signal.SIGKILL)
            break
        time.sleep(0.1)


# ---- the stack -----------------------------------------------------------------------------


@dataclass
class Stack:
    cluster: pgcluster.ClusterConfig
    log_dir: Path
    run_dir: RunDir | None = None
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    # Whether this run started PostgreSQL (it was not running before): only then does it stop
    # it. A cluster that was running belongs to whoever started it.
    owns_postgres: bool = False

    def start_postgres(self) -> pgcluster.ClusterInfo:
        self.owns_postgres = not pgcluster.running(self.cluster)
        try:
            return pgcluster.start(self.cluster)
        except BaseException:
            # A start refused before any server ran (a port in use, say) left nothing to stop.
            if not pgcluster.running(self.cluster):
                self.owns_postgres = False
            raise

    def postgres_up(self) -> tuple[str, ...]:
        """The PostgreSQL servers running now ("primary", "replica", "replica2", …)."""
        return pgcluster.running(self.cluster)

    def spawn(self, name: str, module: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"{name}.log").open("ab")
        argv = (sys.executable, "-m", module)
        process = subprocess.Popen(
            argv,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the launcher only; it stops them in order
        )
        log.close()
        self.processes.append((name, process))
        if self.run_dir is not None:
            self.run_dir.record(name, process.pid, argv)
        return process

    def died(self) -> str | None:
        for name, process in self.processes:
            if process.poll() is not None:
                return name
        return None

    def stop(self) -> None:
        for name, process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    say(f"{name} did not stop in 15 s; killing it", sys.stderr)
                    process.kill()
                    process.wait()
            if self.run_dir is not None:
                self.run_dir.forget(name)
        self.processes.clear()
        if self.owns_postgres:
            pgcluster.stop(self.cluster)
            self.owns_postgres = False


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        # Like the servers themselves: TIME_WAIT leftovers don't count, a listener does.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _wait(what: str, ready: Callable[[], bool], stack: Stack, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        dead = stack.died()
        if dead:
            raise LaunchError(
                f"{dead} exited during start-up; see {stack.log_dir / (dead + '.log')}"
            )
        try:
            if ready():
                return
        except Exception:  # not up yet; keep polling until the deadline
            pass
        time.sleep(0.1)
    raise LaunchError(f"{what} did not become ready in {STARTUP_TIMEOUT_S:.0f} s; see {log}")


def _cursor_secret(data_dir: Path) -> str:
    configured = os.environ.get("MIRRORTREE_CURSOR_SECRET", "")
    if configured:
        return configured
    path = data_dir / "cursor_secret"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()


@dataclass(frozen=True)
class ServicePorts:
    """The loopback ports of the services."""

    tree: int = 50051
    graph: int = 50052
    gateway: int = 8765
    webview: int = 8766

    @classmethod
    def from_env(cls) -> ServicePorts:
        """From MIRRORTREE_{TREE,GRAPH,GATEWAY,WEBVIEW}_PORT; a malformed value is a
        ValueError."""
        return cls(
            tree=env_int("MIRRORTREE_TREE_PORT", cls.tree, 1, 65535),
            graph=env_int("MIRRORTREE_GRAPH_PORT", cls.graph, 1, 65535),
            gateway=env_int("MIRRORTREE_GATEWAY_PORT", cls.gateway, 1, 65535),
            webview=env_int("MIRRORTREE_WEBVIEW_PORT", cls.webview, 1, 65535),
        )


def launch(stack: Stack, ports: ServicePorts) -> str:
    """Start everything; return the text to print once the stack is ready."""
    tree_port, graph_port, gateway_port = ports.tree, ports.graph, ports.gateway
    for name, port in (
        ("MIRRORTREE_TREE_PORT", tree_port),
        ("MIRRORTREE_GRAPH_PORT", graph_port),
        ("MIRRORTREE_GATEWAY_PORT", gateway_port),
        ("MIRRORTREE_WEBVIEW_PORT", ports.webview),
    ):
        if not _port_free(port):
            message = f"port {port} on 127.0.0.1 is in use; set {name} to a free port"
            left = stack.run_dir.alive() if stack.run_dir is not None else []
            if left:
                pids = ", ".join(f"{e.name} pid {e.pid}" for e in left)
                message += (
                    f", or stop what an earlier `make run` left running ({pids}) with "
                    "`make stack-stop`"
                )
            raise LaunchError(message)

    say("starting PostgreSQL primary + streaming replica ...")
    info = stack.start_postgres()
    stack.log_dir.mkdir(parents=True, exist_ok=True)
    secret = _cursor_secret(stack.cluster.data_dir)

    tree_target = f"127.0.0.1:{tree_port}"
    graph_target = f"127.0.0.1:{graph_port}"
    say("starting tree_service (migrates the primary) ...")
    stack.spawn(
        "tree_service",
        "tree_service",
        {
            # Least privilege (SECURITY.md): rows as the writer, migrations as the owner.
            "MIRRORTREE_TREE_DSN": roles.writer_dsn(info.primary_dsn),
            "MIRRORTREE_TREE_MIGRATION_DSN": info.primary_dsn,
            "MIRRORTREE_TREE_LISTEN": tree_target,
        },
    )
    _wait(
        "tree_service",
        lambda: check(tree_target, timeout=1) == "SERVING",
        stack,
        stack.log_dir / "tree_service.log",
    )

    say("loading demo data through TreeService ...")
    loaded = asyncio.run(demo.load(tree_target))

    say("starting graph_service (reads the replica) and the MCP gateway ...")
    stack.spawn(
        "graph_service",
        "graph_service",
        {
            "MIRRORTREE_GRAPH_REPLICA_DSNS": ",".join(
                roles.reader_dsn(dsn) for dsn in info.replica_dsns or (info.replica_dsn,)
            ),
            "MIRRORTREE_GRAPH_GATE_DSN": roles.reader_dsn(info.primary_dsn),
            "MIRRORTREE_GRAPH_LISTEN": graph_target,
            # Development default (SECURITY.md): the demo reads without a binding.
            "MIRRORTREE_GRAPH_ANONYMOUS_READS": "true",
            "MIRRORTREE_CURSOR_SECRET": secret,
        },
    )
    _wait(
        "graph_service",
        lambda: check(graph_target, timeout=1) == "SERVING",
        stack,
        stack.log_dir / "graph_service.log",
    )
    asyncio.run(demo.wait_until_readable(graph_target, loaded))

    stack.spawn(
        "gateway",
        "gateway",
        {
            "MIRRORTREE_GATEWAY_TRANSPORT": "http",
            "MIRRORTREE_GATEWAY_GRAPH_TARGET": graph_target,
            "MIRRORTREE_GATEWAY_LISTEN": f"127.0.0.1:{gateway_port}",
        },
    )
    health = f"http://127.0.0.1:{gateway_port}/healthz"

    def gateway_ready() -> bool:
        with urllib.request.urlopen(health, timeout=1) as response:
            return bool(response.status == 200)

    _wait("gateway", gateway_ready, stack, stack.log_dir / "gateway.log")

    web = f"http://127.0.0.1:{ports.webview}"
    stack.spawn(
        "webview",
        "webview",
        {
            "MIRRORTREE_WEBVIEW_LISTEN": f"127.0.0.1:{ports.webview}",
            "MIRRORTREE_WEBVIEW_TREE_TARGET": tree_target,
            "MIRRORTREE_WEBVIEW_GRAPH_TARGET": graph_target,
        },
    )

    def webview_ready() -> bool:
        with urllib.request.urlopen(f"{web}/healthz", timeout=1) as response:
            return bool(response.status == 200)

    _wait("webview", webview_ready, stack, stack.log_dir / "webview.log")

    endpoint = f"http://127.0.0.1:{gateway_port}/mcp"
    return "\n".join(
        [
            "",
            f"MCP endpoint: {endpoint}",
            f"MCP token: {loaded.binding_token}",
            "",
            # The token rides in the fragment, which the browser never sends to a server.
            f"Web view: {web}/#token={loaded.binding_token}",
            f"  the demo story (decision A → B): {web}/story/story_line/line-storage",
            "",
            "Try it (MCP Inspector CLI):",
            f"  npx -y @modelcontextprotocol/inspector --cli {endpoint} --transport http "
            f'--header "Authorization: Bearer {loaded.binding_token}" '
            "--method tools/call --tool-name story_graph_search --tool-arg query=PostgreSQL",
            "",
            f"gRPC: TreeService {tree_target}, StoryGraph {graph_target}; logs in {stack.log_dir}",
            "Press Ctrl-C to stop everything (PostgreSQL included)."
            if stack.owns_postgres
            else "Press Ctrl-C to stop the services; PostgreSQL was already running and keeps "
            "running (`make stack-stop` stops it).",
        ]
    )


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run(cluster: pgcluster.ClusterConfig, ports: ServicePorts) -> int:
    """`make run`: start the stack, serve until a stop signal or a failure, stop it."""
    run_dir = RunDir(cluster.data_dir / "run")
    stack = Stack(cluster, cluster.data_dir / "logs", run_dir)
    stopping = False
    started = False

    def request_stop(signum: int, _: FrameType | None) -> None:
        # Raised where the launcher is (a start-up wait, a subprocess, the idle loop) so that
        # a stop never waits for start-up to finish; ignored once stopping has begun.
        if not stopping:
            raise Interrupted(signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, request_stop)
    try:
        with run_dir.exclusive():
            try:
                banner = launch(stack, ports)
                started = True
                # Taken before the banner: a server lost right after it is then still reported.
                up = stack.postgres_up()
                say(banner)
                return watch(stack, up)
            finally:
                stopping = True
                if stack.processes or stack.owns_postgres:
                    say("stopping ...")
                    stack.stop()
                    say("stopped.")
    except Interrupted as stop:
        if started:
            return 0
        say(f"start-up interrupted ({stop}); stopped what was started", sys.stderr)
        return 128 + stop.signum
    except (LaunchError, pgcluster.ClusterError) as exc:
        say(f"error: {exc}", sys.stderr)
        return 1


def watch(stack: Stack, running: tuple[str, ...]) -> int:
    """Wait for a stop signal (Interrupted); return 1 when a service or the primary is gone.
    `running`: the PostgreSQL servers up when the stack was announced.

    A replica that stops is only reported (and its return too): graph_service reads from the
    others meanwhile, or answers UNAVAILABLE until one is back, so a replica can be restarted
    under a running stack.
    """
    checked = 0.0
    up = set(running)
    while True:
        dead = stack.died()
        if dead:
            say(f"{dead} exited unexpectedly; see {stack.log_dir / (dead + '.log')}", sys.stderr)
            return 1
        if time.monotonic() - checked > 1:
            checked = time.monotonic()
            now = set(stack.postgres_up())
            if "primary" not in now:
                say(
                    "the PostgreSQL primary is no longer running; see "
                    f"{stack.log_dir / 'primary.log'} and run `make run` again",
                    sys.stderr,
                )
                return 1
            for name in sorted(up - now):
                say(
                    f"the PostgreSQL {name} is no longer running; reads go to the other "
                    "replicas, if any, until it is back (see "
                    f"{stack.log_dir / (name + '.log')})",
                    sys.stderr,
                )
            for name in sorted(now - up):
                say(f"the PostgreSQL {name} is running again and takes reads")
            up = now
        time.sleep(0.2)


def stop_leftovers(cluster: pgcluster.ClusterConfig) -> int:
    """`make stack-stop`: stop a live run, what a killed run left running, and PostgreSQL."""
    run_dir = RunDir(cluster.data_dir / "run")
    launcher = run_dir.recorded(LAUNCHER)
    if launcher is not None and launcher.alive():
        say(f"stopping the running `make run` (pid {launcher.pid}) ...")
        terminate(launcher, timeout=90)  # it stops its own services and PostgreSQL
    for name in reversed(SERVICES):
        entry = run_dir.recorded(name)
        if entry is not None and entry.alive():
            say(f"stopping {name} (pid {entry.pid}) left by an earlier run ...")
            terminate(entry)
        run_dir.forget(name)
    if launcher is not None and not launcher.alive():
        run_dir.forget(LAUNCHER)  # a killed run's record
    pgcluster.stop(cluster)
    say("stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m devtools.launcher [stop]`."""
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["stop"]):
        say("usage: python -m devtools.launcher [stop]", sys.stderr)
        return 2
    try:
        cluster = pgcluster.ClusterConfig.from_env()
        # Checked before anything starts; `stop` needs no service port.
        ports = ServicePorts.from_env() if args == [] else ServicePorts()
    except ValueError as exc:
        say(f"error: {exc}", sys.stderr)
        return 2
    if args == ["stop"]:
        try:
            return stop_leftovers(cluster)
        except pgcluster.ClusterError as exc:
            say(f"error: {exc}", sys.stderr)
            return 1
    return run(cluster, ports)


if __name__ == "__main__":
    sys.exit(main())
