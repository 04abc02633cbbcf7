"""One StreamAnswer call: a bud opened, fed chunk by chunk, and sealed or frozen."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from mirrortree import counters, dbloss
from mirrortree.v1 import common_pb2, tree_pb2
from tree_service import convert
from tree_service.buds import messages
from tree_service.buds.committer import ChunkCommitter
from tree_service.buds.store import BUD_LEASE_S, BudStore
from tree_service.domain import AnswerState, Generated, StopReason
from tree_service.errors import InvalidInput, NotFound, PreconditionFailed, TreeServiceError
from tree_service.primary import Primary
from tree_service.servicing import Ctx, request_hash
from tree_service.stored_responses import stripped

log = logging.getLogger("tree_service.buds")
# Time left below which a cancellation counts as the call's deadline.
DEADLINE_TOLERANCE_S = 0.05
# How long a half-close waits for the cancellation grpc delivers just after it.
HALF_CLOSE_GRACE_S = 0.1
# A freeze the database was away for is retried, first after FREEZE_RETRY_FIRST_S, then at
# growing intervals up to FREEZE_RETRY_MAX_S, for FREEZE_RETRY_S in all (two leases: past
# that, the sweeper freezes the bud as server_lost).
FREEZE_RETRY_FIRST_S = 0.05
FREEZE_RETRY_MAX_S = 0.5
FREEZE_RETRY_S = 2 * BUD_LEASE_S


class BudStream:
    """One StreamAnswer call: open → chunks → complete, or frozen when the stream ends early.

    Chunks must arrive in order (1, 2, 3 …). Each is acknowledged only after the group commit
    that stored it; re-sending an acknowledged chunk is acknowledged again without storing it
    twice. Any end other than `complete` — the client half-closing, cancelling, a deadline, or
    a bad message — freezes the bud with every acknowledged chunk and the reason. While the
    stream lives it renews the bud's lease; if this process dies, another instance's sweeper
    freezes the bud when the lease runs out.
    """

    def __init__(
        self,
        context: Ctx,
        *,
        primary: Primary,
        buds: BudStore,
        chunks: ChunkCommitter,
        keep: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]],
    ) -> None:
        self._context = context
        self._primary = primary
        self._buds = buds
        self._chunks = chunks
        self._keep = keep
        self._bud: str | None = None
        self._acked = 0
        self._length = 0  # code points of the acknowledged chunks
        self._ended = False
        self._lease: asyncio.Task[None] | None = None

    async def _keep_lease(self, bud: str) -> None:
        """Renew the bud's lease while this stream lives, even when no chunk arrives."""
        while True:
            await asyncio.sleep(BUD_LEASE_S / 3)
            try:
                if not await self._buds.renew_bud_lease(bud):
                    return  # the bud ended (sealed, frozen, or swept)
            except Exception:  # a missed renewal is retried; the lease has slack for two
                log.warning("bud lease renewal failed", extra={"answer_id": bud})

    def _release_lease(self) -> None:
        if self._lease is not None:
            self._lease.cancel()
            self._lease = None

    async def run(
        self, requests: AsyncIterator[tree_pb2.StreamAnswerRequest]
    ) -> AsyncIterator[tree_pb2.StreamAnswerResponse]:
        try:
            async for message in requests:
                kind = message.WhichOneof("message")
                if self._ended:
                    raise InvalidInput.one(kind or "message", "the bud is already sealed")
                if kind == "open":
                    yield await self._open(message)
                elif self._bud is None:
                    raise InvalidInput.one(kind or "message", "the first message must be open")
                elif kind == "chunk":
                    yield await self._chunk(message.chunk)
                elif kind == "complete":
                    yield await self._complete(message.complete)
                else:
                    raise InvalidInput.one("message", "is empty")
            # grpc delivers a client's cancellation just after the request stream it also ends,
            # so wait briefly for it before calling this a half-close.
            if self._bud is not None and not self._ended:
                await asyncio.sleep(HALF_CLOSE_GRACE_S)
            await self._freeze(StopReason.CLIENT_CLOSED)
        except asyncio.CancelledError:
            # grpc cancels a call at its deadline a few milliseconds early by the server's
            # clock, so "nearly none left" counts as the deadline.
            remaining = self._context.time_remaining()
            expired = remaining is not None and remaining < DEADLINE_TOLERANCE_S
            await self._freeze(StopReason.DEADLINE_EXCEEDED if expired else StopReason.CANCELLED)
            raise
        except TreeServiceError:
            await self._freeze("invalid_message")
            raise
        except GeneratorExit:
            # grpc closes the response generator when the call dies while it is sending;
            # nothing may be awaited here, so the freeze is scheduled on its own.
            self._schedule_freeze(StopReason.CANCELLED)
            raise
        except Exception:
            await self._freeze("server_error")
            raise

    async def _open(self, message: tree_pb2.StreamAnswerRequest) -> tree_pb2.StreamAnswerResponse:
        if self._bud is not None:
            raise InvalidInput.one("open", "was already sent on this stream")
        answer = messages.bud_open(message.open)

        async def action(conn: Any) -> tree_pb2.StreamAnswerResponse:
            node = await self._buds.open_bud(conn, answer)
            # Known before the commit: a cancellation that lands during the commit still
            # finds the bud to freeze (freezing a bud that never committed is a no-op).
            self._bud = node.id
            return tree_pb2.StreamAnswerResponse(opened=convert.node_to_proto(node))

        outcome = await self._primary.write(
            key=message.open.idempotency_key,
            method="StreamAnswer",
            request_hash=request_hash("StreamAnswer", message.open),
            action=action,
            encode=lambda r: stripped(r).SerializeToString(),
        )
        if outcome.value is None:
            opened = tree_pb2.StreamAnswerResponse.FromString(outcome.replayed or b"")
            current = await self._buds.get(opened.opened.id)
            raise PreconditionFailed(
                f"bud {current.id!r} was opened by an earlier stream and is "
                f"{current.answer_state}; a bud is never reattached — read it, or continue a "
                "frozen one with extends_answer_id",
                {"answer_id": current.id, "answer_state": str(current.answer_state)},
            )
        self._bud = outcome.value.opened.id
        self._lease = asyncio.create_task(self._keep_lease(self._bud))
        outcome.value.consistency.lsn = outcome.lsn
        return outcome.value

    async def _chunk(
        self, chunk: tree_pb2.StreamAnswerRequest.Chunk
    ) -> tree_pb2.StreamAnswerResponse:
        messages.chunk(chunk, self._acked + 1, self._length)
        assert self._bud is not None
        lsn = await self._chunks.submit(self._bud, chunk.seq, chunk.text)
        if chunk.seq > self._acked:  # a re-send is stored once, so counted once
            self._acked = chunk.seq
            counters.CHUNKS_ACKNOWLEDGED.inc()
            self._length += len(chunk.text)
        return tree_pb2.StreamAnswerResponse(
            ack=tree_pb2.StreamAnswerResponse.Ack(seq=chunk.seq),
            consistency=common_pb2.ConsistencyToken(lsn=lsn),
        )

    async def _complete(
        self, complete: tree_pb2.StreamAnswerRequest.Complete
    ) -> tree_pb2.StreamAnswerResponse:
        if self._acked == 0:
            # Every acknowledged chunk is non-empty, so none acknowledged means no text: a
            # sealed empty answer could be adopted and canonicalized as if it said something.
            raise InvalidInput.one(
                "complete", "needs at least one acknowledged chunk; an empty answer is not sealed"
            )
        made = messages.bud_complete(complete)
        assert self._bud is not None
        node, lsn = await self._buds.end_bud(self._bud, AnswerState.SEALED, None, made)
        self._ended = True
        self._release_lease()
        return tree_pb2.StreamAnswerResponse(
            sealed=convert.node_to_proto(node), consistency=common_pb2.ConsistencyToken(lsn=lsn)
        )

    async def _freeze(self, reason: str) -> None:
        """Freeze the bud unless it already ended. The freeze runs as its own task that this
        call's cancellation cannot interrupt: the call may be gone, but its acknowledged
        chunks must stay readable."""
        freezing = self._schedule_freeze(reason)
        if freezing is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(freezing)

    def _schedule_freeze(self, reason: str) -> asyncio.Task[None] | None:
        self._release_lease()
        if self._bud is None or self._ended:
            return None
        self._ended = True
        return self._keep(self._end_frozen(self._bud, reason))

    async def _end_frozen(self, bud: str, reason: str) -> None:
        """Freeze with `reason`; while the database is away, retry until it is back (within
        FREEZE_RETRY_S), so the bud keeps its real reason instead of waiting out the lease
        meant for a dead server and being frozen as `server_lost`."""
        buds = self._buds
        buds.freezing.add(bud)
        try:
            delay = FREEZE_RETRY_FIRST_S
            give_up = time.monotonic() + FREEZE_RETRY_S
            while True:
                try:
                    # NotFound: the open never committed; PreconditionFailed: it ended
                    # another way (or a freeze cut off while committing was applied).
                    with contextlib.suppress(NotFound, PreconditionFailed):
                        await buds.end_bud(bud, AnswerState.FROZEN, reason, Generated())
                        log.info("bud frozen", extra={"answer_id": bud, "stop_reason": reason})
                    return
                except Exception as exc:
                    if dbloss.database_lost(exc) is None or time.monotonic() > give_up:
                        raise
                    log.warning(
                        "freezing a bud waits for the database: %s",
                        type(exc).__name__,
                        extra={"answer_id": bud, "stop_reason": reason},
                    )
                await asyncio.sleep(delay)
                delay = min(delay * 2, FREEZE_RETRY_MAX_S)
        finally:
            buds.freezing.discard(bud)
