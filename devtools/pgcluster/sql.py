"""SQL through psql as the bootstrap superuser: the cluster manager needs no driver of its own."""

from __future__ import annotations

import subprocess

from devtools.pgcluster.config import ADMIN_ROLE, ClusterError
from devtools.pgcluster.processes import Node, log_tail
from devtools.pgcluster.runner import Runner


def literal(value: str) -> str:
    """value as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def ident(value: str) -> str:
    """value as a quoted SQL identifier."""
    return '"' + value.replace('"', '""') + '"'


def psql(
    runner: Runner, host: str, port: int, sql: str, *, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run sql with psql as the bootstrap superuser; never raises on failure."""
    return runner.tool(
        "psql",
        *("-X", "-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"),
        *("-h", host, "-p", str(port), "-U", ADMIN_ROLE, "-d", "postgres", "-c", sql),
        timeout=timeout,
    )


def query(runner: Runner, host: str, node: Node, sql: str) -> str:
    """Run sql on node and return its output; a failure is a ClusterError."""
    res = psql(runner, host, node.port, sql)
    if res.returncode != 0:
        raise ClusterError(
            f"query on the {node.name} ({host}:{node.port}) failed: {res.stderr.strip()}\n"
            f"{log_tail(node)}"
        )
    return res.stdout.strip()


def try_query(runner: Runner, host: str, port: int, sql: str) -> str | None:
    """Run sql on the server at port; its output, or None if it failed."""
    res = psql(runner, host, port, sql, timeout=15)
    return res.stdout.strip() if res.returncode == 0 else None
