"""The gRPC richer error model, both directions.

Servers fail with `google.rpc.Status` carrying an `ErrorInfo` (stable machine `reason`, domain
"mirrortree.v1", string metadata) and, for bad input, a `BadRequest` naming each field.
Clients (the gateway, tests) read them back with `describe`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NoReturn, Protocol

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

DOMAIN = "mirrortree.v1"
# A status travels in the call's trailers, which a default gRPC client accepts up to 8 KiB in
# all (16 KiB hard limit): a bigger one reaches the client as RESOURCE_EXHAUSTED with the code,
# the reason and the named fields lost. So a status is kept within MAX_STATUS_BYTES: each
# violation's texts are shortened to MAX_TEXT_BYTES, the violations that do not fit are left
# out (their number is given as ErrorInfo metadata `violations_omitted`; the first is always
# kept), and the message, at most MAX_MESSAGE_BYTES, is shortened to MAX_TEXT_BYTES last.
MAX_STATUS_BYTES = 7 * 1024
MAX_MESSAGE_BYTES = 2 * 1024
MAX_TEXT_BYTES = 512
_MAX_SHOWN_VIOLATIONS = 100


@dataclass(frozen=True)
class FieldViolation:
    """One bad input field: a dotted path such as `events[2].event_time.start` and why."""

    field: str
    description: str


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
    """A grpc.Status with ErrorInfo (and BadRequest when there are field violations), small
    enough for a default client to read (see MAX_STATUS_BYTES)."""
    message = _clip(message, MAX_MESSAGE_BYTES)
    extra = {_clip(k): _clip(v) for k, v in (metadata or {}).items()}
    shown = [
        error_details_pb2.BadRequest.FieldViolation(
            field=_clip(v.field), description=_clip(v.description)
        )
        for v in violations[:_MAX_SHOWN_VIOLATIONS]
    ]
    while True:
        omitted = len(violations) - len(shown)
        status = _status(
            code, reason=reason, message=message, metadata=extra, violations=shown, omitted=omitted
        )
        if _trailer_bytes(status) <= MAX_STATUS_BYTES:
            break
        if len(shown) > 1:
            shown.pop()
        elif len(message.encode()) > MAX_TEXT_BYTES:
            message = _clip(message)
        else:
            break
    return rpc_status.to_status(status)


def _status(
    code: grpc.StatusCode,
    *,
    reason: str,
    message: str,
    metadata: dict[str, str],
    violations: list[error_details_pb2.BadRequest.FieldViolation],
    omitted: int,
) -> status_pb2.Status:
    if omitted:
        metadata = {**metadata, "violations_omitted": str(omitted)}
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata))
    details = [info]
    if violations:
        bad = any_pb2.Any()
        bad.Pack(error_details_pb2.BadRequest(field_violations=violations))
        details.append(bad)
    return status_pb2.Status(code=code.value[0], message=message, details=details)


def _trailer_bytes(status: status_pb2.Status) -> int:
    """The status's size in the trailers: the message percent-encoded (three bytes for each
    byte outside printable ASCII, and for "%"), the details base64-encoded."""
    encoded = sum(1 if 0x20 <= b <= 0x7E and b != 0x25 else 3 for b in status.message.encode())
    details: int = status.ByteSize()
    return encoded + 4 * (details + 2) // 3


def _clip(text: str, limit: int = MAX_TEXT_BYTES) -> str:
    """`text` cut to at most `limit` bytes of UTF-8 (with "…" where it was cut)."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[: limit - 3].decode(errors="ignore") + "…"


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
    await context.abort_with_status(
        build_status(code, reason, message, metadata=metadata, violations=violations)
    )
    raise AssertionError("abort_with_status returned")  # pragma: no cover - it always raises


class ServiceFailure(Protocol):
    """What each service's error base class carries (tree_service and graph_service errors)."""

    reason: str
    message: str
    metadata: dict[str, str]


async def abort_with_error(
    context: grpc.aio.ServicerContext[object, object],
    error: ServiceFailure,
    table: Mapping[type, grpc.StatusCode],
) -> NoReturn:
    """Abort with the status code the service's error table assigns to the error's class."""
    await abort(
        context,
        table.get(type(error), grpc.StatusCode.INTERNAL),
        error.reason,
        error.message,
        metadata=error.metadata,
        violations=getattr(error, "violations", ()),
    )


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
    "describe",
]
