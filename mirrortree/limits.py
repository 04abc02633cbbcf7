"""The concurrent-call limit of a service: calls beyond it are refused at once with
RESOURCE_EXHAUSTED (reason `overloaded`, with a retry hint) instead of queueing without bound.

grpc's own `maximum_concurrent_rpcs` refuses too, but with no ErrorInfo, so a client cannot
tell it from a search that ran out of budget; this one says what happened. Health checks and
reflection are never limited, so probes see a busy service as busy, not dead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from mirrortree import handlers, rpcstatus

_UNLIMITED = ("/grpc.health.v1.Health/", "/grpc.reflection.")
RETRY_AFTER_MS = 200


class ConcurrencyLimit(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """At most `limit` calls of the service run at once (a long stream holds one slot)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the concurrent-call limit must be at least 1")
        self.limit = limit
        self.active = 0

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(_UNLIMITED):
            return handler
        return handlers.rewrap(handler, self._limited)

    def _limited(
        self, behavior: Callable[..., Any], _streaming_request: bool, streaming_response: bool
    ) -> Callable[..., Any]:
        return self._streaming(behavior) if streaming_response else self._unary(behavior)

    async def _refuse(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await rpcstatus.abort(
            context,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "overloaded",
            f"the service is running its limit of {self.limit} concurrent calls; retry shortly",
            metadata={"retry_after_ms": str(RETRY_AFTER_MS), "limit": str(self.limit)},
        )

    def _unary(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def limited(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if self.active >= self.limit:
                await self._refuse(context)
            self.active += 1
            try:
                return await behavior(request, context)
            finally:
                self.active -= 1

        return limited

    def _streaming(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        async def limited(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            if self.active >= self.limit:
                await self._refuse(context)
            self.active += 1
            try:
                async for item in behavior(request, context):
                    yield item
            finally:
                self.active -= 1

        return limited
