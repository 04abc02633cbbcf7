"""`python -m tree_service [serve|migrate]`: the tree service's entry point."""

from __future__ import annotations

import argparse
import asyncio
import sys

from mirrortree import logs, tracing
from mirrortree.server import tune_gc_for_serving, wait_for_shutdown_signal
from tree_service import app
from tree_service.config import Settings


async def serve(settings: Settings) -> None:
    service = await app.start(settings)
    tune_gc_for_serving()
    try:
        await wait_for_shutdown_signal()
    finally:
        await service.stop()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tree_service")
    parser.add_argument("command", nargs="?", default="serve", choices=["serve", "migrate"])
    args = parser.parse_args()
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"tree_service: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level)
    try:
        tracing.configure_from_env("tree_service")
    except ValueError as exc:
        print(f"tree_service: {exc}", file=sys.stderr)
        return 2
    if args.command == "migrate":
        applied = asyncio.run(app.run_migrations(settings.dsn))
        print(f"applied migrations: {applied or 'none pending'}")
        return 0
    asyncio.run(serve(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
