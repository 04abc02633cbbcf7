"""Settings of the MCP gateway, read once from the environment (fails fast when invalid)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gateway import credentials
from gateway.bodylimit import DEFAULT_MAX_BODY_BYTES
from mirrortree.envconfig import env_int

TRANSPORTS = ("http", "stdio")


@dataclass(frozen=True)
class Settings:
    graph_target: str = "127.0.0.1:50052"
    transport: str = "http"
    listen: str = "127.0.0.1:8765"
    allowed_hosts: tuple[str, ...] = ()
    binding_token: str = ""  # stdio: the binding this process serves
    call_timeout_s: float = 15.0
    log_level: str = "info"
    access_poll_s: float = 2.0  # how often bindings' switches are polled for list_changed
    rate_per_minute: int = 600  # tool calls per binding (gateway.ratelimit)
    rate_burst: int = 60
    metrics: str = ""  # host:port of the Prometheus endpoint; "" = off
    # HTTP request bodies past this are refused with 413 before parsing (gateway.bodylimit).
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    # HTTP: how long a stop waits for the requests in flight before cancelling them.
    shutdown_grace_s: float = 5.0

    @classmethod
    def from_env(cls) -> Settings:
        transport = os.environ.get("MIRRORTREE_GATEWAY_TRANSPORT", "http")
        if transport not in TRANSPORTS:
            raise ValueError(f"MIRRORTREE_GATEWAY_TRANSPORT={transport!r}: use http or stdio")
        token = os.environ.get("MIRRORTREE_BINDING_TOKEN", "")
        if transport == "stdio" and not token:
            raise ValueError(
                "MIRRORTREE_BINDING_TOKEN is required for stdio: the binding (session, runtime) "
                "this process serves, issued by TreeService.CreateBinding"
            )
        problem = credentials.token_problem(token) if token else None
        if problem is not None:
            raise ValueError(f"MIRRORTREE_BINDING_TOKEN {problem}")
        hosts = tuple(
            h.strip()
            for h in os.environ.get("MIRRORTREE_GATEWAY_ALLOWED_HOSTS", "").split(",")
            if h.strip()
        )
        return cls(
            graph_target=os.environ.get("MIRRORTREE_GATEWAY_GRAPH_TARGET", "127.0.0.1:50052"),
            transport=transport,
            listen=os.environ.get("MIRRORTREE_GATEWAY_LISTEN", "127.0.0.1:8765"),
            allowed_hosts=hosts,
            binding_token=token,
            call_timeout_s=env_int("MIRRORTREE_GATEWAY_CALL_TIMEOUT_MS", 15_000, 100, 300_000)
            / 1000,
            log_level=os.environ.get("MIRRORTREE_LOG_LEVEL", "info"),
            access_poll_s=env_int("MIRRORTREE_GATEWAY_ACCESS_POLL_MS", 2_000, 50, 600_000) / 1000,
            rate_per_minute=env_int("MIRRORTREE_GATEWAY_RATE_PER_MINUTE", 600, 1, 1_000_000),
            rate_burst=env_int("MIRRORTREE_GATEWAY_RATE_BURST", 60, 1, 100_000),
            metrics=os.environ.get("MIRRORTREE_GATEWAY_METRICS", ""),
            max_body_bytes=env_int(
                "MIRRORTREE_GATEWAY_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, 1024, 64 * 1024 * 1024
            ),
            shutdown_grace_s=env_int("MIRRORTREE_GATEWAY_SHUTDOWN_GRACE_MS", 5_000, 0, 300_000)
            / 1000,
        )
