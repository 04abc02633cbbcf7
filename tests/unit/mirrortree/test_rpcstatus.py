"""`rpcstatus.maps_errors`: one place turns a service's errors into rich gRPC statuses, and a
servicer cannot leave an RPC out of it."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from mirrortree import rpcstatus
from mirrortree.v1 import graph_pb2, graph_pb2_grpc, leaves_pb2

STORY_GRAPH = graph_pb2.DESCRIPTOR.services_by_name["StoryGraph"]


class Failure(Exception):
    reason = "failure"

    def __init__(self, message: str, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata or {}


class Missing(Failure):
    reason = "missing"


class Unlisted(Failure):
    reason = "unlisted"


TABLE: dict[type, grpc.StatusCode] = {Missing: grpc.StatusCode.NOT_FOUND}


@rpcstatus.maps_errors(STORY_GRAPH, Failure, TABLE)
class Failing(graph_pb2_grpc.StoryGraphServicer):
    async def Search(self, request: Any, context: Any) -> graph_pb2.SearchResponse:
        raise Missing("no such thing", {"id": request.query})

    async def GetContext(self, request: Any, context: Any) -> graph_pb2.GetContextResponse:
        raise Unlisted("a failure the table does not name")

    async def ReadSource(self, request: Any, context: Any) -> graph_pb2.ReadSourceResponse:
        raise ValueError("not a service error")

    async def ResolveBinding(self, request: Any, context: Any) -> graph_pb2.ResolveBindingResponse:
        return graph_pb2.ResolveBindingResponse(binding_id="b")

    async def SearchLeaves(self, request: Any, context: Any) -> leaves_pb2.SearchLeavesResponse:
        return leaves_pb2.SearchLeavesResponse()


async def test_each_rpc_aborts_with_the_code_reason_and_metadata_of_its_error() -> None:
    server = grpc.aio.server()
    graph_pb2_grpc.add_StoryGraphServicer_to_server(Failing(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = graph_pb2_grpc.StoryGraphStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.Search(graph_pb2.SearchRequest(query="x1"))
            failure = rpcstatus.describe(raised.value)
            assert (failure.code, failure.reason) == (grpc.StatusCode.NOT_FOUND, "missing")
            assert failure.message == "no such thing"
            assert failure.metadata == {"id": "x1"}

            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.GetContext(graph_pb2.GetContextRequest())
            failure = rpcstatus.describe(raised.value)
            assert (failure.code, failure.reason) == (grpc.StatusCode.INTERNAL, "unlisted")

            # Anything else is the server's own failure, reported as grpc does (UNKNOWN).
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.ReadSource(graph_pb2.ReadSourceRequest())
            assert raised.value.code() == grpc.StatusCode.UNKNOWN

            answer = await stub.ResolveBinding(graph_pb2.ResolveBindingRequest())
            assert answer.binding_id == "b"
    finally:
        await server.stop(None)


def test_a_servicer_that_leaves_an_rpc_out_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match=r"mirrortree\.v1\.StoryGraph\.ReadSource"):

        @rpcstatus.maps_errors(STORY_GRAPH, Failure, TABLE)
        class Partial(graph_pb2_grpc.StoryGraphServicer):
            async def Search(self, request: Any, context: Any) -> Any: ...

            async def GetContext(self, request: Any, context: Any) -> Any: ...

            async def ResolveBinding(self, request: Any, context: Any) -> Any: ...
