"""Prometheus metrics of the web view: its HTTP requests by route and status, in one registry
per process, served at MIRRORTREE_WEBVIEW_METRICS."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import Response

from mirrortree.server import LATENCY_BUCKETS

REGISTRY = CollectorRegistry()

REQUESTS = Counter(
    "mirrortree_webview_requests",
    "HTTP requests the web view answered, by route (its path template) and status",
    ["route", "status"],
    registry=REGISTRY,
)
LATENCY = Histogram(
    "mirrortree_webview_request_duration_seconds",
    "Web view request latency, by route",
    ["route"],
    registry=REGISTRY,
    buckets=LATENCY_BUCKETS,
)


class Measured(BaseHTTPMiddleware):
    """Counts and times each request under its route's template, so that ids in paths do not
    make a series each; a path no route matched counts as "unmatched"."""

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        route = getattr(request.scope.get("route"), "path", "unmatched")
        REQUESTS.labels(route, str(response.status_code)).inc()
        LATENCY.labels(route).observe(time.perf_counter() - started)
        return response
