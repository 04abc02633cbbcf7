"""`python -m graph_service`: the read-only story-graph service's entry point."""

from __future__ import annotations

import sys

import uvloop

from graph_service import app
from graph_service.config import Settings
from graph_service.replicas import PrimaryNotAllowed
from mirrortree import logs, tracing
from mirrortree.server import tune_gc_for_serving, wait_for_shutdown_signal


async def serve(settings: Settings) -> None:
    service = await app.start(settings)
    tune_gc_for_serving()
    try:
        await wait_for_shutdown_signal()
    finally:
        await service.stop()


def main() -> int:
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"graph_service: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level)
    try:
        tracing.configure_from_env("graph_service")
    except ValueError as exc:
        print(f"graph_service: {exc}", file=sys.stderr)
        return 2
    try:
        # On uvloop's event loop a search costs the service about a sixth less CPU than on
        # asyncio's, whose socket and callback machinery took a large share of it
        # (docs/performance.md).
        uvloop.run(serve(settings))
    except PrimaryNotAllowed as exc:
        print(f"graph_service: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
