"""The services under measurement, each run as deployed: its own `python -m` process configured
by its environment; and the host's CPU idle policy for the run."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc

CURSOR_SECRET = "bench-secret-bench-secret-bench-secret!"
SERVICE_START_S = 60.0
SERVICE_STOP_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServiceProcess:
    """A service run as it is deployed: `python -m <module>`, configured by its environment."""

    process: asyncio.subprocess.Process
    port: int

    @classmethod
    async def start(cls, module: str, env: dict[str, str], log: Path) -> ServiceProcess:
        """Start `module` listening on a free port (its *_LISTEN variable is added to `env`)
        and wait until it serves."""
        port = free_port()
        listen = "MIRRORTREE_TREE_LISTEN" if module == "tree_service" else "MIRRORTREE_GRAPH_LISTEN"
        with log.open("ab") as output:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                module,
                env={
                    **os.environ,
                    "MIRRORTREE_LOG_LEVEL": "warning",
                    **env,
                    listen: f"127.0.0.1:{port}",
                },
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        service = cls(process, port)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        try:
            deadline = time.monotonic() + SERVICE_START_S
            while process.returncode is None and time.monotonic() < deadline:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(channel.channel_ready(), 0.5)
                    return service
        finally:
            await channel.close()
        failure = (
            f"exited with status {process.returncode}"
            if process.returncode is not None
            else f"did not serve within {SERVICE_START_S:g} s"
        )
        await service.stop()
        raise SystemExit(f"{module} {failure}; see {log}")

    async def stop(self) -> None:
        """SIGTERM, and SIGKILL if it has not ended in SERVICE_STOP_S: a stop always ends."""
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), SERVICE_STOP_S)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


def start_graph(replica_dsn: str, log: Path) -> Awaitable[ServiceProcess]:
    return ServiceProcess.start(
        "graph_service",
        {
            "MIRRORTREE_GRAPH_REPLICA_DSNS": replica_dsn,
            "MIRRORTREE_CURSOR_SECRET": CURSOR_SECRET,
            "MIRRORTREE_GRAPH_ANONYMOUS_READS": "true",  # the cases read by explicit scope
        },
        log,
    )


@contextlib.contextmanager
def cpu_idle_policy(hold_awake: bool) -> Iterator[str]:
    """Hold idle CPUs awake for the run (see bench.run); yields how they idle."""
    if not hold_awake:
        yield "CPUs idle as the host sets them"
        return
    try:
        request = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    except OSError as exc:
        raise SystemExit(
            f"--hold-cpus-awake needs write access to /dev/cpu_dma_latency: {exc}"
        ) from None
    try:
        # The request holds while the file stays open (the kernel's PM QoS interface).
        os.write(request, struct.pack("i", 0))
        yield "idle CPUs held awake (/dev/cpu_dma_latency = 0 µs)"
    finally:
        os.close(request)
