"""The Streamable HTTP face of the gateway: bearer-token auth with runtime bindings, DNS
rebinding protection, and a plain /healthz for load balancers."""

from __future__ import annotations

from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gateway.config import Settings
from gateway.server import BindingVerifier, GraphClient, build_server

MCP_PATH = "/mcp"


async def healthz(_: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def build_http_app(settings: Settings, client: GraphClient | None = None) -> Starlette:
    """An ASGI app serving MCP at /mcp for both protocol eras, authenticated per request."""
    graph = client or GraphClient(settings.graph_target, settings.call_timeout_s)
    server = build_server(settings, graph)
    host, _, port = settings.listen.rpartition(":")
    public = f"http://{host or '127.0.0.1'}:{port}"
    allowed_hosts = [
        *settings.allowed_hosts,
        "127.0.0.1:*",
        "localhost:*",
        "[::1]:*",
    ]
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        auth=AuthSettings(issuer_url=public, resource_server_url=None),  # type: ignore[arg-type]
        token_verifier=BindingVerifier(graph),
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=allowed_hosts,
            allowed_origins=[f"http://{h}" for h in allowed_hosts],
        ),
        custom_starlette_routes=[Route("/healthz", healthz, methods=["GET"])],
    )
