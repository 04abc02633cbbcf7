"""Settings of the web view, read once from the environment (fails fast when invalid)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mirrortree.envconfig import env_address, env_int


@dataclass(frozen=True)
class Settings:
    listen: str = "127.0.0.1:8766"
    tree_target: str = "127.0.0.1:50051"
    graph_target: str = "127.0.0.1:50052"
    # The web view's own TreeService caller token (role viewer); empty for an open
    # development TreeService, which needs none.
    tree_token: str = ""
    call_timeout_s: float = 15.0
    # Mark the sign-in cookie Secure: set when the view is reached over HTTPS.
    secure_cookie: bool = False
    log_level: str = "info"
    # How long a binding the story graph accepted is trusted before it is asked again.
    binding_ttl_s: float = 5.0
    metrics: str = ""  # host:port of the Prometheus endpoint; "" = off

    @classmethod
    def from_env(cls) -> Settings:
        secure = os.environ.get("MIRRORTREE_WEBVIEW_SECURE_COOKIE", "false").lower()
        if secure not in ("true", "false"):
            raise ValueError("MIRRORTREE_WEBVIEW_SECURE_COOKIE: use true or false")
        return cls(
            listen=env_address("MIRRORTREE_WEBVIEW_LISTEN", "127.0.0.1:8766"),
            metrics=env_address("MIRRORTREE_WEBVIEW_METRICS", "", empty_is_off=True),
            tree_target=os.environ.get("MIRRORTREE_WEBVIEW_TREE_TARGET", "127.0.0.1:50051"),
            graph_target=os.environ.get("MIRRORTREE_WEBVIEW_GRAPH_TARGET", "127.0.0.1:50052"),
            tree_token=os.environ.get("MIRRORTREE_WEBVIEW_TREE_TOKEN", ""),
            call_timeout_s=env_int("MIRRORTREE_WEBVIEW_CALL_TIMEOUT_MS", 15_000, 100, 300_000)
            / 1000,
            secure_cookie=secure == "true",
            log_level=os.environ.get("MIRRORTREE_LOG_LEVEL", "info"),
        )
