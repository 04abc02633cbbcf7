"""ReadSource at the edge: its request checks (read kind, content page) and its response."""

from __future__ import annotations

from graph_service.convert import (
    DEFAULT_CONTENT_PAGE,
    MAX_CONTENT_PAGE,
    Checker,
    basis,
    count,
    coverage,
    locator,
)
from graph_service.views import ResolvedScope, SourceRead, SourceTimes, TimeFilter
from mirrortree.timefmt import format_utc
from mirrortree.v1 import common_pb2, graph_pb2

READ_KINDS = {
    graph_pb2.READ_KIND_UNSPECIFIED: "snapshot",
    graph_pb2.SNAPSHOT: "snapshot",
    graph_pb2.VERSION: "version",
    graph_pb2.CURRENT_CONTENT: "current",
}
READ_KIND_TO_PROTO = {
    "snapshot": graph_pb2.SNAPSHOT,
    "version": graph_pb2.VERSION,
    "current": graph_pb2.CURRENT_CONTENT,
}


def read_kind(check: Checker, value: int, version: str) -> str:
    kind: str | None = READ_KINDS.get(value)  # type: ignore[call-overload]
    if kind is None:
        check.fail("read_kind", f"unknown read kind {value}")
        return "snapshot"
    if kind == "version":
        check.counter("source_version", version)
    elif version:
        check.fail("source_version", "is only used with read_kind VERSION")
    return kind


def content_page(check: Checker, offset: int, size: int) -> tuple[int, int]:
    if offset < 0:
        check.fail("offset", "must be >= 0 (a zero-based code point)")
    if not 0 <= size <= MAX_CONTENT_PAGE:
        check.fail(
            "page_size",
            f"must be between 1 and {MAX_CONTENT_PAGE} code points (0 = {DEFAULT_CONTENT_PAGE})",
        )
    return max(offset, 0), size or DEFAULT_CONTENT_PAGE


SOURCE_AVAILABILITY = {
    "available": graph_pb2.AVAILABLE,
    "deleted": graph_pb2.DELETED,
    "inaccessible": graph_pb2.INACCESSIBLE,
    "moved_out_of_scope": graph_pb2.MOVED_OUT_OF_SCOPE,
}


def read_source_response(
    read: SourceRead,
    scope: ResolvedScope,
    *,
    requested_version: str,
    start: int,
    size: int,
    next_cursor: str,
) -> graph_pb2.ReadSourceResponse:
    end = min(len(read.content), start + size)
    more = end < len(read.content)
    return graph_pb2.ReadSourceResponse(
        text=read.content[start:end],
        content_kind=read.content_kind,
        requested_version=requested_version,
        returned_version=read.returned_version,
        location=locator(read.locator),
        source_type=read.source_type,
        source_id=read.source_id,
        start=start,
        end=end,
        content_length=len(read.content),
        fragment_start=read.fragment_start,
        fragment_end=read.fragment_end,
        source_length=count(
            read.source_length,
            "the whole source at this version is not readable here (not kept, gone or out of "
            "scope), only the saved fragment",
        ),
        availability=SOURCE_AVAILABILITY[read.availability],
        available_read_kinds=[READ_KIND_TO_PROTO[k] for k in read.available_kinds],
        differs_from_reference=read.differs_from_reference,
        page=common_pb2.PageInfo(
            returned_count=end - start,
            has_more=more,
            next_cursor=next_cursor,
            complete=not more,
            limit_reason="page_size" if more else "",
            total=count(len(read.content), ""),
        ),
        coverage=coverage(read.coverage),
        basis=basis(scope, TimeFilter(None, None, "event_time"), read.read_revision, read.read_at),
        time_metadata=source_times(read.times) if read.times is not None else None,
    )


def source_times(times: SourceTimes) -> graph_pb2.SourceTimes:
    message = graph_pb2.SourceTimes()
    for name, fact in (
        ("created", times.created),
        ("updated", times.updated),
        ("captured", times.captured),
    ):
        part = getattr(message, name)
        if fact.at is not None:
            part.at = format_utc(fact.at)
            part.basis = fact.basis
        else:
            part.unknown.reason = fact.basis
    return message
