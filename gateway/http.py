"""The Streamable HTTP face of the gateway: bearer-token auth with runtime bindings, DNS
rebinding protection, a bound on request bodies, a plain /healthz for load balancers, and a
graceful stop (gateway.drain)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.authentication import AuthenticationError
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway.bodylimit import BodyLimit
from gateway.config import Settings
from gateway.drain import HEALTHZ_PATH, Drain, Draining
from gateway.server import BindingVerifier, GraphClient, GraphUnreachable, build_server

MCP_PATH = "/mcp"


def health_of(drain: Drain) -> Callable[[Request], Awaitable[JSONResponse]]:
    async def healthz(_: Request) -> JSONResponse:
        """200 while serving; 503 from the moment the stop begins, so that load balancers
        (and the compose health check) stop sending requests."""
        if drain.stopping:
            return JSONResponse({"status": "stopping"}, status_code=503)
        return JSONResponse({"status": "ok"})

    return healthz


def authentication_failed(_: HTTPConnection, error: AuthenticationError) -> Response:
    """The token could not be checked (not: it is invalid, which is 401 from the SDK): 503
    with Retry-After, so clients retry with the same credential."""
    if isinstance(error, GraphUnreachable):
        return JSONResponse(
            {"error": "temporarily_unavailable", "error_description": str(error)},
            status_code=503,
            headers={"Retry-After": "2"},
        )
    return JSONResponse({"error": "invalid_request", "error_description": str(error)}, 400)


def build_http_app(
    settings: Settings, client: GraphClient | None = None, drain: Drain | None = None
) -> Starlette:
    """An ASGI app serving MCP at /mcp for both protocol eras, authenticated per request;
    `drain.stop()` begins its graceful stop."""
    graph = client or GraphClient(settings.graph_target, settings.call_timeout_s)
    drain = drain or Drain()
    server = build_server(settings, graph)
    host, _, port = settings.listen.rpartition(":")
    public = f"http://{host or '127.0.0.1'}:{port}"
    allowed_hosts = [
        *settings.allowed_hosts,
        "127.0.0.1:*",
        "localhost:*",
        "[::1]:*",
    ]
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        auth=AuthSettings(issuer_url=public, resource_server_url=None),  # type: ignore[arg-type]
        token_verifier=BindingVerifier(graph),
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=allowed_hosts,
            allowed_origins=[f"http://{h}" for h in allowed_hosts],
        ),
        custom_starlette_routes=[Route(HEALTHZ_PATH, health_of(drain), methods=["GET"])],
        max_request_body_size=settings.max_body_bytes,
    )
    # An oversized body is refused (413, a short JSON-RPC error) before the bearer token is
    # checked, the JSON parsed or a session touched. The SDK's own check is kept at the same
    # size as a second line.
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    # Outermost: it counts every request in flight, and once stopping refuses before reading.
    app.add_middleware(Draining, drain=drain, mcp_path=MCP_PATH)
    # The SDK's authentication middleware answers a verifier's AuthenticationError through
    # starlette's on_error hook (400 plain text by default); ours tells "cannot check now"
    # apart. The middleware stack is built at the first request, so this takes effect.
    for middleware in app.user_middleware:
        if middleware.cls is AuthenticationMiddleware:  # type: ignore[comparison-overlap]
            middleware.kwargs["on_error"] = authentication_failed
    return app
