"""Group commit of bud chunks: the chunks of every open bud, stored by one writer task."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass

from tree_service.buds import queries
from tree_service.errors import InvalidInput, PreconditionFailed
from tree_service.primary import Primary


@dataclass
class _PendingChunk:
    node_id: uuid.UUID
    seq: int
    text: str
    done: asyncio.Future[str]  # resolves to the commit LSN once durable


class ChunkCommitter:
    """Group commit for bud chunks.

    Every open bud hands its chunks here; the committer stores whatever has accumulated in one
    transaction, so a hundred buds streaming at once cost a handful of commits, not a
    hundred. Up to `in_flight` batches commit at once (chunks gather for the next while the
    last ones wait for their commit); they never share a bud, because a bud's stream waits
    for each acknowledgement before it reads its next chunk. A chunk's future resolves only
    after its transaction committed (its acknowledgement is then safe to send); a chunk for a
    bud that is no longer streaming fails instead of being stored.
    """

    def __init__(self, primary: Primary, max_batch: int = 2000, in_flight: int = 2) -> None:
        self._primary = primary
        self._queue: asyncio.Queue[_PendingChunk] = asyncio.Queue()
        self._max_batch = max_batch
        self._in_flight = in_flight
        self._task: asyncio.Task[None] | None = None
        self._committing: dict[asyncio.Task[None], list[_PendingChunk]] = {}

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="chunk-committer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        unsettled = [p for batch in self._committing.values() for p in batch]
        for task in list(self._committing):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while not self._queue.empty():
            unsettled.append(self._queue.get_nowait())
        for pending in unsettled:
            if not pending.done.done():
                pending.done.set_exception(PreconditionFailed("the service is shutting down"))

    async def submit(self, node_id: str, seq: int, text: str) -> str:
        """Store one chunk durably; returns the commit LSN. Idempotent per (bud, seq)."""
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        await self._queue.put(_PendingChunk(uuid.UUID(node_id), seq, text, done))
        return await done

    async def _run(self) -> None:
        slots = asyncio.Semaphore(self._in_flight)
        while True:
            first = await self._queue.get()
            await slots.acquire()
            batch = [first]
            while len(batch) < self._max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            task = asyncio.create_task(self._settle(batch))
            self._committing[task] = batch

            def finished(done: asyncio.Task[None]) -> None:
                self._committing.pop(done, None)
                slots.release()

            task.add_done_callback(finished)

    async def _settle(self, batch: list[_PendingChunk]) -> None:
        try:
            await self._commit(batch)
        except Exception as exc:  # the whole batch failed: report it to every waiter
            for pending in batch:
                if not pending.done.done():
                    pending.done.set_exception(exc)

    async def _commit(self, batch: list[_PendingChunk]) -> None:
        async with self._primary.pool.acquire() as conn:
            rows = await conn.fetch(
                queries.STORE_CHUNKS,
                [p.node_id for p in batch],
                [p.seq for p in batch],
                [p.text for p in batch],
            )
            lsn = await self._primary.commit_lsn(conn)
        live = {r["node_id"] for r in rows if r["live"]}
        texts = {(r["node_id"], r["seq"]): r["stored"] for r in rows}
        for pending in batch:
            if pending.done.done():
                continue
            if pending.node_id not in live:
                pending.done.set_exception(
                    PreconditionFailed(
                        f"bud {pending.node_id} is no longer streaming; chunk {pending.seq} "
                        "was refused",
                        {"seq": str(pending.seq)},
                    )
                )
            elif texts.get((pending.node_id, pending.seq)) != pending.text:
                pending.done.set_exception(
                    InvalidInput.one(
                        "chunk.text",
                        f"chunk {pending.seq} was already stored with different text; a "
                        "re-sent chunk must repeat the original exactly",
                    )
                )
            else:
                pending.done.set_result(lsn)
