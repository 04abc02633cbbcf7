"""Who is signed in: the caller's runtime binding token, checked with graph_service.

The token travels in an HttpOnly, SameSite=Strict cookie (or an `Authorization: Bearer`
header), and is resolved to its binding on every request (a positive answer is reused for a
few seconds), so a revoked binding loses the view as soon as it loses the MCP tools.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import grpc

from gateway import credentials
from mirrortree.v1 import graph_pb2
from webview.reads import Readers

COOKIE = "mirrortree_binding"


class NotSignedIn(Exception):
    """No token, or one graph_service does not know (unknown or revoked)."""


class CannotCheck(Exception):
    """graph_service did not answer, so the token is neither accepted nor refused."""


@dataclass
class Bindings:
    readers: Readers
    ttl_s: float
    _cache: dict[bytes, tuple[float, graph_pb2.ResolveBindingResponse]] = field(
        default_factory=dict
    )

    async def resolve(self, token: str) -> graph_pb2.ResolveBindingResponse:
        if not token or credentials.token_problem(token) is not None:
            raise NotSignedIn
        key = hashlib.sha256(token.encode()).digest()
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            binding = await self.readers.resolve_binding(token)
        except grpc.aio.AioRpcError as error:
            self._cache.pop(key, None)
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                raise NotSignedIn from None
            raise CannotCheck(error.code().name) from None
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[key] = (now + self.ttl_s, binding)
        return binding


def token_of(cookies: dict[str, str], authorization: str) -> str:
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return cookies.get(COOKIE, "")
