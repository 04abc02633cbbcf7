"""Every exception class the services define, raised through a real RPC path: each error of a
service's hierarchy reaches the client with its own reason and a status code other than
INTERNAL (a subclass is answered like its nearest base in the service's table), a lost database
is UNAVAILABLE, and every other exception class is one the code catches where it is raised.

The servers here are real gRPC servers on loopback, built by mirrortree.server.start_server
with the services' own error tables; only the servicers are stand-ins that raise."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import pytest_asyncio

import graph_service
import mirrortree
import tree_service
from graph_service import servicer as graph_servicer
from graph_service.errors import GraphError
from mirrortree import dbloss, rpcstatus, server
from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from mirrortree.violations import FieldViolation
from tests.descriptor_fuzz import documented_reasons
from tree_service import servicer as tree_servicer
from tree_service.errors import TreeServiceError

# Exceptions that never leave an RPC: each is caught where it is raised and answered as an
# error of the service's hierarchy, or belongs to start-up, not to a call.
CAUGHT_WHERE_RAISED = {
    "tree_service.domain.RealmPolicyError": "rules.canonical_scope turns it into InvalidInput",
    "tree_service.convert.NotStorable": "the JSON fields' checks name the field (InvalidInput)",
    "tree_service.migrate.MigrationError": "start-up only: migrations run before serving",
    "graph_service.replicas.PrimaryNotAllowed": "start-up only: a primary among the replicas",
    "graph_service.replicas._ReplicaLost": "the router retries on another replica, then "
    "answers ReplicaUnavailable",
    "mirrortree.timefmt.NaiveTimeError": "the field checks name the field (InvalidInput)",
    "mirrortree.scopes.ScopeError": "the field checks name the field (InvalidInput)",
}
# Mapped by the observing interceptor of every server (mirrortree.server), not by a table.
LOST = {dbloss.DatabaseLost: "database_unavailable", dbloss.OutcomeUnknown: "outcome_unknown"}


def defined_exceptions() -> Iterator[type[BaseException]]:
    """Every exception class defined in the services' packages and their shared runtime."""
    for package in (tree_service, graph_service, mirrortree):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.startswith(("mirrortree.v1", "tree_service.__main__")):
                continue
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                    yield cls


EXCEPTIONS = sorted(set(defined_exceptions()), key=lambda c: f"{c.__module__}.{c.__name__}")


def qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def instance_of(cls: type[BaseException]) -> BaseException:
    """An instance of `cls`, its constructor's arguments filled by their names and types."""
    arguments: dict[str, Any] = {}
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is not parameter.empty:
            continue
        annotation = str(parameter.annotation)
        if "FieldViolation" in annotation:
            arguments[name] = [FieldViolation("field", "is wrong")]
        elif annotation in ("int", "<class 'int'>"):
            arguments[name] = 7
        elif "dict" in annotation:
            arguments[name] = {"key": "value"}
        else:
            arguments[name] = "x"
    return cls(**arguments)


@dataclass(frozen=True)
class Service:
    name: str
    descriptor: Any
    base: type[Exception]
    table: dict[Any, grpc.StatusCode]
    base_servicer: type
    register: Callable[[Any, grpc.aio.Server], None]
    stub: type
    call: Callable[[Any], Any]  # a unary call of the stub


SERVICES = (
    Service(
        "TreeService",
        tree_pb2.DESCRIPTOR.services_by_name["TreeService"],
        TreeServiceError,
        dict(tree_servicer.STATUS_BY_ERROR),
        tree_pb2_grpc.TreeServiceServicer,
        tree_pb2_grpc.add_TreeServiceServicer_to_server,
        tree_pb2_grpc.TreeServiceStub,
        lambda stub: stub.GetSettings(tree_pb2.GetSettingsRequest(), timeout=10),
    ),
    Service(
        "StoryGraph",
        graph_pb2.DESCRIPTOR.services_by_name["StoryGraph"],
        GraphError,
        dict(graph_servicer.STATUS_BY_ERROR),
        graph_pb2_grpc.StoryGraphServicer,
        graph_pb2_grpc.add_StoryGraphServicer_to_server,
        graph_pb2_grpc.StoryGraphStub,
        lambda stub: stub.Search(graph_pb2.SearchRequest(query="q"), timeout=10),
    ),
)


def raising_servicer(service: Service) -> Any:
    """A servicer of every RPC of `service` that raises its `raised`, under the service's own
    error table (rpcstatus.maps_errors, as the real servicer is)."""

    async def unary(self: Any, request: Any, context: Any) -> Any:
        raise self.raised

    async def streaming(self: Any, request: Any, context: Any) -> AsyncIterator[Any]:
        raise self.raised
        yield  # pragma: no cover - makes this an async generator

    methods = {
        m.name: streaming if m.server_streaming else unary for m in service.descriptor.methods
    }
    cls = type(f"Raising{service.name}", (service.base_servicer,), methods)
    return rpcstatus.maps_errors(service.descriptor, service.base, service.table)(cls)()


@pytest_asyncio.fixture(scope="module")
async def servers() -> AsyncIterator[dict[str, tuple[Any, Any]]]:
    """Per service: the raising servicer and a stub of a real server serving it."""
    running = {}
    channels = []
    for service in SERVICES:
        servicer = raising_servicer(service)
        started = await server.start_server(
            service=service.name.lower(),
            listen="127.0.0.1:0",
            register=functools.partial(service.register, servicer),
            service_names=[service.descriptor.full_name],
        )
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{started.port}")
        channels.append((started, channel))
        running[service.name] = (servicer, service.stub(channel))
    yield running
    for started, channel in channels:
        await channel.close()
        await started.server.stop(None)


async def answer_to(
    servers: dict[str, tuple[Any, Any]], service: Service, raised: BaseException
) -> rpcstatus.RpcFailure:
    servicer, stub = servers[service.name]
    servicer.raised = raised
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await service.call(stub)
    return describe(caught.value)


SERVICE_ERRORS = [
    (service, cls)
    for service in SERVICES
    for cls in EXCEPTIONS
    if issubclass(cls, service.base) and cls is not service.base
]


@pytest.mark.parametrize(
    ("service", "cls"),
    SERVICE_ERRORS,
    ids=[f"{s.name}-{c.__name__}" for s, c in SERVICE_ERRORS],
)
async def test_every_error_of_a_service_reaches_the_client_with_its_code_and_reason(
    servers, service, cls
):
    raised = instance_of(cls)
    failure = await answer_to(servers, service, raised)
    assert failure.code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), qualified(cls)
    assert failure.code == rpcstatus.status_of(raised, service.table)
    assert failure.reason == raised.reason  # type: ignore[attr-defined]
    assert failure.reason in documented_reasons(), f"document {failure.reason} in ErrorReason"


@pytest.mark.parametrize("cls", list(LOST), ids=[c.__name__ for c in LOST])
async def test_a_lost_database_is_unavailable_on_every_service(servers, cls):
    for service in SERVICES:
        failure = await answer_to(servers, service, cls("the connection was reset"))
        assert (failure.code, failure.reason) == (grpc.StatusCode.UNAVAILABLE, LOST[cls])


def test_every_other_exception_class_is_caught_where_it_is_raised():
    """A new exception class joins a service's hierarchy, or says here why it never escapes."""
    others = {
        qualified(cls)
        for cls in EXCEPTIONS
        if not issubclass(cls, (TreeServiceError, GraphError, *LOST))
    }
    assert others == CAUGHT_WHERE_RAISED.keys()


def test_the_tables_hold_the_base_classes_and_every_subclass_maps_like_its_base():
    class Refusal(tree_service.errors.PreconditionFailed):
        reason = "refusal"

    assert rpcstatus.status_of(Refusal("no"), tree_servicer.STATUS_BY_ERROR) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    assert rpcstatus.status_of(ValueError(), tree_servicer.STATUS_BY_ERROR) == (
        grpc.StatusCode.INTERNAL
    )
    assert {cls.__module__ for cls in tree_servicer.STATUS_BY_ERROR} == {"tree_service.errors"}
