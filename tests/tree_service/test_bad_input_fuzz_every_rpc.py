"""Every RPC of both services, fuzzed from its request descriptor alone: whatever a client
sends, the answer is OK or a status with a documented ErrorInfo reason (never INTERNAL or
UNKNOWN, never an error the server logs), within its deadline, and a refused write leaves no
row behind. A method added to a proto is fuzzed here without anyone writing a strategy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import unique
from tests.descriptor_fuzz import BUDGET, documented_reasons, requests
from tests.tree_service.fuzzing import COUNTED, Code, Conversation, ids

TREE = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
GRAPH = graph_pb2.DESCRIPTOR.services_by_name["StoryGraph"]
READS = ("Get", "List", "Search", "Read", "Resolve")
REASONS = documented_reasons()


@pytest_asyncio.fixture(scope="module")
async def bound_token(tree_stub, conversation: Conversation) -> str:
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=conversation.tree, runtime="Model"
        )
    )
    return str(binding.token)


def caller(stub: Any, method: Any, request: Any, metadata: Any) -> Callable[[], Awaitable[Any]]:
    rpc = getattr(stub, method.name)

    async def call() -> None:
        if method.client_streaming:
            # In step, one answer per message: writing on after the server refused the stream
            # meets a grpcio client race that reports INTERNAL (grpc/grpc#36066).
            stream = rpc(timeout=60, metadata=metadata)
            for message in request:
                await stream.write(message)
                if await stream.read() is grpc.aio.EOF:
                    return
            await stream.done_writing()
            while await stream.read() is not grpc.aio.EOF:
                pass
        elif method.server_streaming:
            # A live stream (WatchTree) never ends by itself: its first message shows it
            # answered, and a refused request fails before sending any.
            async for _ in rpc(request, timeout=60, metadata=metadata):
                break
        else:
            await rpc(request, timeout=60, metadata=metadata)

    return call


@pytest.mark.parametrize(
    ("service", "name"),
    [(TREE, m.name) for m in TREE.methods] + [(GRAPH, m.name) for m in GRAPH.methods],
    ids=[m.name for m in TREE.methods] + [m.name for m in GRAPH.methods],
)
@BUDGET
@given(data=st.data())
async def test_every_rpc_answers_bad_input_with_a_documented_reason(
    tree_stub, graph_stub, conversation, bound_token, *, db, server_errors, service, name, data
):
    method = service.methods_by_name[name]
    request = data.draw(requests(method, ids(conversation)), label="request")
    stub = tree_stub if service is TREE else graph_stub
    metadata = data.draw(
        st.sampled_from([(), (("authorization", f"Bearer {bound_token}"),)]), label="metadata"
    )
    writes = service is TREE and not name.startswith(READS)
    server_errors()
    before = tuple(await db.fetchrow(COUNTED)) if writes else None
    try:
        await caller(stub, method, request, metadata)()
    except grpc.aio.AioRpcError as error:
        failure = describe(error)
        assert failure.code not in (Code.INTERNAL, Code.UNKNOWN, Code.DATA_LOSS), failure
        assert failure.message, failure
        assert failure.reason in REASONS, failure
        if failure.reason == "invalid_argument":
            assert failure.violations and all(v.field for v in failure.violations), failure
        if writes and not method.client_streaming:  # acknowledged chunks are kept (T6)
            assert tuple(await db.fetchrow(COUNTED)) == before, f"{failure} left rows behind"
    assert not server_errors()
