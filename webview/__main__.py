"""`python -m webview`: the read-only web view over HTTP."""

from __future__ import annotations

import sys

import uvicorn

from mirrortree import logs, tracing
from mirrortree.server import start_metrics_http
from webview import metrics
from webview.app import build_app
from webview.config import Settings


def main() -> int:
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"webview: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level)
    try:
        tracing.configure_from_env("webview")
    except ValueError as exc:
        print(f"webview: {exc}", file=sys.stderr)
        return 2
    start_metrics_http(settings.metrics, metrics.REGISTRY)
    host, _, port = settings.listen.rpartition(":")
    uvicorn.run(
        build_app(settings),
        host=host or "127.0.0.1",
        port=int(port),
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
