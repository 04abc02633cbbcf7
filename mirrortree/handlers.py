"""Rebuilding a gRPC method handler around new behaviour, whatever kind of method it serves.

Every server interceptor here (call observation, caller checks, the concurrency limit) wraps
a handler's behaviour the same way; only the wrapping differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

# wrap(behaviour, streaming_request, streaming_response) -> the new behaviour
Wrap = Callable[[Callable[..., Any], bool, bool], Callable[..., Any]]

_KINDS = (
    ("unary_unary", False, False, grpc.unary_unary_rpc_method_handler),
    ("stream_unary", True, False, grpc.stream_unary_rpc_method_handler),
    ("unary_stream", False, True, grpc.unary_stream_rpc_method_handler),
    ("stream_stream", True, True, grpc.stream_stream_rpc_method_handler),
)


def rewrap(
    handler: grpc.RpcMethodHandler,
    wrap: Wrap,
    request_deserializer: Callable[[bytes], Any] | None = None,
) -> grpc.RpcMethodHandler:
    """`handler` with its behaviour replaced by what `wrap` makes of it (and, if given, its
    request deserializer replaced); a handler with no behaviour is returned as it is."""
    for kind, streaming_request, streaming_response, make in _KINDS:
        behavior = getattr(handler, kind)
        if behavior:
            return make(
                wrap(behavior, streaming_request, streaming_response),
                request_deserializer=request_deserializer or handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    return handler
