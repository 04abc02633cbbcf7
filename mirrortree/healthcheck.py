"""Container health probe for the gRPC services.

Usage::

    python -m mirrortree.healthcheck HOST:PORT [SERVICE]

Calls ``grpc.health.v1.Health/Check`` on ``HOST:PORT`` for ``SERVICE`` (the empty
string, i.e. the whole server, when omitted) and exits 0 when the answer is
``SERVING`` and 1 otherwise, printing the status or the error to stderr. It is
meant for Docker/Compose ``healthcheck`` commands and Kubernetes exec probes, so it
never waits for the server to come up: an unreachable server is simply unhealthy.
"""

from __future__ import annotations

import argparse
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

DEFAULT_TIMEOUT_S = 3.0
"""Deadline for the whole Check call, connection set-up included."""

_CHANNEL_OPTIONS: list[tuple[str, int]] = [
    # A probe talks to a local or in-cluster address; an HTTP proxy from the
    # environment must never be involved.
    ("grpc.enable_http_proxy", 0),
]


def check(target: str, service: str = "", timeout: float = DEFAULT_TIMEOUT_S) -> str:
    """Return the health status name that ``target`` reports for ``service``.

    Args:
        target: A gRPC target, usually ``HOST:PORT``.
        service: The service name to ask about; ``""`` means the server as a whole.
        timeout: Deadline for the call in seconds.

    Returns:
        The status name, e.g. ``"SERVING"`` or ``"NOT_SERVING"``.

    Raises:
        grpc.RpcError: The call failed (server unreachable, deadline exceeded,
            unknown service, ...).
    """
    with grpc.insecure_channel(target, options=_CHANNEL_OPTIONS) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        name: str = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
        return name


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m mirrortree.healthcheck",
        description="Exit 0 if a gRPC server reports SERVING via grpc.health.v1, else 1.",
    )
    parser.add_argument("target", help="HOST:PORT of the gRPC server, e.g. 127.0.0.1:50051")
    parser.add_argument(
        "service",
        nargs="?",
        default="",
        help="service name to check (default: the whole server)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"deadline in seconds (default: {DEFAULT_TIMEOUT_S:g})",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the probe and return the process exit status (0 healthy, 1 not)."""
    args = _parse_args(argv)
    label = f"{args.target} {args.service!r}" if args.service else args.target
    try:
        status = check(args.target, args.service, args.timeout)
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
        code_name = code.name if code is not None else "ERROR"
        print(f"unhealthy: {label}: {code_name}: {details}", file=sys.stderr)
        return 1
    if status != "SERVING":
        print(f"unhealthy: {label}: {status}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
