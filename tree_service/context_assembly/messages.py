"""Requests of context assembly → checked values, and contexts → proto messages."""

from __future__ import annotations

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service.context_assembly.layers import (
    DEFAULT_PARENT_CHAIN,
    MAX_BUDGET,
    Budget,
    Fragment,
    Inclusion,
    Item,
    Layer,
)
from tree_service.context_assembly.store import (
    ContextRequest,
    ContextVersion,
    NewSummary,
    StoredSummary,
)
from tree_service.convert import Checker

MAX_SUMMARY = 100_000
MAX_NAME = 200
MAX_BOUNDARIES = 100
MAX_BOUNDARY = 100_000
MAX_FRAGMENTS = 1_000
MAX_FRAGMENT = 100_000
MAX_ESTIMATES = 10_000
MAX_PARENT_CHAIN = 1_000

LAYER_TO_PROTO = {
    Layer.HARD_BOUNDARY: tree_pb2.HARD_BOUNDARY,
    Layer.CURRENT_NODE: tree_pb2.CURRENT_NODE,
    Layer.PARENT_CHAIN: tree_pb2.PARENT_CHAIN,
    Layer.EXPLICIT_ANCHOR: tree_pb2.EXPLICIT_ANCHOR,
    Layer.LONG_TERM_MEMORY: tree_pb2.LONG_TERM_MEMORY,
    Layer.OLDER_ANCESTOR: tree_pb2.OLDER_ANCESTOR,
    Layer.TOOL_RESULT: tree_pb2.TOOL_RESULT,
    Layer.SIDE_BRANCH_CITATION: tree_pb2.SIDE_BRANCH_CITATION,
    Layer.ATTACHMENT: tree_pb2.ATTACHMENT,
}
INCLUSION_TO_PROTO = {
    Inclusion.VERBATIM: tree_pb2.INCLUDED_VERBATIM,
    Inclusion.SUMMARY: tree_pb2.INCLUDED_AS_SUMMARY,
    Inclusion.FRAGMENT: tree_pb2.INCLUDED_AS_FRAGMENT,
    Inclusion.OMITTED: tree_pb2.OMITTED,
}


def summary_request(request: tree_pb2.RecordContextSummaryRequest) -> NewSummary:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.text("subject", request.subject, MAX_NAME)
    check.text("text", request.text, MAX_SUMMARY)
    check.text("written_by", request.written_by, MAX_NAME)
    if request.expected_version < 0:
        check.fail("expected_version", "must be >= 0 (0 writes the first version)")
    if request.token_estimate < 0:
        check.fail("token_estimate", "must be >= 0 (0: no estimate)")
    check.done()
    return NewSummary(
        request.subject,
        request.text,
        request.expected_version,
        request.written_by,
        request.token_estimate,
    )


def context_request(request: tree_pb2.AssembleContextRequest) -> ContextRequest:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("node_id", request.node_id)
    if not 1 <= request.budget <= MAX_BUDGET:
        check.fail("budget", f"must be 1..{MAX_BUDGET} code points")
    if request.token_budget < 0:
        check.fail("token_budget", "must be >= 0 (0: no token budget)")
    if len(request.boundaries) > MAX_BOUNDARIES:
        check.fail("boundaries", f"holds at most {MAX_BOUNDARIES} boundaries")
    for i, boundary in enumerate(request.boundaries):
        check.text(f"boundaries[{i}]", boundary, MAX_BOUNDARY)
    if len(request.token_estimates) > MAX_ESTIMATES:
        check.fail("token_estimates", f"holds at most {MAX_ESTIMATES} estimates")
    for subject, tokens in sorted(request.token_estimates.items()):
        if tokens < 0:
            check.fail(f"token_estimates[{subject[:40]}]", "must be >= 0")
    if len(request.fragments) > MAX_FRAGMENTS:
        check.fail("fragments", f"holds at most {MAX_FRAGMENTS} fragments")
    fragments = []
    for i, f in enumerate(request.fragments):
        field = f"fragments[{i}]"
        check.identifier(f"{field}.node_id", f.node_id)
        check.identifier(f"{field}.attachment_id", f.attachment_id)
        check.text(f"{field}.text", f.text, MAX_FRAGMENT)
        if f.start < 0:
            check.fail(f"{field}.start", "must be >= 0 (a zero-based code point)")
        if f.end - f.start != len(f.text):
            check.fail(
                f"{field}.end",
                f"must be start + the text's length ({f.start + len(f.text)}), not {f.end}",
            )
        fragments.append(Fragment(f.node_id, f.attachment_id, f.start, f.end, f.text))
    if not 0 <= request.parent_chain <= MAX_PARENT_CHAIN:
        check.fail("parent_chain", f"must be 0..{MAX_PARENT_CHAIN} (0: the default, 2)")
    check.done()
    return ContextRequest(
        node_id=request.node_id,
        budget=Budget(
            request.budget, request.token_budget, dict(sorted(request.token_estimates.items()))
        ),
        boundaries=tuple(request.boundaries),
        fragments=tuple(fragments),
        parent_chain=request.parent_chain or DEFAULT_PARENT_CHAIN,
    )


def summary_to_proto(summary: StoredSummary) -> tree_pb2.ContextSummary:
    return tree_pb2.ContextSummary(
        subject=summary.subject,
        version=summary.version,
        text=summary.text,
        token_estimate=summary.token_estimate,
        written_by=summary.written_by,
        created_at=format_utc(summary.created_at),
    )


def item_to_proto(item: Item) -> tree_pb2.AssembledItem:
    return tree_pb2.AssembledItem(
        subject=item.subject,
        layer=LAYER_TO_PROTO[item.layer],
        inclusion=INCLUSION_TO_PROTO[item.inclusion],
        text=item.text,
        summary_version=item.summary_version,
        fragment_start=item.fragment_start,
        fragment_end=item.fragment_end,
        omitted_reason=item.omitted_reason,
        code_points=item.code_points,
        tokens=item.tokens,
        mandatory=item.mandatory,
        node_id=item.node_id,
        full_code_points=item.full_code_points,
    )


def context_to_proto(version: ContextVersion) -> tree_pb2.AssembleContextResponse:
    return tree_pb2.AssembleContextResponse(
        context_version_id=version.id,
        node_id=version.node_id,
        items=[item_to_proto(i) for i in version.assembled.items],
        budget=version.budget,
        used=version.assembled.used,
        token_budget=version.token_budget,
        used_tokens=version.assembled.used_tokens,
        digest=version.assembled.digest,
        created_at=format_utc(version.created_at),
    )
