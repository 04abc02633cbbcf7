"""The command line: ``python -m devtools.pgcluster {start,stop,status}``."""

from __future__ import annotations

import argparse
import logging
import sys

from devtools.pgcluster.cluster import start, status, stop
from devtools.pgcluster.config import (
    ENV_DATA_DIR,
    ENV_OS_USER,
    ENV_PG_BIN,
    ENV_PRIMARY_PORT,
    ENV_REPLICA_PORT,
    ENV_REPLICAS,
    ClusterConfig,
    ClusterError,
)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: ``python -m devtools.pgcluster {start,stop,status}``."""
    parser = argparse.ArgumentParser(
        prog="python -m devtools.pgcluster",
        description="Manage the embedded local PostgreSQL (a primary plus streaming replicas). "
        f"Configured by {ENV_DATA_DIR}, {ENV_PRIMARY_PORT}, {ENV_REPLICA_PORT}, {ENV_REPLICAS}, "
        f"{ENV_PG_BIN} "
        f"and {ENV_OS_USER}.",
    )
    parser.add_argument("command", choices=("start", "stop", "status"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        cfg = ClusterConfig.from_env()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        if args.command == "start":
            info = start(cfg)
            print(f"primary: {info.primary_dsn}")
            for i, dsn in enumerate(info.replica_dsns):
                print(f"replica{i + 1 if i else ''}: {dsn}")
        elif args.command == "stop":
            stop(cfg)
            print("stopped")
        else:
            for name, state in status(cfg).items():
                print(f"{name}: {state}")
    except ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
