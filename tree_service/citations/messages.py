"""Citations in requests → checked values (stored citations become proto messages with their
node: tree_service.convert.citation_to_proto)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service.convert import Checker
from tree_service.domain import MAX_LIST, MAX_QUESTION, MAX_SHORT, CitationRequest


def citation_anchor(check: Checker, field: str, anchor: tree_pb2.CitationAnchor) -> dict[str, Any]:
    """An anchor as stored: the attachment and one kind with its coordinates (checked against
    the attachment by the store)."""
    check.identifier(f"{field}.attachment_id", anchor.attachment_id)
    kind = anchor.WhichOneof("kind")
    if kind is None:
        check.fail(f"{field}.kind", "is required: image_region, pdf_area, fragment or media_span")
        return {}
    coordinates = getattr(anchor, kind)
    return {
        "attachment_id": anchor.attachment_id,
        kind: {f.name: getattr(coordinates, f.name) for f in coordinates.DESCRIPTOR.fields},
    }


def citations(check: Checker, values: list[tree_pb2.Citation]) -> tuple[CitationRequest, ...]:
    if len(values) > MAX_LIST:
        check.fail("citations", f"holds more than {MAX_LIST} entries")
    for i, item in enumerate(values):
        check.identifier(f"citations[{i}].node_id", item.node_id)
        if item.start < 0 or item.end < 0 or (item.end and item.end < item.start):
            check.fail(f"citations[{i}].end", "needs 0 <= start <= end (end 0 = to the end)")
        check.text(f"citations[{i}].note", item.note, MAX_SHORT, required=False)
        for output in ("snapshot", "redacted", "status", "source_description"):
            if getattr(item, output):
                check.fail(f"citations[{i}].{output}", "is set by the server; leave it empty")
        check.identifier(f"citations[{i}].authorization_id", item.authorization_id, required=False)
        if item.HasField("anchor"):
            if item.start or item.end:
                check.fail(f"citations[{i}].start", "must be 0 with an anchor (it cites a region)")
            check.text(
                f"citations[{i}].anchor.excerpt", item.anchor.excerpt, MAX_QUESTION, required=False
            )
    return tuple(
        CitationRequest(
            c.node_id,
            c.start,
            c.end,
            c.note,
            citation_anchor(check, f"citations[{i}].anchor", c.anchor)
            if c.HasField("anchor")
            else None,
            c.anchor.excerpt,
            c.authorization_id,
        )
        for i, c in enumerate(values)
    )
