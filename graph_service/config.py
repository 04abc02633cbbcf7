"""Settings of the graph service, read once from the environment (fails fast when invalid)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mirrortree.envconfig import env_bool, env_int

MIN_SECRET = 32


@dataclass(frozen=True)
class Settings:
    replica_dsns: tuple[str, ...]
    cursor_secret: bytes
    listen: str = "127.0.0.1:50052"
    allow_primary: bool = False
    metrics: str = ""
    log_level: str = "info"
    pool_max: int = 20
    consistency_wait_ms: int = 2000
    health_interval_ms: int = 500
    # A replica further behind the primary than this (WAL bytes not yet replayed) takes no reads
    # without a consistency token until it catches up.
    max_lag_bytes: int = 16 * 1024 * 1024
    # The primary whose current WAL position each replica's lag is measured against; empty =
    # the gate's DSN; neither = against the furthest position any replica has received.
    primary_dsn: str = ""
    # Once the primary has not answered for longer than `primary_grace_ms`, a replica whose last
    # replayed commit is older than `max_replay_age_ms` takes no reads without a token either;
    # while it answers, neither does a replica without a WAL receiver connected to it that long.
    primary_grace_ms: int = 30_000
    max_replay_age_ms: int = 300_000
    shutdown_grace_s: float = 5.0
    # The primary, read-only, for the switches that gate the tools (see graph_service.gate);
    # empty = read them from the replicas (a switch then applies once replicated).
    gate_dsn: str = ""
    # Megabytes of context-read neighbourhoods held in memory (graph_service.neighbourhood.
    # NeighbourhoodCache); 0 holds none.
    context_cache_mb: int = 64
    # Reads without a binding token (any scope, for trusted in-cluster callers) only when
    # switched on: off by default, on for `make run` and the tests (SECURITY.md).
    anonymous_reads: bool = False
    max_concurrent_rpcs: int = 256  # beyond it RESOURCE_EXHAUSTED (mirrortree.limits)

    @classmethod
    def from_env(cls) -> Settings:
        dsns = tuple(
            d.strip() for d in os.environ.get("MIRRORTREE_GRAPH_REPLICA_DSNS", "").split(",")
        )
        dsns = tuple(d for d in dsns if d)
        if not dsns:
            raise ValueError(
                "MIRRORTREE_GRAPH_REPLICA_DSNS is required (comma-separated replica DSNs)"
            )
        if os.environ.get("MIRRORTREE_GRAPH_CONTEXT_CACHE_COPIES"):
            # A count of copies did not bound the memory they take; silently ignoring a
            # deployment's setting would change it unseen.
            raise ValueError(
                "MIRRORTREE_GRAPH_CONTEXT_CACHE_COPIES is no longer read: set "
                "MIRRORTREE_GRAPH_CONTEXT_CACHE_MB (megabytes; a copy takes about 1 KB)"
            )
        secret = os.environ.get("MIRRORTREE_CURSOR_SECRET", "")
        if len(secret) < MIN_SECRET:
            raise ValueError(
                f"MIRRORTREE_CURSOR_SECRET must be at least {MIN_SECRET} characters and the same "
                "on every graph_service instance (it signs paging cursors)"
            )
        return cls(
            replica_dsns=dsns,
            cursor_secret=secret.encode(),
            listen=os.environ.get("MIRRORTREE_GRAPH_LISTEN", "127.0.0.1:50052"),
            allow_primary=env_bool("MIRRORTREE_GRAPH_ALLOW_PRIMARY", False),
            metrics=os.environ.get("MIRRORTREE_GRAPH_METRICS", ""),
            log_level=os.environ.get("MIRRORTREE_LOG_LEVEL", "info"),
            pool_max=env_int("MIRRORTREE_GRAPH_POOL_MAX", 20, 1, 500),
            consistency_wait_ms=env_int("MIRRORTREE_GRAPH_CONSISTENCY_WAIT_MS", 2000, 0, 60_000),
            health_interval_ms=env_int("MIRRORTREE_GRAPH_HEALTH_INTERVAL_MS", 500, 10, 60_000),
            max_lag_bytes=env_int("MIRRORTREE_GRAPH_MAX_LAG_BYTES", 16 * 1024 * 1024, 0, 1 << 40),
            primary_dsn=os.environ.get("MIRRORTREE_GRAPH_PRIMARY_DSN", ""),
            primary_grace_ms=env_int("MIRRORTREE_GRAPH_PRIMARY_GRACE_MS", 30_000, 0, 86_400_000),
            max_replay_age_ms=env_int(
                "MIRRORTREE_GRAPH_MAX_REPLAY_AGE_MS", 300_000, 0, 7 * 86_400_000
            ),
            gate_dsn=os.environ.get("MIRRORTREE_GRAPH_GATE_DSN", ""),
            context_cache_mb=env_int("MIRRORTREE_GRAPH_CONTEXT_CACHE_MB", 64, 0, 1 << 20),
            anonymous_reads=env_bool("MIRRORTREE_GRAPH_ANONYMOUS_READS", False),
            max_concurrent_rpcs=env_int("MIRRORTREE_GRAPH_MAX_CONCURRENT_RPCS", 256, 1, 100_000),
        )
