"""The gRPC richer error model, both directions.

Servers fail with `google.rpc.Status` carrying an `ErrorInfo` (stable machine `reason`, domain
"mirrortree.v1", string metadata) and, for bad input, a `BadRequest` naming each field.
Clients (the gateway, tests) read them back with `describe`.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.descriptor import ServiceDescriptor
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from mirrortree.violations import FieldViolation

DOMAIN = "mirrortree.v1"

# The status travels in trailers (grpc-message, percent-encoded, and grpc-status-details-bin,
# base64), and a client drops trailers past its metadata limit (8 KiB soft, 16 KiB hard by
# default) as RESOURCE_EXHAUSTED "Stream removed", losing the code and reason. So the texts are
# shortened in their middle until both trailers together fit TRAILER_BUDGET, whatever a request
# echoed back or a message listed. At most MAX_VIOLATIONS field violations are listed, in order;
# how many more there were is ErrorInfo metadata `violations_omitted`.
TRAILER_BUDGET = 6144
MAX_VIOLATIONS = 8
# Bytes of the message; of each metadata value; of each field path and description. Halved
# together until the status fits.
FIRST_LIMITS = (1536, 1024, 256)


@dataclass(frozen=True)
class RpcFailure:
    """What a failed call said, decoded from the status details."""

    code: grpc.StatusCode
    message: str
    reason: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    violations: tuple[FieldViolation, ...] = ()


def build_status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
    violations: Sequence[FieldViolation] = (),
) -> grpc.Status:
    """A grpc.Status with ErrorInfo (and BadRequest when there are field violations), its texts
    shortened so that the whole status fits a client's trailer limit."""
    extra = dict(metadata or {})
    if len(violations) > MAX_VIOLATIONS:
        extra["violations_omitted"] = str(len(violations) - MAX_VIOLATIONS)
        violations = violations[:MAX_VIOLATIONS]
    limits = FIRST_LIMITS
    while True:
        status = _status(
            code, reason, message, metadata=extra, violations=violations, limits=limits
        )
        if _trailer_bytes(status) <= TRAILER_BUDGET or limits[0] < 64:
            return rpc_status.to_status(status)
        limits = (limits[0] // 2, limits[1] // 2, limits[2] // 2)


def _status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    metadata: Mapping[str, str],
    violations: Sequence[FieldViolation],
    limits: tuple[int, int, int],
) -> status_pb2.Status:
    text, value, detail = limits
    info = any_pb2.Any()
    info.Pack(
        error_details_pb2.ErrorInfo(
            reason=reason, domain=DOMAIN, metadata={k: clip(v, value) for k, v in metadata.items()}
        )
    )
    details = [info]
    if violations:
        bad = any_pb2.Any()
        bad.Pack(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=clip(v.field, detail), description=clip(v.description, detail)
                    )
                    for v in violations
                ]
            )
        )
        details.append(bad)
    return status_pb2.Status(code=code.value[0], message=clip(message, text), details=details)


def _trailer_bytes(status: status_pb2.Status) -> int:
    """grpc-message percent-encodes bytes outside printable ASCII; details go as base64."""
    encoded = status.message.encode()
    message = sum(1 if 0x20 <= b <= 0x7E and b != 0x25 else 3 for b in encoded)
    size: int = status.ByteSize()
    return message + (size + 2) // 3 * 4


def clip(text: str, max_bytes: int) -> str:
    """`text` in at most `max_bytes` UTF-8 bytes: its start and its end (where messages say
    what to do next) around " … " in place of the middle, cut on code point boundaries."""
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text
    keep = max(max_bytes - 5, 0)  # " … " is five bytes
    head = data[: keep - keep // 3].decode("utf-8", "ignore")
    tail = data[len(data) - keep // 3 :].decode("utf-8", "ignore") if keep // 3 else ""
    return f"{head} … {tail}"


# The ErrorReason of the status the current RPC was aborted with, read by the server's metrics.
aborted_reason: contextvars.ContextVar[str] = contextvars.ContextVar("aborted_reason", default="")


async def abort(
    context: grpc.aio.ServicerContext[object, object],
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
    violations: Sequence[FieldViolation] = (),
) -> NoReturn:
    """Abort the RPC with a rich status."""
    aborted_reason.set(reason)
    await context.abort_with_status(
        build_status(code, reason, message, metadata=metadata, violations=violations)
    )
    raise AssertionError("abort_with_status returned")  # pragma: no cover - it always raises


class ServiceFailure(Protocol):
    """What each service's error base class carries (tree_service and graph_service errors)."""

    reason: str
    message: str
    metadata: dict[str, str]


def status_of(error: object, table: Mapping[type, grpc.StatusCode]) -> grpc.StatusCode:
    """The code `table` assigns to the error's class or, failing that, to the nearest of its
    base classes; INTERNAL when none is in the table."""
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]
    return grpc.StatusCode.INTERNAL


async def abort_with_error(
    context: grpc.aio.ServicerContext[object, object],
    error: ServiceFailure,
    table: Mapping[type, grpc.StatusCode],
) -> NoReturn:
    """Abort with the status code the service's error table assigns to the error's class (or
    to its nearest base class in the table)."""
    await abort(
        context,
        status_of(error, table),
        error.reason,
        error.message,
        metadata=error.metadata,
        violations=getattr(error, "violations", ()),
    )


S = TypeVar("S", bound=type)


def maps_errors(
    service: ServiceDescriptor, base: type[Exception], table: Mapping[type, grpc.StatusCode]
) -> Callable[[S], S]:
    """Class decorator for a servicer: every RPC of `service` that raises a `base` error aborts
    with the status code `table` assigns to the error's class or its nearest base class there
    (INTERNAL if none), carrying its reason, metadata and field violations.

    Applied to the class rather than to each method so that no RPC can be left out: a servicer
    that does not implement one of the service's RPCs as an async method (its own or a base
    class's; the generated base's stand-ins are not) fails when its module is imported.
    """

    def wrap_unary(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def rpc(self: object, request: object, context: Any) -> Any:
            try:
                return await method(self, request, context)
            except base as error:
                await abort_with_error(context, error, table)  # type: ignore[arg-type]

        return rpc

    def wrap_streaming(method: Callable[..., AsyncIterator[Any]]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def rpc(self: object, request: object, context: Any) -> AsyncIterator[Any]:
            try:
                async for response in method(self, request, context):
                    yield response
            except base as error:
                await abort_with_error(context, error, table)  # type: ignore[arg-type]

        return rpc

    def decorate(servicer: S) -> S:
        for name in service.methods_by_name:
            method = getattr(servicer, name, None)
            if inspect.isasyncgenfunction(method):
                setattr(servicer, name, wrap_streaming(method))
            elif inspect.iscoroutinefunction(method):
                setattr(servicer, name, wrap_unary(method))
            else:
                raise TypeError(
                    f"{servicer.__name__} must implement {service.full_name}.{name} as an "
                    "async method"
                )
        return servicer

    return decorate


def describe(error: grpc.RpcError) -> RpcFailure:
    """Decode a failed call's status, ErrorInfo and BadRequest (when present)."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    status = rpc_status.from_call(error)
    reason = ""
    metadata: dict[str, str] = {}
    violations: list[FieldViolation] = []
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason, metadata = info.reason, dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                violations.extend(
                    FieldViolation(v.field, v.description) for v in bad.field_violations
                )
    return RpcFailure(code, message or "", reason, metadata, tuple(violations))


__all__ = [
    "DOMAIN",
    "FieldViolation",
    "RpcFailure",
    "ServiceFailure",
    "abort",
    "abort_with_error",
    "build_status",
    "clip",
    "describe",
    "maps_errors",
    "status_of",
]
