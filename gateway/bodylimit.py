"""The bound on an HTTP request body, checked before anything parses it.

Its default is derived from the tools' input schemas: the largest legal `tools/call` (every
string at its maxLength with every character escaped the longest way JSON allows, every array
at its maxItems) plus room for the JSON-RPC envelope, so no legal call is ever refused and a
megabyte of text never reaches the JSON parser, the session or the validator.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway import tools

# The JSON-RPC envelope around the arguments: jsonrpc, id, method, the tool's name and _meta
# (protocol version, client capabilities and info, progress token, trace context).
ENVELOPE_BYTES = 64 * 1024
# One code point written as JSON at its longest: a surrogate pair of \uXXXX escapes.
ESCAPED_CODE_POINT_BYTES = 12
ENV_VAR = "MIRRORTREE_GATEWAY_MAX_BODY_BYTES"
# The most of a refused body read (and dropped) so that the client can read the 413.
DRAIN_BYTES = 8 * 1024 * 1024


class UnboundedSchema(ValueError):
    """A tool's input schema admits values of any size, so no body limit covers it."""


def largest_json(schema: dict[str, Any], where: str = "arguments") -> int:
    """The most bytes a value valid under `schema` takes as compact JSON."""
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    branches = schema.get("oneOf") or schema.get("anyOf")
    if branches:
        return max(largest_json(b, where) for b in branches)
    kind = schema.get("type")
    if kind == "object":
        if schema.get("additionalProperties", True) is not False:
            raise UnboundedSchema(f"{where} accepts any property")
        properties: dict[str, dict[str, Any]] = schema.get("properties", {})
        members = [
            len(json.dumps(name)) + 1 + largest_json(sub, f"{where}.{name}")
            for name, sub in properties.items()
        ]
        return 2 + sum(members) + max(0, len(members) - 1)
    if kind == "array":
        items: dict[str, Any] = schema.get("items", {})
        count = schema.get("maxItems")
        if count is None and schema.get("uniqueItems") and "enum" in items:
            count = len(items["enum"])
        if count is None:
            raise UnboundedSchema(f"{where} has no maxItems")
        return 2 + int(count) * (largest_json(items, f"{where}[]") + 1)
    if kind == "string":
        if "maxLength" not in schema:
            raise UnboundedSchema(f"{where} has no maxLength")
        return 2 + ESCAPED_CODE_POINT_BYTES * int(schema["maxLength"])
    if kind == "integer":
        if "minimum" not in schema or "maximum" not in schema:
            raise UnboundedSchema(f"{where} has no minimum or maximum")
        return max(len(str(schema["minimum"])), len(str(schema["maximum"])))
    if kind == "boolean":
        return len("false")
    raise UnboundedSchema(f"{where} has no type this bound knows")


def default_max_body_bytes() -> int:
    """The largest legal tools/call body plus the envelope, rounded up to 64 KiB."""
    largest = max(largest_json(t.input_schema, t.name) for t in tools.TOOLS)
    step = 64 * 1024
    return -(-(largest + ENVELOPE_BYTES) // step) * step


DEFAULT_MAX_BODY_BYTES = default_max_body_bytes()


def too_large(limit: int, *, close: bool) -> JSONResponse:
    """413 with a short JSON-RPC error (the request was not read, so its id is unknown)."""
    return JSONResponse(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,  # Invalid Request
                "message": (
                    f"Request body too large: the limit is {limit} bytes ({ENV_VAR}); no "
                    "legal tool call is that large, so shorten the arguments"
                ),
            },
        },
        status_code=413,
        headers={"Connection": "close"} if close else None,
    )


class BodyLimit:
    """ASGI middleware: refuse a body over `max_bytes` with 413, by its Content-Length when it
    declares one and while it streams otherwise; a body within it is replayed unchanged."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self.refuse(scope, receive, send, int(declared))
            return
        received: deque[Message] = deque()
        size = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                received.clear()  # let go of what was read at once
                more = bool(message.get("more_body", False))
                await self.refuse(scope, receive, send, DRAIN_BYTES if more else 0)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return received.popleft() if received else await receive()

        await self.app(scope, replay, send)

    async def refuse(self, scope: Scope, receive: Receive, send: Send, unread: int) -> None:
        """Answer 413. A body of up to DRAIN_BYTES still unread is read and dropped first: a
        client still sending could not read the answer if the connection closed under it, and
        the server would keep the unread part buffered while the connection stays open. A
        larger one is not read; the connection is closed."""
        close = unread > DRAIN_BYTES
        drained = 0
        while unread > 0 and not close:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away
            drained += len(message.get("body", b""))
            if not message.get("more_body", False):
                break
            close = drained > DRAIN_BYTES
        await too_large(self.max_bytes, close=close)(scope, receive, send)
