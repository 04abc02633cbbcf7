"""Stopping one server of a running cluster the way real failures do, for fault-injection tests
and benchmarks: SIGKILL of its postmaster (a crash), an immediate shutdown (no checkpoint) or a
fast one (clients disconnected, clean). `restart` brings it back."""

from __future__ import annotations

import os
import signal
from typing import Literal

from devtools.pgcluster.access import runner_for
from devtools.pgcluster.binaries import find_pg_bindir
from devtools.pgcluster.config import STOP_TIMEOUT_S, ClusterConfig, ClusterError
from devtools.pgcluster.nodes import ensure_running, locked
from devtools.pgcluster.processes import Node, layout_of, postmaster_pid, wait_processes_gone

Stop = Literal["sigkill", "immediate", "fast"]


def node_named(cfg: ClusterConfig, name: str) -> Node:
    """The server called `name` ("primary", "replica", "replica2", …)."""
    for node in layout_of(cfg).nodes:
        if node.name == name:
            return node
    raise ClusterError(f"the cluster has no server called {name!r}")


def take_down(cfg: ClusterConfig, name: str, how: Stop) -> None:
    """Stop server `name` as `how` says and wait until its processes are gone."""
    node = node_named(cfg, name)
    pid = postmaster_pid(node.datadir)
    if pid is None:
        raise ClusterError(f"the {name} is not running")
    if how == "sigkill":
        # Its children notice the postmaster's death and exit on their own.
        os.kill(pid, signal.SIGKILL)
    else:
        runner = runner_for(find_pg_bindir())
        runner.tool(
            "pg_ctl",
            *("-D", str(node.datadir), "-w", "-t", str(STOP_TIMEOUT_S), "-m", how, "stop"),
            timeout=STOP_TIMEOUT_S + 30,
        )
    wait_processes_gone(node, 30)


def restart(cfg: ClusterConfig, name: str) -> None:
    """Start server `name` again (after `take_down`) and wait until it answers."""
    node = node_named(cfg, name)
    runner = runner_for(find_pg_bindir())
    with locked(layout_of(cfg)):
        ensure_running(runner, cfg, node, changed=False)
