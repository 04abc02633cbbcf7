"""Steady read and write load against the real services, counting every outcome by status code
and reason, so a fault test can tell a retryable answer from an INTERNAL one."""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import unique

RETRYABLE = grpc.StatusCode.UNAVAILABLE


@dataclass
class Tally:
    """Outcomes of the calls made so far: "OK" or "CODE/reason"."""

    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)

    def failure(self, error: grpc.aio.AioRpcError) -> str:
        failure = describe(error)
        outcome = f"{failure.code.name}/{failure.reason}"
        self.outcomes[outcome] += 1
        return outcome

    @property
    def ok(self) -> int:
        return self.outcomes["OK"]

    def bad(self) -> dict[str, int]:
        """Every outcome that is neither OK nor a retryable UNAVAILABLE."""
        return {k: v for k, v in self.outcomes.items() if k != "OK" and not k.startswith("UNAV")}


def search_request(project: str, token: common_pb2.ConsistencyToken | None = None):
    return graph_pb2.SearchRequest(
        query="anything",
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
        options=graph_pb2.ReadOptions(min_consistency=token) if token else None,
    )


@contextlib.asynccontextmanager
async def reading(port: int, project: str, workers: int = 6) -> AsyncIterator[Tally]:
    """Searches from `workers` concurrent callers until the block ends."""
    tally = Tally()
    stop = asyncio.Event()

    async def reader(stub: graph_pb2_grpc.StoryGraphStub) -> None:
        while not stop.is_set():
            try:
                await stub.Search(search_request(project), timeout=10)
                tally.outcomes["OK"] += 1
            except grpc.aio.AioRpcError as error:
                tally.failure(error)
                await asyncio.sleep(0.01)

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = graph_pb2_grpc.StoryGraphStub(channel)
        tasks = [asyncio.create_task(reader(stub)) for _ in range(workers)]
        try:
            yield tally
        finally:
            stop.set()
            await asyncio.gather(*tasks)


@dataclass
class Writes:
    """Trees whose creation was acknowledged, and every answer on the way."""

    tally: Tally = field(default_factory=Tally)
    acknowledged: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def writing(port: int, project: str, workers: int = 8) -> AsyncIterator[Writes]:
    """CreateTree from `workers` callers until the block ends; each write is retried with its
    idempotency key while the answer is UNAVAILABLE, as a client should."""
    writes = Writes()
    stop = asyncio.Event()

    async def writer(stub: tree_pb2_grpc.TreeServiceStub) -> None:
        while not stop.is_set():
            request = tree_pb2.CreateTreeRequest(
                idempotency_key=unique("w"), title="t", owner="o", project_id=project
            )
            while True:
                try:
                    response = await stub.CreateTree(request, timeout=10)
                except grpc.aio.AioRpcError as error:
                    writes.tally.failure(error)
                    if error.code() != RETRYABLE:
                        break
                    await asyncio.sleep(0.05)
                    continue
                writes.tally.outcomes["OK"] += 1
                writes.acknowledged.append(response.tree.id)
                break

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        tasks = [asyncio.create_task(writer(stub)) for _ in range(workers)]
        try:
            yield writes
        finally:
            stop.set()
            await asyncio.gather(*tasks)


async def wait_for(condition, timeout_s: float, what: str) -> None:
    """Poll `condition()` until true; fail naming `what` after `timeout_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        assert loop.time() < deadline, f"{what} did not happen within {timeout_s} s"
        await asyncio.sleep(0.02)
