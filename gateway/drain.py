"""The gateway's graceful stop over HTTP, between uvicorn's stop and the MCP SDK.

Once `Drain.stop()` is called (as uvicorn begins its shutdown), /healthz answers 503 and a
request that still arrives is refused with 503; the requests in flight run on. Once none is
left, the streams that never end by themselves — a legacy session's GET stream, a 2026
`subscriptions/listen` — are closed, so that uvicorn's wait for open connections ends then,
not at its grace period's end (when it cancels whatever still runs).
"""

from __future__ import annotations

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEALTHZ_PATH = "/healthz"
# The 2026 method whose response is a notification stream for as long as the client listens.
LISTEN_METHOD = "subscriptions/listen"


def stopping_response() -> JSONResponse:
    """503 with a short JSON-RPC error (the request was not read, so its id is unknown)."""
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32603,  # as the MCP SDK's own 503s
                "message": "The gateway is stopping; send the request again (another "
                "instance will take it)",
            },
        },
        status_code=503,
        headers={"Retry-After": "2", "Connection": "close"},
    )


def is_stream(scope: Scope, mcp_path: str) -> bool:
    """A request whose response stays open until the client leaves (no result ends it)."""
    if scope["path"] != mcp_path:
        return False
    if scope["method"] == "GET":
        return True
    return Headers(scope=scope).get("mcp-method") == LISTEN_METHOD


class Drain:
    """What the stop waits for: the requests in flight, counted, and the endless streams,
    closed once no request is left."""

    def __init__(self) -> None:
        self.stopping = False
        self._requests = 0
        self._streams: set[anyio.CancelScope] = set()

    def stop(self) -> None:
        """Say not serving, refuse new requests, and close the streams once none is in flight."""
        self.stopping = True
        self._close_streams_when_idle()

    def _close_streams_when_idle(self) -> None:
        if self.stopping and self._requests == 0:
            for stream in list(self._streams):
                stream.cancel()

    async def request(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request that ends with its answer, counted while it runs."""
        self._requests += 1
        try:
            await app(scope, receive, send)
        finally:
            self._requests -= 1
            self._close_streams_when_idle()

    async def stream(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve an endless stream until the client leaves or the stop closes it."""
        started = ended = False

        async def watched(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                ended = True
            await send(message)

        with anyio.CancelScope() as closing:
            self._streams.add(closing)
            try:
                await app(scope, receive, watched)
            finally:
                self._streams.discard(closing)
        if not closing.cancelled_caught:
            return
        # Closed by the stop: end the response cleanly, so that the client reads the end of
        # the stream (not a connection cut mid-response) and uvicorn sees it complete.
        if not started:
            await stopping_response()(scope, receive, send)
        elif not ended:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class Draining:
    """ASGI middleware: requests pass through `drain`; once it is stopping, new ones but
    /healthz (which says so itself) are refused with 503."""

    def __init__(self, app: ASGIApp, drain: Drain, mcp_path: str) -> None:
        self.app = app
        self.drain = drain
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif self.drain.stopping and scope["path"] != HEALTHZ_PATH:
            await stopping_response()(scope, receive, send)
        elif is_stream(scope, self.mcp_path):
            await self.drain.stream(self.app, scope, receive, send)
        else:
            await self.drain.request(self.app, scope, receive, send)
