"""End to end, as a user runs it: `python -m mirrortree.launcher` (what `make run` starts)
brings up PostgreSQL primary + replica, the three services and demo data; the MCP SDK client
lists three read-only tools and gets a real page from the replica; SIGINT stops everything."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

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
    }
    env = {**os.environ, "MIRRORTREE_DATA_DIR": str(data_dir)}
    env.update({k: str(v) for k, v in ports.items()})
    launcher = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mirrortree.launcher",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert launcher.stdout is not None
    printed: list[str] = []
    try:
        endpoint = token = ""
        while not token:
            line = (await asyncio.wait_for(launcher.stdout.readline(), 120)).decode()
            assert line, "launcher exited early:\n" + "".join(printed)
            printed.append(line)
            if line.startswith("MCP endpoint: "):
                endpoint = line.removeprefix("MCP endpoint: ").strip()
            if line.startswith("MCP token: "):
                token = line.removeprefix("MCP token: ").strip()
        assert endpoint == f"http://127.0.0.1:{ports['MIRRORTREE_GATEWAY_PORT']}/mcp"

        async with http_client(endpoint, token) as client:
            listed = await client.list_tools()
            result = await client.call_tool("story_graph_search", {"query": "PostgreSQL"})
        assert len(listed.tools) == 3
        assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
        assert not result.is_error, result.content
        hits = result.structured_content["hits"]
        assert "ev-revise-b" in {h["ref"]["id"] for h in hits}
        assert result.structured_content["basis"]["scope"]["resolved"] == {
            "projects": {"project_ids": ["demo"]}
        }

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
