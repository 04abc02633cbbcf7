"""`python -m gateway`: the MCP gateway over Streamable HTTP (default) or stdio."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys

import grpc
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from sse_starlette.sse import AppStatus
from uvicorn.config import STARTUP_FAILURE

from gateway import metrics
from gateway.config import Settings
from gateway.drain import Drain
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


class DrainingServer(uvicorn.Server):
    """uvicorn that begins the app's drain as its shutdown begins: the app learns of the stop
    no other way in time (the ASGI lifespan's shutdown comes only after the drain)."""

    def __init__(self, config: uvicorn.Config, drain: Drain) -> None:
        super().__init__(config)
        self.drain = drain

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.drain.stop()
        await super().shutdown(sockets)


def serve_http(settings: Settings) -> int:
    """Serve until SIGTERM or SIGINT, then stop gracefully: no new connection, the requests in
    flight get `settings.shutdown_grace_s`, and what still runs after it is cancelled."""
    drain = Drain()
    host, _, port = settings.listen.rpartition(":")
    config = uvicorn.Config(
        build_http_app(settings, drain=drain),
        host=host or "127.0.0.1",
        port=int(port),
        log_config=None,
        access_log=False,
        # Annotated int, but uvicorn waits with asyncio.timeout, which takes any seconds.
        timeout_graceful_shutdown=settings.shutdown_grace_s,  # type: ignore[arg-type]
    )
    # sse_starlette (the SDK's SSE responses to legacy clients) would otherwise end every SSE
    # response within 0.5 s of the signal, a tool call's before its result; the drain ends
    # only the endless streams, once no call is in flight.
    AppStatus.enable_automatic_graceful_drain = False
    server = DrainingServer(config, drain)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises the SIGINT it stopped for
        server.run()
    return 0 if server.started else STARTUP_FAILURE


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
    return serve_http(settings)


if __name__ == "__main__":
    sys.exit(main())
