"""Validation of a review's declared leaf extraction and of PlanExtraction requests.

A leaf fact of a review that declares its extraction is keyed by the source version it cites
(one source, one version, a known range) and the contract; the store resolves the source to
its canonical id and real project and refuses what the scope may not read.
"""

from __future__ import annotations

import hashlib

from mirrortree.v1 import leaves_pb2, tree_pb2
from tree_service.convert import Checker
from tree_service.domain import LeafExtraction, LeafKey, Part
from tree_service.leaves.domain import ExtractionPlanRequest
from tree_service.leaves.ranges import covers

SOURCE_TYPES = ("message", "task_status", "knowledge", "document")
MAX_PLAN_PARTS = 500


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _part(check: Checker, field: str, part: leaves_pb2.SourcePart) -> Part:
    if part.source_type not in SOURCE_TYPES:
        check.fail(f"{field}.source_type", f"must be one of {', '.join(SOURCE_TYPES)}")
    check.identifier(f"{field}.source_id", part.source_id)
    check.identifier(f"{field}.source_version", part.source_version)
    start, end = part.range.start, part.range.end
    if start < 0 or end < start:
        check.fail(f"{field}.range", f"[{start}, {end}) must have 0 <= start <= end")
    whole = start == end == 0
    if start == end and not whole:
        check.fail(f"{field}.range", "is empty: leave it unset for the whole version")
    return Part(
        field, part.source_type, part.source_id, part.source_version, start, None if whole else end
    )


def _contract(check: Checker, field: str, value: str) -> str:
    check.identifier(field, value)
    return value


def review_extraction(
    check: Checker, request: tree_pb2.RecordReviewRequest
) -> LeafExtraction | None:
    """The review's declared extraction with every leaf fact's key; None when the review
    declares none (its leaves are then stored in its scope only, as before G9)."""
    if not request.HasField("leaf_extraction"):
        return None
    spec = request.leaf_extraction
    contract = _contract(check, "leaf_extraction.contract_version", spec.contract_version)
    parts = tuple(_part(check, f"leaf_extraction.parts[{i}]", p) for i, p in enumerate(spec.parts))
    if not parts:
        check.fail(
            "leaf_extraction.parts",
            "needs at least one part: the source versions (and ranges) the review extracted",
        )
    refs = {ref.id: ref for ref in request.source_references}
    leaves = []
    for i, leaf in enumerate(request.leaf_facts):
        field = f"leaf_facts[{i}].source_reference_ids"
        cited = [refs[r] for r in leaf.source_reference_ids if r in refs]
        if not cited:
            continue  # refused by the review's own checks
        sources = {(r.source_type, r.source_id, r.source_version) for r in cited}
        unknown = [r.id for r in cited if r.fragment_end <= r.fragment_start]
        if len(sources) != 1 or not all(all(s) for s in sources) or unknown:
            check.fail(
                field,
                "a leaf of a declared extraction cites fragments of one source version, each "
                "naming its source_id and source_version with a known range [start, end)"
                + (f" ({', '.join(unknown)} has no range)" if unknown else ""),
            )
            continue
        source = sources.pop()
        start = min(r.fragment_start for r in cited)
        end = max(r.fragment_end for r in cited)
        inside = [p for p in parts if p.source == source]
        whole = any(p.end is None for p in inside)
        if not whole and not covers([(p.start, p.end or 0) for p in inside], (start, end)):
            check.fail(
                field,
                f"cites [{start}, {end}) of {source[0]} {source[1]} version {source[2]}, "
                "which no part of leaf_extraction.parts covers",
            )
            continue
        leaves.append(
            LeafKey(
                f"leaf_facts[{i}]", leaf.id, *source, start, end, leaf.text, text_hash(leaf.text)
            )
        )
    return LeafExtraction(contract, spec.reanalysis, parts, tuple(leaves))


def plan_request(request: leaves_pb2.PlanExtractionRequest) -> ExtractionPlanRequest:
    check = Checker()
    scope = check.scope("scope", request.scope, required=True)
    contract = _contract(check, "contract_version", request.contract_version)
    if not request.parts:
        check.fail("parts", "needs at least one source part")
    elif len(request.parts) > MAX_PLAN_PARTS:
        check.fail("parts", f"has {len(request.parts)} parts; at most {MAX_PLAN_PARTS}")
    parts = tuple(_part(check, f"parts[{i}]", p) for i, p in enumerate(request.parts))
    check.done()
    assert scope is not None
    return ExtractionPlanRequest(scope, contract, parts)
