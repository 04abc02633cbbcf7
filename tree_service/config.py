"""Settings of the tree service, read once from the environment (fails fast when invalid)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from mirrortree.callers import Caller, parse_callers
from mirrortree.envconfig import env_bool, env_int
from mirrortree.neighbourhoods import DEFAULT_HUB_LINKS

MIN_SECRET = 32


@dataclass(frozen=True)
class Settings:
    dsn: str
    listen: str = "127.0.0.1:50051"
    migrate: bool = True
    metrics: str = ""
    log_level: str = "info"
    pool_min: int = 2
    pool_max: int = 20
    shutdown_grace_s: float = 5.0
    # Links an object needs in its scope to be a hub (mirrortree.neighbourhoods).
    hub_links: int = DEFAULT_HUB_LINKS
    # The schema owner's DSN, used only to migrate, so `dsn` can be a role without DDL rights
    # (SECURITY.md); empty = migrate with `dsn`.
    migration_dsn: str = ""
    # Callers by token (mirrortree.callers); none = open, the development default.
    callers: Mapping[str, Caller] = field(default_factory=dict)
    confirmation_secret: bytes = b""  # signs user-confirmation grants
    max_concurrent_rpcs: int = 256  # beyond it RESOURCE_EXHAUSTED (mirrortree.limits)

    @classmethod
    def from_env(cls) -> Settings:
        dsn = os.environ.get("MIRRORTREE_TREE_DSN", "")
        if not dsn:
            raise ValueError("MIRRORTREE_TREE_DSN is required (a DSN of the PostgreSQL primary)")
        callers = parse_callers(os.environ.get("MIRRORTREE_TREE_CALLERS", ""))
        secret = os.environ.get("MIRRORTREE_CONFIRMATION_SECRET", "")
        if callers and len(secret) < MIN_SECRET:
            raise ValueError(
                f"MIRRORTREE_CONFIRMATION_SECRET must be at least {MIN_SECRET} characters when "
                "MIRRORTREE_TREE_CALLERS is set (it signs user-confirmation grants)"
            )
        return cls(
            callers=callers,
            confirmation_secret=secret.encode(),
            max_concurrent_rpcs=env_int("MIRRORTREE_TREE_MAX_CONCURRENT_RPCS", 256, 1, 100_000),
            dsn=dsn,
            listen=os.environ.get("MIRRORTREE_TREE_LISTEN", "127.0.0.1:50051"),
            migrate=env_bool("MIRRORTREE_TREE_MIGRATE", True),
            metrics=os.environ.get("MIRRORTREE_TREE_METRICS", ""),
            log_level=os.environ.get("MIRRORTREE_LOG_LEVEL", "info"),
            pool_max=env_int("MIRRORTREE_TREE_POOL_MAX", 20, 1, 500),
            hub_links=env_int("MIRRORTREE_CONTEXT_HUB_LINKS", DEFAULT_HUB_LINKS, 1, 1_000_000),
            migration_dsn=os.environ.get("MIRRORTREE_TREE_MIGRATION_DSN", ""),
        )
