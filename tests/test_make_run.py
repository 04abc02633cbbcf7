"""End to end, as a user runs it: `python -m devtools.launcher` (what `make run` starts)
brings up PostgreSQL primary + replica, the three services and demo data; the MCP SDK client
lists three read-only tools and gets a real page from the replica; SIGINT stops everything."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from devtools import pgcluster
from devtools.pgcluster import faults
from tests.conftest import free_port
from tests.gateway.harness import http_client


def postgres_processes_in(data_dir: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if str(data_dir) in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.timeout(240)
async def test_make_run_serves_demo_data_over_mcp_and_stops_cleanly():
    data_dir = Path(tempfile.mkdtemp(prefix="mirrortree-run-"))
    ports = {
        "MIRRORTREE_PG_PRIMARY_PORT": free_port(),
        "MIRRORTREE_PG_REPLICA_PORT": free_port(),
        "MIRRORTREE_TREE_PORT": free_port(),
        "MIRRORTREE_GRAPH_PORT": free_port(),
        "MIRRORTREE_GATEWAY_PORT": free_port(),
        "MIRRORTREE_WEBVIEW_PORT": free_port(),
    }
    env = {**os.environ, "MIRRORTREE_DATA_DIR": str(data_dir)}
    env.update({k: str(v) for k, v in ports.items()})
    launcher = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "devtools.launcher",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert launcher.stdout is not None
    printed: list[str] = []
    try:
        endpoint = token = web = ""
        while not web:
            line = (await asyncio.wait_for(launcher.stdout.readline(), 120)).decode()
            assert line, "launcher exited early:\n" + "".join(printed)
            printed.append(line)
            if line.startswith("MCP endpoint: "):
                endpoint = line.removeprefix("MCP endpoint: ").strip()
            if line.startswith("MCP token: "):
                token = line.removeprefix("MCP token: ").strip()
            if line.startswith("Web view: "):
                web = line.removeprefix("Web view: ").strip()
        assert endpoint == f"http://127.0.0.1:{ports['MIRRORTREE_GATEWAY_PORT']}/mcp"
        # The printed sign-in link holds the binding in its fragment; the tree answers to it.
        base, _, fragment = web.partition("/#")
        assert base == f"http://127.0.0.1:{ports['MIRRORTREE_WEBVIEW_PORT']}"
        assert fragment == f"token={token}"
        status, page = await asyncio.to_thread(web_page, f"{base}/", token)
        assert status == 200 and "Choosing the storage engine" in page

        async with http_client(endpoint, token) as client:
            listed = await client.list_tools()
            result = await client.call_tool("story_graph_search", {"query": "PostgreSQL"})
        assert len(listed.tools) == 3
        assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
        assert not result.is_error, result.content
        hits = result.structured_content["hits"]
        assert "ev-revise-b" in {h["ref"]["id"] for h in hits}
        assert result.structured_content["resolved_scope"]["scope"] == {"projects": ["demo"]}

        launcher.send_signal(signal.SIGINT)
        rest = await asyncio.wait_for(launcher.stdout.read(), 60)
        assert await launcher.wait() == 0, rest.decode()
        assert postgres_processes_in(data_dir) == []
        for port in ports.values():
            with socket.socket() as sock:
                # SO_REUSEADDR ignores TIME_WAIT leftovers but still fails on a live listener.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("127.0.0.1", port))
    finally:
        if launcher.returncode is None:
            launcher.kill()
            await launcher.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


def web_page(url: str, token: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode()


# ---- what a run owns, and what it leaves behind when killed -----------------------------


class Run:
    """One `python -m devtools.launcher` with its own data folder and ports."""

    def __init__(self, data_dir: Path, ports: dict[str, int]) -> None:
        self.data_dir = data_dir
        self.ports = ports
        self.env = {**os.environ, "MIRRORTREE_DATA_DIR": str(data_dir)}
        self.env.update({k: str(v) for k, v in ports.items()})
        self.printed: list[str] = []
        self.process: asyncio.subprocess.Process | None = None

    @classmethod
    def fresh(cls) -> Run:
        return cls(
            Path(tempfile.mkdtemp(prefix="mirrortree-run-")),
            {
                "MIRRORTREE_PG_PRIMARY_PORT": free_port(),
                "MIRRORTREE_PG_REPLICA_PORT": free_port(),
                "MIRRORTREE_TREE_PORT": free_port(),
                "MIRRORTREE_GRAPH_PORT": free_port(),
                "MIRRORTREE_GATEWAY_PORT": free_port(),
                "MIRRORTREE_WEBVIEW_PORT": free_port(),
            },
        )

    async def start(self) -> asyncio.subprocess.Process:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "devtools.launcher",
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        return self.process

    async def until(self, prefix: str) -> str:
        """Read printed lines until one starts with prefix; returns it."""
        assert self.process is not None and self.process.stdout is not None
        while True:
            line = (await asyncio.wait_for(self.process.stdout.readline(), 120)).decode()
            assert line, "launcher exited early:\n" + "".join(self.printed)
            self.printed.append(line)
            if line.startswith(prefix):
                return line

    async def finish(self, within_s: float = 60) -> tuple[int, str]:
        assert self.process is not None and self.process.stdout is not None
        rest = await asyncio.wait_for(self.process.stdout.read(), within_s)
        code = await asyncio.wait_for(self.process.wait(), within_s)
        return code, "".join(self.printed) + rest.decode()

    async def once(self, within_s: float = 60) -> tuple[int, str]:
        """Run to the end (a run that is expected to fail)."""
        await self.start()
        return await self.finish(within_s)

    def stop_command(self) -> subprocess.CompletedProcess[str]:
        """What `make stack-stop` runs."""
        return subprocess.run(
            [sys.executable, "-m", "devtools.launcher", "stop"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def recorded_pids(self) -> dict[str, int]:
        run = self.data_dir / "run"
        return {p.stem: json.loads(p.read_text())["pid"] for p in run.glob("*.pid") if p.is_file()}

    def cleanup(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
        self.stop_command()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def assert_ports_free(ports: dict[str, int]) -> None:
    for port in ports.values():
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))


@pytest.mark.timeout(240)
async def test_a_second_run_leaves_the_first_alone_and_stack_stop_clears_a_killed_run():
    first = Run.fresh()
    try:
        await first.start()
        token = (await first.until("MCP token: ")).removeprefix("MCP token: ").strip()
        assert first.process is not None
        services = {k: v for k, v in first.recorded_pids().items() if k != "launcher"}
        assert sorted(services) == ["gateway", "graph_service", "tree_service", "webview"]
        assert first.recorded_pids()["launcher"] == first.process.pid

        # A second run from the same checkout is refused and stops nothing of the first.
        code, out = await Run(first.data_dir, first.ports).once()
        assert code == 1, out
        assert f"another `make run` (pid {first.process.pid}) is running" in out
        assert postgres_processes_in(first.data_dir) != []
        endpoint = f"http://127.0.0.1:{first.ports['MIRRORTREE_GATEWAY_PORT']}/mcp"
        async with http_client(endpoint, token) as client:
            result = await client.call_tool("story_graph_search", {"query": "PostgreSQL"})
        assert not result.is_error, result.content

        # Killed outright, the run leaves its services and PostgreSQL running ...
        first.process.kill()
        await first.process.wait()
        assert all(alive(pid) for pid in services.values())
        # ... which the next run names, with the command that stops them ...
        code, out = await Run(first.data_dir, first.ports).once()
        assert code == 1, out
        assert "is in use" in out and "`make stack-stop`" in out
        assert f"tree_service pid {services['tree_service']}" in out
        # ... and which stack-stop stops, services and PostgreSQL.
        stopped = first.stop_command()
        assert stopped.returncode == 0, stopped.stderr
        assert not any(alive(pid) for pid in services.values())
        assert postgres_processes_in(first.data_dir) == []
        assert_ports_free(first.ports)
    finally:
        first.cleanup()


@pytest.mark.timeout(120)
async def test_a_run_that_fails_to_start_leaves_a_cluster_it_did_not_start_running(
    cluster_config, cluster
):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        run = Run(
            cluster_config.data_dir,
            {
                "MIRRORTREE_PG_PRIMARY_PORT": cluster_config.primary_port,
                "MIRRORTREE_PG_REPLICA_PORT": cluster_config.replica_port,
                "MIRRORTREE_TREE_PORT": busy.getsockname()[1],
            },
        )
        code, out = await run.once()
    finally:
        busy.close()
    assert code == 1, out
    assert "is in use" in out
    assert pgcluster.running(cluster_config) == ("primary", "replica")


@pytest.mark.timeout(120)
async def test_a_run_whose_postgresql_port_is_taken_says_so_and_claims_to_stop_nothing():
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    run = Run.fresh()
    run.env["MIRRORTREE_PG_PRIMARY_PORT"] = str(busy.getsockname()[1])
    try:
        code, out = await run.once()
        assert code == 1, out
        assert "MIRRORTREE_PG_PRIMARY_PORT" in out
        assert "stopping" not in out and "stopped." not in out  # nothing had started
        assert postgres_processes_in(run.data_dir) == []
    finally:
        busy.close()
        run.cleanup()


@pytest.mark.timeout(240)
async def test_a_run_survives_a_replica_restart_and_exits_when_its_primary_goes_away():
    run = Run.fresh()
    try:
        await run.start()
        await run.until("MCP token: ")
        services = {k: v for k, v in run.recorded_pids().items() if k != "launcher"}
        config = pgcluster.ClusterConfig(
            data_dir=run.data_dir,
            primary_port=run.ports["MIRRORTREE_PG_PRIMARY_PORT"],
            replica_port=run.ports["MIRRORTREE_PG_REPLICA_PORT"],
        )
        await asyncio.to_thread(faults.take_down, config, "replica", "sigkill")
        gone = await run.until("the PostgreSQL replica is no longer running")
        assert "reads go to the other replicas" in gone
        await asyncio.to_thread(faults.restart, config, "replica")
        await run.until("the PostgreSQL replica is running again")
        assert all(alive(pid) for pid in services.values())
        await asyncio.to_thread(pgcluster.stop, config)
        code, out = await run.finish(within_s=30)
        assert code == 1, out
        assert "the PostgreSQL primary is no longer running" in out
        assert not any(alive(pid) for pid in services.values())
        assert_ports_free(run.ports)
    finally:
        run.cleanup()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
async def test_a_stop_signal_during_start_up_stops_at_once_and_issues_nothing(signum):
    run = Run.fresh()
    try:
        await run.start()
        await run.until("starting tree_service")
        assert run.process is not None
        run.process.send_signal(signum)
        code, out = await run.finish(within_s=30)
        assert code == 128 + signum, out
        assert "start-up interrupted" in out
        assert "MCP token" not in out
        assert postgres_processes_in(run.data_dir) == []
        assert_ports_free(run.ports)
    finally:
        run.cleanup()


@pytest.mark.timeout(240)
async def test_a_run_on_a_running_cluster_says_ctrl_c_leaves_postgresql_running():
    run = Run.fresh()
    config = pgcluster.ClusterConfig(
        data_dir=run.data_dir,
        primary_port=run.ports["MIRRORTREE_PG_PRIMARY_PORT"],
        replica_port=run.ports["MIRRORTREE_PG_REPLICA_PORT"],
    )
    try:
        await asyncio.to_thread(pgcluster.start, config)
        await run.start()
        await run.until("MCP token: ")
        hint = await run.until("Press Ctrl-C")
        assert "PostgreSQL included" not in hint
        assert "keeps running" in hint
        assert run.process is not None
        run.process.send_signal(signal.SIGINT)
        code, out = await run.finish(within_s=60)
        assert code == 0, out
        assert pgcluster.running(config) == ("primary", "replica")
    finally:
        run.cleanup()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "variable",
    [
        "MIRRORTREE_TREE_PORT",
        "MIRRORTREE_GRAPH_PORT",
        "MIRRORTREE_GATEWAY_PORT",
        "MIRRORTREE_WEBVIEW_PORT",
    ],
)
async def test_a_malformed_service_port_is_refused_with_a_message_before_anything_starts(
    variable,
):
    run = Run.fresh()
    run.env[variable] = "abc"
    try:
        code, out = await run.once()
        assert code == 2, out
        assert f"error: {variable}='abc' is not an integer" in out
        assert "Traceback" not in out
        assert not (run.data_dir / "primary").exists()
    finally:
        run.cleanup()
