"""`python -m gateway`: the MCP gateway over Streamable HTTP (default) or stdio."""

from __future__ import annotations

import asyncio
import logging
import sys

import grpc
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server

from gateway import metrics
from gateway.config import Settings
from gateway.http import build_http_app
from gateway.server import GraphClient, build_server
from mirrortree import logs, tracing
from mirrortree.server import start_metrics_http
from mirrortree.v1 import graph_pb2

log = logging.getLogger("gateway")


class BindingRefused(Exception):
    """graph_service says the stdio binding token is unknown or revoked."""


async def check_binding(settings: Settings) -> None:
    """Refuse to serve stdio with a token graph_service rejects: otherwise the client would
    silently see no tools. An unreachable graph_service is only a warning (it may come up
    later, and every call is checked anyway)."""
    client = GraphClient(settings.graph_target, settings.call_timeout_s)
    token = settings.binding_token
    try:
        await client.call("ResolveBinding", graph_pb2.ResolveBindingRequest(token=token), token)
    except grpc.aio.AioRpcError as error:
        if error.code() == grpc.StatusCode.UNAUTHENTICATED:
            raise BindingRefused(
                "MIRRORTREE_BINDING_TOKEN is not a valid runtime binding (unknown or revoked); "
                "issue one with TreeService.CreateBinding and pass its token"
            ) from None
        log.warning(
            "could not check the binding token at start; it is checked at first use",
            extra={"code": error.code().name},
        )
    finally:
        await client.close()


async def serve_stdio(settings: Settings) -> None:
    await check_binding(settings)
    server = build_server(settings, legacy_list_changed=True)
    async with stdio_server() as (read, write):
        await server.run(
            read,
            write,
            server.create_initialization_options(NotificationOptions(tools_changed=True)),
        )


def main() -> int:
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level)  # stderr: on stdio, stdout is the MCP wire
    try:
        tracing.configure_from_env("gateway")
    except ValueError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2
    start_metrics_http(settings.metrics, metrics.REGISTRY)
    if settings.transport == "stdio":
        try:
            asyncio.run(serve_stdio(settings))
        except BindingRefused as exc:
            print(f"gateway: {exc}", file=sys.stderr)
            return 2
        return 0
    host, _, port = settings.listen.rpartition(":")
    uvicorn.run(
        build_http_app(settings),
        host=host or "127.0.0.1",
        port=int(port),
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
