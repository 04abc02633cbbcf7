"""`make run`: the whole stack on the embedded default, in the foreground.

Starts the local PostgreSQL primary + streaming replica (mirrortree.pgcluster), tree_service
(which migrates the primary), loads the demo data through TreeService, starts graph_service on
the replica and the MCP gateway over Streamable HTTP, then prints the MCP endpoint, a
development binding token and an example call. Ctrl-C (or SIGTERM) stops everything it
started, PostgreSQL included, in reverse order.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from mirrortree import demo, pgcluster
from mirrortree.envconfig import env_int
from mirrortree.healthcheck import check

STARTUP_TIMEOUT_S = 60.0


class LaunchError(Exception):
    """The stack could not be started; the message says what to do."""


@dataclass
class Stack:
    cluster: pgcluster.ClusterConfig
    log_dir: Path
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)

    def spawn(self, name: str, module: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, "-m", module],
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the launcher only; it stops them in order
        )
        log.close()
        self.processes.append((name, process))
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
                    print(f"{name} did not stop in 15 s; killing it", file=sys.stderr)
                    process.kill()
                    process.wait()
        self.processes.clear()
        pgcluster.stop(self.cluster)


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


def launch(stack: Stack) -> str:
    """Start everything; return the text to print once the stack is ready."""
    tree_port = env_int("MIRRORTREE_TREE_PORT", 50051, 1, 65535)
    graph_port = env_int("MIRRORTREE_GRAPH_PORT", 50052, 1, 65535)
    gateway_port = env_int("MIRRORTREE_GATEWAY_PORT", 8765, 1, 65535)
    for name, port in (
        ("MIRRORTREE_TREE_PORT", tree_port),
        ("MIRRORTREE_GRAPH_PORT", graph_port),
        ("MIRRORTREE_GATEWAY_PORT", gateway_port),
    ):
        if not _port_free(port):
            raise LaunchError(f"port {port} on 127.0.0.1 is in use; set {name} to a free port")

    print("starting PostgreSQL primary + streaming replica ...", flush=True)
    info = pgcluster.start(stack.cluster)
    stack.log_dir.mkdir(parents=True, exist_ok=True)
    secret = _cursor_secret(stack.cluster.data_dir)

    tree_target = f"127.0.0.1:{tree_port}"
    graph_target = f"127.0.0.1:{graph_port}"
    print("starting tree_service (migrates the primary) ...", flush=True)
    stack.spawn(
        "tree_service",
        "tree_service",
        {"MIRRORTREE_TREE_DSN": info.primary_dsn, "MIRRORTREE_TREE_LISTEN": tree_target},
    )
    _wait(
        "tree_service",
        lambda: check(tree_target, timeout=1) == "SERVING",
        stack,
        stack.log_dir / "tree_service.log",
    )

    print("loading demo data through TreeService ...", flush=True)
    loaded = asyncio.run(demo.load(tree_target))

    print("starting graph_service (reads the replica) and the MCP gateway ...", flush=True)
    stack.spawn(
        "graph_service",
        "graph_service",
        {
            "MIRRORTREE_GRAPH_REPLICA_DSNS": info.replica_dsn,
            "MIRRORTREE_GRAPH_GATE_DSN": info.primary_dsn,
            "MIRRORTREE_GRAPH_LISTEN": graph_target,
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

    endpoint = f"http://127.0.0.1:{gateway_port}/mcp"
    return "\n".join(
        [
            "",
            f"MCP endpoint: {endpoint}",
            f"MCP token: {loaded.binding_token}",
            "",
            "Try it (MCP Inspector CLI):",
            f"  npx -y @modelcontextprotocol/inspector --cli {endpoint} --transport http "
            f'--header "Authorization: Bearer {loaded.binding_token}" '
            "--method tools/call --tool-name story_graph_search --tool-arg query=PostgreSQL",
            "",
            f"gRPC: TreeService {tree_target}, StoryGraph {graph_target}; logs in {stack.log_dir}",
            "Press Ctrl-C to stop everything (PostgreSQL included).",
        ]
    )


def main() -> int:
    try:
        cluster = pgcluster.ClusterConfig.from_env()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stack = Stack(cluster, cluster.data_dir / "logs")
    stop_requested = False

    def request_stop(signum: int, _: FrameType | None) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        banner = launch(stack)
        print(banner, flush=True)
        while not stop_requested:
            dead = stack.died()
            if dead:
                print(
                    f"{dead} exited unexpectedly; see {stack.log_dir / (dead + '.log')}",
                    file=sys.stderr,
                )
                return 1
            time.sleep(0.2)
        return 0
    except (LaunchError, pgcluster.ClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        print("stopping ...", flush=True)
        stack.stop()
        print("stopped.", flush=True)


if __name__ == "__main__":
    sys.exit(main())
