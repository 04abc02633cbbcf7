"""The gateway benchmark (bench.gateway): its stack starts with the default ports taken, its
cases run and say where each call's CPU goes, and it stops everything it started, however the
bench ends."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.gateway import (
    PORT_VARIABLES,
    RATE_LIMIT_LIFTED,
    launched_stack,
    measure,
    report,
    stack_groups,
)
from devtools.launcher import SERVICES, RunDir, ServicePorts


@contextlib.contextmanager
def occupied(port: int) -> Iterator[None]:
    """Something listens on 127.0.0.1:port for the duration (or already did)."""
    with socket.socket() as sock:
        with contextlib.suppress(OSError):  # already taken: occupied all the same
            sock.bind(("127.0.0.1", port))
            sock.listen()
        yield


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class BenchFailed(Exception):
    pass


@pytest.mark.timeout(600)
@pytest.mark.parametrize("failure", [BenchFailed, KeyboardInterrupt])
def test_the_gateway_bench_starts_beside_a_taken_web_view_port_and_leaves_nothing_running(
    failure: type[BaseException],
) -> None:
    with (
        occupied(ServicePorts.webview),
        pytest.raises(failure),
        launched_stack(start_s=300) as stack,
    ):
        run_dir = RunDir(stack.data_dir / "run")
        started = run_dir.alive()
        ports = [int(stack.env[name]) for name in PORT_VARIABLES]
        assert {entry.name for entry in started} == set(SERVICES)
        assert int(stack.env["MIRRORTREE_WEBVIEW_PORT"]) != ServicePorts.webview
        gateway = next(entry for entry in started if entry.name == "gateway")
        environ = Path(f"/proc/{gateway.pid}/environ").read_bytes().split(b"\0")
        for name, value in RATE_LIMIT_LIFTED.items():
            assert f"{name}={value}".encode() in environ
        assert all(listening(port) for port in ports)
        rows = asyncio.run(
            measure(
                stack.mcp_url,
                stack.graph_target,
                stack.token,
                clients=2,
                seconds=0.5,
                query="PostgreSQL",
                groups=stack_groups(stack.data_dir),
            )
        )
        direct, plain, sdk = rows
        assert all(row.rate > 0 for row in rows)
        assert set(plain.cpu_ms) == {"gateway", "graph_service", "PostgreSQL", "clients"}
        # Where the CPU goes: the gateway works for MCP calls only, graph_service for each.
        assert plain.cpu_ms["gateway"] > direct.cpu_ms["gateway"]
        assert sdk.cpu_ms["gateway"] > direct.cpu_ms["gateway"]
        assert all(row.cpu_ms["graph_service"] > 0 for row in rows)
        table = report(rows, clients=2, seconds=0.5, query="PostgreSQL")
        assert (
            "| CPU ms/call: gateway |" in table and table.count("\n| ") == 5
        )  # the header, the rule, three cases
        raise failure  # the bench fails (or is interrupted) mid-run
    assert not [entry.name for entry in started if entry.alive()]
    assert not [port for port in ports if listening(port)]  # PostgreSQL included
    assert not stack.data_dir.exists()
