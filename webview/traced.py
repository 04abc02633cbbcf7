"""A server span for each web view request (when tracing is on), so the gRPC calls a page makes
join one trace with the services' spans and their SQL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import Response

# Asked by load balancers every few seconds: not a request worth a trace.
UNTRACED_PATHS = ("/healthz",)


class Traced(BaseHTTPMiddleware):
    """Opens the request's span, named after its route's template (ids in paths would make
    every page a name of its own), with the status it answered."""

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if request.url.path in UNTRACED_PATHS:
            return await call_next(request)
        tracer = trace.get_tracer("mirrortree.webview")
        with tracer.start_as_current_span(request.method, kind=SpanKind.SERVER) as span:
            span.set_attribute("http.request.method", request.method)
            span.set_attribute("url.path", request.url.path)
            response = await call_next(request)
            route = getattr(request.scope.get("route"), "path", "unmatched")
            span.update_name(f"{request.method} {route}")
            span.set_attribute("http.route", route)
            span.set_attribute("http.response.status_code", response.status_code)
            if response.status_code >= 500:
                span.set_status(Status(StatusCode.ERROR))
            return response
