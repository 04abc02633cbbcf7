"""`python -m gateway`: the MCP gateway over Streamable HTTP (default) or stdio."""

from __future__ import annotations

import asyncio
import sys

import uvicorn
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server

from gateway.config import Settings
from gateway.http import build_http_app
from gateway.server import build_server
from mirrortree import logs


async def serve_stdio(settings: Settings) -> None:
    server = build_server(settings)
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
    if settings.transport == "stdio":
        asyncio.run(serve_stdio(settings))
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
