"""What a credential may look like before it travels anywhere, and gRPC calls that always end.

A bearer token is checked here, in the gateway, before any gRPC call: gRPC refuses metadata
holding non-ASCII or control bytes before the call starts (its done callbacks never fire) and
trims oversized metadata into RESOURCE_EXHAUSTED, so a malformed credential must never reach
it. Every call is also bounded by its own deadline here, whatever gRPC does.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import grpc

# Binding tokens are "mtb_" and 43 URL-safe characters; the limit leaves room for other
# issuers while staying far below gRPC's 8 KiB metadata soft limit.
MAX_TOKEN_CHARS = 512
# RFC 6750 b64token: the only characters a bearer token can hold.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# What gRPC accepts in an ASCII metadata value: printable ASCII and space.
_METADATA_VALUE = re.compile(r"[\x20-\x7e]*")
# How long after a call's own deadline the gateway stops waiting for gRPC to report it.
DEADLINE_SLACK_S = 1.0


def token_problem(token: str) -> str | None:
    """Why `token` cannot be a bearer credential, or None when it can."""
    if not token:
        return "is empty"
    if len(token) > MAX_TOKEN_CHARS:
        return f"is longer than {MAX_TOKEN_CHARS} characters"
    if not _TOKEN.fullmatch(token):
        return "holds a character a bearer token cannot hold (RFC 6750)"
    return None


def metadata_problem(metadata: Sequence[tuple[str, str]]) -> str | None:
    """Why gRPC would refuse this metadata, or None when every value is sendable."""
    for key, value in metadata:
        if not _METADATA_VALUE.fullmatch(value):
            return f"metadata {key} holds a non-ASCII or control character"
    return None


def failed(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    """A client-side failure shaped like one gRPC reports, so callers handle a single type."""
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=details)


async def await_rpc(call: Any, timeout_s: float) -> Any:
    """Await a grpc.aio call, bounded by its deadline, so that cancelling the caller cancels the
    call cleanly.

    grpc.aio raises its own fresh CancelledError when an awaited call is cancelled; anyio (the
    MCP SDK's cancellation) does not recognise it and it escapes cancel scopes, which takes a
    stdio server down. So the call is awaited in a task of its own and the caller waits on that
    task; a call gRPC never settles still ends DEADLINE_EXCEEDED after timeout_s.
    """
    settled = asyncio.ensure_future(_settle(call))
    settled.add_done_callback(_retrieved)
    try:
        await asyncio.wait({settled}, timeout=timeout_s + DEADLINE_SLACK_S)
    except asyncio.CancelledError:
        call.cancel()
        settled.cancel()
        raise
    if not settled.done():
        call.cancel()
        settled.cancel()
        raise failed(grpc.StatusCode.DEADLINE_EXCEEDED, "the call did not end by its deadline")
    return settled.result()


def _retrieved(task: asyncio.Future[Any]) -> None:
    # A call abandoned on cancellation or timeout has no reader; its outcome is not news.
    if not task.cancelled():
        task.exception()


async def _settle(call: Any) -> Any:
    try:
        return await call
    except grpc.aio.AioRpcError:
        raise
    except asyncio.CancelledError:
        raise failed(grpc.StatusCode.CANCELLED, "the call was cancelled") from None
    except Exception as error:  # gRPC refused to start the call (e.g. ExecuteBatchError)
        raise failed(
            grpc.StatusCode.INVALID_ARGUMENT, f"the call could not be sent: {type(error).__name__}"
        ) from None
