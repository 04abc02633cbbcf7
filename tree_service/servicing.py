"""What every group of TreeService RPCs shares: the stores it declares, the idempotent write with
its consistency token, and background work that outlives the RPC that started it.

An RPC group (each aggregate's `rpc.py`, mixed into TreeServicer) declares the stores it uses
as class annotations (`conversation: ConversationStore`); the composition hands in every store
by name (tree_service.stores.Stores), and each group gets the ones it declares. So a group
imports only its own aggregate's stores and those it builds on, never the composition."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeAlias, TypeVar

from google.protobuf.message import Message

from mirrortree.v1 import common_pb2
from tree_service import convert
from tree_service.domain import Node
from tree_service.primary import Primary
from tree_service.stored_responses import stripped

# grpc.aio.ServicerContext; grpc ships no type information, so it is Any to mypy.
Ctx: TypeAlias = Any
R = TypeVar("R", bound=Message)
log = logging.getLogger("tree_service.buds")


def request_hash(method: str, request: Message) -> bytes:
    """Fingerprint of a request without its idempotency key (deterministic serialization)."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("idempotency_key")
    return hashlib.sha256(
        method.encode() + b"\0" + copy.SerializeToString(deterministic=True)
    ).digest()


class ServicerBase:
    """The state and write frame the RPC groups of TreeServicer share."""

    primary: Primary
    refill: Callable[[Message], Awaitable[None]]  # a replayed response's words, as they are now

    def __init__(self, stores: object, **parts: object) -> None:
        """Take every store this servicer's groups declare from `stores` (an object with one
        attribute per store), or from `parts` (what the composition adds, such as the chunk
        committer)."""
        for name in self.declared_stores():
            setattr(self, name, parts[name] if name in parts else getattr(stores, name))
        self._background: set[asyncio.Task[None]] = set()

    @classmethod
    def declared_stores(cls) -> list[str]:
        """The names of the stores (and parts) this servicer's RPC groups declare, sorted."""
        return sorted(
            {
                name
                for base in cls.__mro__
                if issubclass(base, ServicerBase)
                for name in inspect.get_annotations(base)
            }
        )

    async def drain(self) -> None:
        """Wait for background work (bud freezes) started by RPCs that have ended."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def keep(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` as a task that outlives the RPC that started it (the event loop holds
        tasks only weakly); failures are logged."""
        task = asyncio.create_task(work)
        self._background.add(task)

        def finished(done: asyncio.Task[None]) -> None:
            self._background.discard(done)
            if not done.cancelled() and done.exception() is not None:
                log.error("background work failed", exc_info=done.exception())

        task.add_done_callback(finished)
        return task

    async def _write(
        self,
        method: str,
        request: Any,
        response_type: type[R],
        action: Callable[[Any], Awaitable[R]],
        *,
        stored: Callable[[R], R] = lambda r: r,
    ) -> R:
        """Run one idempotent write; attach the consistency token to the response.

        `stored` shapes what a replay returns (e.g. without a one-time secret). The stored
        response keeps none of the words a purge or a revocation may forget; a replay fills
        them in as they are now (tree_service.stored_responses).
        """
        outcome = await self.primary.write(
            key=request.idempotency_key,
            method=method,
            request_hash=request_hash(method, request),
            action=action,
            encode=lambda r: stripped(stored(r)).SerializeToString(),
        )
        if outcome.value is not None:
            response = outcome.value
        else:
            response = response_type()
            response.ParseFromString(outcome.replayed or b"")
            await self.refill(response)
        response.consistency.CopyFrom(common_pb2.ConsistencyToken(lsn=outcome.lsn))  # type: ignore[attr-defined]
        return response

    async def _append_node(
        self,
        method: str,
        request: Any,
        response_type: type[R],
        append: Callable[[Any], Awaitable[tuple[Node, int]]],
    ) -> R:
        """The shape every node-creating RPC shares: one idempotent append, node + revision."""

        # Every response type here has these two fields; Message's own signature has none.
        build: Callable[..., R] = response_type

        async def action(conn: Any) -> R:
            node, revision = await append(conn)
            return build(node=convert.node_to_proto(node), tree_revision=revision)

        return await self._write(method, request, response_type, action)
