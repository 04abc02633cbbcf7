"""StoryGraph refuses what it cannot read, naming why: bad input, a scope the binding may
not read, an unreachable consistency token, an unknown binding, a primary to read from."""

from __future__ import annotations

import grpc
import pytest

from graph_service import app as graph_app
from graph_service.replicas import PrimaryNotAllowed
from mirrortree.protoscope import time_range
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, graph_settings, unique
from tests.graph_service.story import options, project_scope, record


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 501}, "query"),
        ({"query": "x", "page_size": 51}, "page_size"),
        ({"query": "x", "time_range": {"from": "2026-10-01T00:00:00"}}, "time_range.from"),
        (
            {
                "query": "x",
                "time_range": {"from": "2026-10-02T00:00:00Z", "to": "2026-10-01T00:00:00Z"},
            },
            "time_range.to",
        ),
        ({"query": "x", "object_types": [42]}, "object_types[0]"),
        ({"query": "x", "scope": {"projects": {"project_ids": []}}}, "scope.projects"),
        ({"query": "x", "options": {"session_id": "not-a-session"}}, "options.session_id"),
    ],
)
async def test_bad_search_input_is_refused_naming_the_field(graph_stub, request_fields, field):
    request = graph_pb2.SearchRequest(**request_fields)
    if not request.HasField("scope"):
        request.scope.projects.project_ids.append("p")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(request)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in [v.field for v in failure.violations]


async def test_a_huge_time_is_refused_naming_the_field_and_quoting_only_its_start(graph_stub):
    # The whole value used to be quoted back: 100,000 characters overflowed the client's
    # trailer limit, and the caller got RESOURCE_EXHAUSTED "Stream removed" instead.
    request = graph_pb2.SearchRequest(
        query="x", scope=project_scope("p"), time_range=time_range("2" * 100_000, "")
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(request)
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_argument")
    [violation] = failure.violations
    assert violation.field == "time_range.from"
    assert violation.description == (
        f"{'2' * 40!r}… is not an RFC 3339 time with a zone (such as 2026-10-01T08:00:00+08:00)"
    )


async def test_thousands_of_bad_fields_are_refused_in_an_answer_that_fits_the_trailers(
    graph_stub,
):
    # One violation per unknown object type used to be sent back, 1,980 of them: the status
    # overflowed the client's trailer limit and arrived as RESOURCE_EXHAUSTED without a reason.
    request = graph_pb2.SearchRequest(
        query="x",
        scope=project_scope("p"),
        object_types=list(range(20, 2_000)),  # type: ignore[arg-type]
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(request)
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_argument")
    assert failure.message == "invalid object_types[0]: unknown object type 20 (and 1979 more)"
    assert [v.field for v in failure.violations] == [f"object_types[{i}]" for i in range(8)]
    assert failure.metadata["violations_omitted"] == "1972"


async def test_a_scope_refused_with_long_project_ids_keeps_its_reason(tree_stub, graph_stub):
    # The refusal names the requested scope in its message and metadata; for 50 project ids of
    # 200 characters that was over 20 KB of trailers, dropped by the client as RESOURCE_EXHAUSTED.
    session = (await create_tree(tree_stub, project_id=unique("own"))).tree
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="Continue"
        )
    )
    scope = project_scope(*(f"{i:03}" + "\u00e9" * 197 for i in range(50)))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="x",
                scope=scope,
                options=graph_pb2.ReadOptions(min_consistency=binding.consistency),
            ),
            metadata=[("authorization", f"Bearer {binding.token}")],
        )
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (grpc.StatusCode.PERMISSION_DENIED, "scope_mismatch")
    assert failure.message.startswith("this runtime binding may read only its session's")
    assert len(failure.message.encode()) <= 1536
    assert failure.metadata["requested_scope"].startswith("projects '000")


async def test_as_of_is_refused_explicitly(graph_stub):
    request = graph_pb2.SearchRequest(query="x", scope=project_scope("p"))
    # Field 100 is reserved for as_of; a client built from an older or forged schema sends it.
    raw = request.SerializeToString() + bytes([0xA2, 0x06, 0x04]) + b"2026"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(graph_pb2.SearchRequest.FromString(raw))
    failure = describe(caught.value)
    assert failure.reason == "as_of_unsupported"
    assert failure.violations[0].field == "as_of"


async def test_a_read_waits_for_the_replica_to_replay_the_write(tree_stub, graph_stub):
    project = unique("proj")
    for i in range(5):
        written = await record(
            tree_stub,
            project,
            events=[tree_pb2.EventInput(id=f"e{i}", kind=tree_pb2.CHANGE, title=f"Step {i}")],
        )
        response = await graph_stub.Search(
            graph_pb2.SearchRequest(
                query=f"step {i}", scope=project_scope(project), options=options(written)
            )
        )
        assert [h.ref.id for h in response.hits] == [f"e{i}"]


async def test_an_unreachable_consistency_token_times_out_clearly(graph_stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(
            graph_pb2.SearchRequest(
                query="x",
                scope=project_scope("p"),
                options=graph_pb2.ReadOptions(
                    min_consistency=common_pb2.ConsistencyToken(lsn="FF/FFFFFFFF")
                ),
            ),
            timeout=10,
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.UNAVAILABLE
    assert failure.reason == "consistency_timeout"


async def test_an_unknown_binding_token_is_unauthenticated(graph_stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.Search(
            graph_pb2.SearchRequest(query="x", scope=project_scope("p")),
            metadata=[("authorization", "Bearer mtb_nope")],
        )
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_get_context_without_an_object_names_the_field(graph_stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(graph_pb2.GetContextRequest())
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert {v.field for v in describe(caught.value).violations} == {
        "object_ref.type",
        "object_ref.id",
    }


async def test_graph_service_refuses_to_start_on_a_primary(cluster, tree_service):
    settings = graph_settings(cluster, replica_dsns=(cluster.primary_dsn,))
    with pytest.raises(PrimaryNotAllowed):
        await graph_app.start(settings)
