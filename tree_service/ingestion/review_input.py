"""Validation of review results, into the objects and links the story graph stores (sources
and preferences: tree_service.ingestion.source_input).

Every violation is collected with its dotted field path (`relations[2].source_reference_ids`)
before anything is written. What this module cannot decide alone — whether an end that is not
in this result exists in an earlier result of the same scope — is handed to the store as
`external_references`, which refuses the whole result when one is missing.
"""

from __future__ import annotations

from datetime import datetime

from mirrortree.v1 import common_pb2, tree_pb2
from mirrortree.validation import shown
from tree_service import canon_projection
from tree_service.convert import Checker
from tree_service.domain import (
    MAX_GRAPH_OBJECTS,
    MAX_GRAPH_TEXT,
    EventTimeValue,
    ObjectType,
    ReviewResult,
    StoryObject,
)
from tree_service.ingestion.review_builder import (
    PREFERENCE,
    RESERVED_PREFIX,
    ReviewBuilder,
    cites,
    confirmation,
    event_time,
    type_name,
)
from tree_service.leaves.input import review_extraction

# type_name and PREFERENCE are read through this module too (source_input, drift tests).
__all__ = [
    "COVERAGE_BASES",
    "EVENT_KINDS",
    "EVIDENCED_RELATIONS",
    "PREFERENCE",
    "RELATION_KINDS",
    "review_result",
    "type_name",
]

MAX_REASON = 4_000
MAX_GAP = 2_000

EVENT_KINDS = {
    tree_pb2.DECISION: "decision",
    tree_pb2.DISCUSSION: "discussion",
    tree_pb2.CHANGE: "change",
    tree_pb2.MILESTONE: "milestone",
}
RELATION_KINDS = {
    tree_pb2.REVISED: "revised",
    tree_pb2.CONTRASTS: "contrasts",
    tree_pb2.REPLACES: "replaces",
    tree_pb2.CONTRADICTS: "contradicts",
}
# How a result's coverage is known; unset means the `covered` interval, as before the basis
# existed.
COVERAGE_BASES = {
    common_pb2.COVERAGE_BASIS_UNSPECIFIED: "interval",
    common_pb2.COVERAGE_INTERVAL: "interval",
    common_pb2.COVERAGE_COUNTS: "counts",
    common_pb2.COVERAGE_UNKNOWN: "unknown",
}
# Relations that change what is valid; they must be able to show why.
EVIDENCED_RELATIONS = ("replaces", "contradicts")


def _source_references(b: ReviewBuilder, request: tree_pb2.RecordReviewRequest) -> None:
    check = b.check
    for i, ref in enumerate(request.source_references):
        field = f"source_references[{i}]"
        check.identifier(f"{field}.source_type", ref.source_type)
        check.identifier(f"{field}.source_id", ref.source_id, required=False)
        check.identifier(f"{field}.source_version", ref.source_version, required=False)
        _locator(check, f"{field}.locator", ref.locator)
        if ref.fragment_end < ref.fragment_start or ref.fragment_start < 0:
            check.fail(f"{field}.fragment_end", "must be >= fragment_start >= 0")
        elif ref.fragment_end and ref.fragment_end - ref.fragment_start != len(ref.fragment):
            # [0, 0) means the position in the whole source is not known; any other range
            # must be exactly the saved fragment.
            check.fail(
                f"{field}.fragment_end",
                f"the range [{ref.fragment_start}, {ref.fragment_end}) is "
                f"{ref.fragment_end - ref.fragment_start} code points but the fragment has "
                f"{len(ref.fragment)}",
            )
        b.add(
            field,
            StoryObject(
                ObjectType.SOURCE_REFERENCE,
                ref.id,
                title=f"{ref.source_type} {ref.source_id}".strip(),
                body=ref.fragment,
                object_revision=ref.source_version or None,
                details={
                    "source_type": ref.source_type,
                    "source_id": ref.source_id,
                    "source_version": ref.source_version,
                    "fragment_start": ref.fragment_start,
                    "fragment_end": ref.fragment_end,
                    "locator": _locator_json(ref.locator),
                },
            ),
            body="fragment",
        )


MESSAGE_PLACE = ("session_id", "message_id", "order", "role")
DOCUMENT_PLACE = ("document_id", "chunk_id", "chunk_start", "chunk_end")
MAX_EXTERNAL_LOCATOR = 2_000


def _locator(check: Checker, field: str, locator: common_pb2.SourceLocator) -> None:
    """A locator names one place — a message, a document's chunk or an external locator — as
    the reviewer found it; a reference without one says so (`known` false) and names none."""
    for name in ("project_id", "session_id", "message_id", "role", "document_id", "chunk_id"):
        check.identifier(f"{field}.{name}", getattr(locator, name), required=False)
    check.text(f"{field}.external", locator.external, MAX_EXTERNAL_LOCATOR, required=False)
    if locator.chunk_end < locator.chunk_start or locator.chunk_start < 0:
        check.fail(f"{field}.chunk_end", "must be >= chunk_start >= 0")
    places = [
        name
        for name, given in (
            ("message", any(getattr(locator, n) for n in MESSAGE_PLACE)),
            ("document", any(getattr(locator, n) for n in DOCUMENT_PLACE)),
            ("external", bool(locator.external)),
        )
        if given
    ]
    if len(places) > 1:
        check.fail(field, f"names {' and '.join(places)} places; a locator names one")
    if places and not locator.known:
        check.fail(
            f"{field}.known",
            f"must be true when a {places[0]} place is given (false: the location is unknown)",
        )
    if (locator.chunk_id or locator.chunk_end) and not locator.document_id:
        check.fail(f"{field}.document_id", "is required with a chunk: the document it is of")


def _locator_json(locator: common_pb2.SourceLocator) -> dict[str, object]:
    """A locator as stored: the message place always (as stored before), other places only
    when given."""
    stored: dict[str, object] = {
        "project_id": locator.project_id,
        "session_id": locator.session_id,
        "message_id": locator.message_id,
        "order": locator.order,
        "role": locator.role,
        "known": locator.known,
    }
    for name in ("document_id", "chunk_id", "chunk_start", "chunk_end", "external"):
        if getattr(locator, name):
            stored[name] = getattr(locator, name)
    return stored


def _story_lines_events_entities(b: ReviewBuilder, request: tree_pb2.RecordReviewRequest) -> None:
    check = b.check
    for i, line in enumerate(request.story_lines):
        field = f"story_lines[{i}]"
        for name, linked_type in (("event_ids", "event"), ("entity_ids", "entity")):
            for j, linked in enumerate(getattr(line, name)):
                b.by_id(f"{field}.{name}[{j}]", linked_type, linked)
        b.add(
            field,
            StoryObject(
                ObjectType.STORY_LINE,
                line.id,
                title=line.title,
                body="",
                details={"event_ids": list(line.event_ids), "entity_ids": list(line.entity_ids)},
                links=(
                    *(("contains", "event", e) for e in line.event_ids),
                    *(("contains", "entity", e) for e in line.entity_ids),
                ),
            ),
            title="title",
        )
    for i, event in enumerate(request.events):
        field = f"events[{i}]"
        for j, linked in enumerate(event.entity_ids):
            b.by_id(f"{field}.entity_ids[{j}]", "entity", linked)
        if event.kind not in EVENT_KINDS:
            check.fail(f"{field}.kind", "is required: decision, discussion, change or milestone")
        cited = b.sources(f"{field}.source_reference_ids", event.source_reference_ids)
        b.add(
            field,
            StoryObject(
                ObjectType.EVENT,
                event.id,
                title=event.title,
                body=event.description,
                kind=EVENT_KINDS.get(event.kind),
                confirmation_state=confirmation(
                    check, f"{field}.confirmation_state", event.confirmation_state
                ),
                event_time=event_time(check, f"{field}.event_time", event.event_time),
                details={"entity_ids": list(event.entity_ids), "source_reference_ids": cited},
                links=(*(("involves", "entity", e) for e in event.entity_ids), *cites(cited)),
            ),
            title="title",
            body="description",
        )
    for i, entity in enumerate(request.entities):
        field = f"entities[{i}]"
        check.identifier(f"{field}.revision", entity.revision, required=False)
        cited = b.sources(f"{field}.source_reference_ids", entity.source_reference_ids)
        b.add(
            field,
            StoryObject(
                ObjectType.ENTITY,
                entity.id,
                title=entity.label,
                body=entity.description,
                object_revision=entity.revision or None,
                confirmation_state=confirmation(
                    check, f"{field}.confirmation_state", entity.confirmation_state
                ),
                details={"source_reference_ids": cited},
                links=tuple(cites(cited)),
            ),
            title="label",
            body="description",
        )


def _entity_changes(b: ReviewBuilder, request: tree_pb2.RecordReviewRequest) -> None:
    check = b.check
    for i, change in enumerate(request.entity_changes):
        field = f"entity_changes[{i}]"
        b.by_id(f"{field}.entity_id", "entity", change.entity_id)
        links: list[tuple[str, str, str]] = [("changes", "entity", change.entity_id)]
        if change.event_id:
            b.by_id(f"{field}.event_id", "event", change.event_id)
            links.append(("during", "event", change.event_id))
        check.identifier(f"{field}.change_type", change.change_type)
        check.identifier(f"{field}.entity_revision", change.entity_revision, required=False)
        cited = b.sources(f"{field}.source_reference_ids", change.source_reference_ids)
        b.add(
            field,
            StoryObject(
                ObjectType.ENTITY_CHANGE,
                change.id,
                title=f"{change.change_type} {change.entity_id}",
                body=change.description,
                kind=change.change_type,
                object_revision=change.entity_revision or None,
                confirmation_state=confirmation(
                    check, f"{field}.confirmation_state", change.confirmation_state
                ),
                event_time=event_time(check, f"{field}.applies_at", change.applies_at),
                details={
                    "entity_id": change.entity_id,
                    "event_id": change.event_id,
                    "change_type": change.change_type,
                    "entity_revision": change.entity_revision,
                    "source_reference_ids": cited,
                },
                links=(*links, *cites(cited)),
            ),
            body="description",
        )


def _evidence(b: ReviewBuilder, field: str, kind: str, cited: list[str]) -> None:
    """The evidence of a relation that changes validity must show something: each reference
    names the source it was read from and keeps the fragment that says so. A bare source type
    with an empty fragment would mark a claim superseded on nothing a reader can check."""
    for j, ref_id in enumerate(cited):
        if ref_id not in b.source_inputs:
            continue  # already refused as not in this result
        index, ref = b.source_inputs[ref_id]
        lacks = [
            what
            for what, missing in (
                ("no source_id", not ref.source_id),
                ("an empty fragment", not ref.fragment.strip()),
            )
            if missing
        ]
        if lacks:
            b.check.fail(
                f"{field}[{j}]",
                f"evidence of a {kind} relation must name its source and quote it, but "
                f"source reference {shown(ref_id)} (source_references[{index}]) has "
                f"{' and '.join(lacks)} (without such evidence, record `contrasts` or "
                "`revised` instead)",
            )


def _relations(b: ReviewBuilder, request: tree_pb2.RecordReviewRequest) -> None:
    """Relations: `revised` and `contrasts` are kept as given; `replaces` and `contradicts`
    change validity, so they need both ends, a direction, a reason and evidence."""
    check = b.check
    for i, relation in enumerate(request.relations):
        field = f"relations[{i}]"
        kind = RELATION_KINDS.get(relation.kind)
        if kind is None:
            check.fail(f"{field}.kind", "is required: revised, contrasts, replaces or contradicts")
        new_end = getattr(relation, "from")
        ends: dict[str, dict[str, str] | None] = {}
        for name, ref in (("from", new_end), ("to", relation.to)):
            if not relation.HasField(name):
                check.fail(f"{field}.{name}", "is required: both ends of a relation")
                ends[name] = None
            else:
                ends[name] = b.reference(
                    f"{field}.{name}", ref, allow_preference=name == "to" and kind == "contradicts"
                )
        if ends["from"] is not None and ends["from"] == ends["to"]:
            check.fail(f"{field}.to", "is the same object as `from`")
        check.identifier(f"{field}.from_revision", relation.from_revision, required=False)
        check.identifier(f"{field}.to_revision", relation.to_revision, required=False)
        check.text(f"{field}.reason", relation.reason, MAX_REASON, required=False)
        cited = b.sources(f"{field}.source_reference_ids", relation.source_reference_ids)
        if kind in EVIDENCED_RELATIONS:
            if not any(ch.isalnum() for ch in relation.reason):
                check.fail(
                    f"{field}.reason",
                    f"is required: a {kind} relation must say why, in words",
                )
            if not cited:
                check.fail(
                    f"{field}.source_reference_ids",
                    f"a {kind} relation needs evidence: at least one source reference of this "
                    "result (without evidence, record `contrasts` or `revised` instead)",
                )
            _evidence(b, f"{field}.source_reference_ids", kind, cited)
        effective = check.time(f"{field}.effective_at", relation.effective_at)
        details = {
            "relation_kind": kind,
            "from": {**(ends["from"] or {}), "revision": relation.from_revision or None},
            "to": {**(ends["to"] or {}), "revision": relation.to_revision or None},
            "reason": relation.reason,
            "source_reference_ids": cited,
            "evidenced": bool(cited) and bool(relation.reason.strip()),
        }
        links = [
            (f"{kind}.{name}", end["type"], end["id"])
            for name, end in ends.items()
            if end is not None and kind is not None
        ]
        from_text = f"{ends['from']['type']} {ends['from']['id']}" if ends["from"] else "?"
        to_text = f"{ends['to']['type']} {ends['to']['id']}" if ends["to"] else "?"
        b.add(
            field,
            StoryObject(
                ObjectType.RELATION,
                relation.id,
                title=f"{from_text} {kind or 'relates to'} {to_text}",
                body=relation.reason,
                kind=kind,
                confirmation_state=confirmation(
                    check, f"{field}.confirmation_state", relation.confirmation_state
                ),
                event_time=EventTimeValue(
                    effective, None, "instant" if effective else "", "effective_at"
                )
                if effective
                else EventTimeValue(),
                details=details,
                links=(*links, *cites(cited)),
            ),
        )


def _leaf_facts(b: ReviewBuilder, request: tree_pb2.RecordReviewRequest) -> None:
    check = b.check
    for i, leaf in enumerate(request.leaf_facts):
        field = f"leaf_facts[{i}]"
        about = [b.reference(f"{field}.about[{j}]", ref) for j, ref in enumerate(leaf.about)]
        cited = b.sources(f"{field}.source_reference_ids", leaf.source_reference_ids)
        if not cited:
            check.fail(
                f"{field}.source_reference_ids",
                "a leaf fact needs the source reference it was extracted from",
            )
        check.text(f"{field}.text", leaf.text, MAX_GRAPH_TEXT)
        b.add(
            field,
            StoryObject(
                ObjectType.LEAF_FACT,
                leaf.id,
                title="",
                body=leaf.text,
                confirmation_state=confirmation(
                    check, f"{field}.confirmation_state", leaf.confirmation_state
                ),
                event_time=event_time(check, f"{field}.event_time", leaf.event_time),
                details={"about": [a for a in about if a], "source_reference_ids": cited},
                links=(
                    *(("about", a["type"], a["id"]) for a in about if a),
                    *cites(cited),
                ),
            ),
        )


def _summaries(b: ReviewBuilder, request: tree_pb2.RecordReviewRequest) -> None:
    check = b.check
    for i, summary in enumerate(request.summaries):
        field = f"summaries[{i}]"
        facts = []
        for j, fact in enumerate(summary.fact_refs):
            name = type_name(fact.type)
            if name is None or name == PREFERENCE:
                check.fail(f"{field}.fact_refs[{j}].type", f"unknown object type {fact.type}")
                continue
            b.by_id(f"{field}.fact_refs[{j}]", name, fact.id, id_field=f"{field}.fact_refs[{j}].id")
            facts.append({"type": name, "id": fact.id})
        b.add(
            field,
            StoryObject(
                ObjectType.SUMMARY,
                summary.id,
                title=summary.title,
                body=summary.text,
                details={"fact_refs": facts},
                links=tuple(("summarizes", f["type"], f["id"]) for f in facts),
            ),
            title="title",
            body="text",
        )


def review_result(request: tree_pb2.RecordReviewRequest) -> ReviewResult:
    """Validate a review result and flatten it into stored objects and links."""
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("result_id", request.result_id)
    if request.result_id.startswith(RESERVED_PREFIX):
        check.fail(
            "result_id",
            f"ids starting with {RESERVED_PREFIX!r} are reserved for the projections "
            "of confirmed main-line versions",
        )
    scope = check.scope("scope", request.scope, required=True)
    if scope is not None and any(map(canon_projection.is_reserved_project, scope.projects)):
        check.fail("scope.projects", canon_projection.RESERVED_PROJECT_ADVICE)
    check.text("phase", request.phase, 100)
    generated = check.time("review_generated_at", request.review_generated_at, required=True)
    covered_from = check.time("covered.from", getattr(request.covered, "from"))
    covered_to = check.time("covered.to", request.covered.to)
    if covered_from and covered_to and covered_to < covered_from:
        check.fail("covered.to", "is before covered.from")

    builder = ReviewBuilder(check, request)
    _source_references(builder, request)
    _story_lines_events_entities(builder, request)
    _entity_changes(builder, request)
    _relations(builder, request)
    _leaf_facts(builder, request)
    _summaries(builder, request)
    extraction = review_extraction(check, request)
    if len(builder.objects) > MAX_GRAPH_OBJECTS:
        check.fail("request", f"a result holds at most {MAX_GRAPH_OBJECTS:,} objects")
    for i, source_type in enumerate(request.excluded_source_types):
        check.identifier(f"excluded_source_types[{i}]", source_type)
    for i, gap in enumerate(request.coverage_gaps):
        check.text(f"coverage_gaps[{i}]", gap, MAX_GAP)
    basis, counts = _coverage_basis(check, request, covered_from, covered_to)
    check.done()
    assert scope is not None and generated is not None  # guaranteed by check.done()
    return ReviewResult(
        result_id=request.result_id,
        scope=scope,
        phase=request.phase,
        covered_from=covered_from,
        covered_to=covered_to,
        review_generated_at=generated,
        objects=tuple(builder.objects),
        excluded_source_types=tuple(request.excluded_source_types),
        external_references=builder.external(),
        coverage_gaps=tuple(request.coverage_gaps),
        fields=builder.fields,
        coverage_basis=basis,
        coverage_counts=counts,
        leaf_extraction=extraction,
    )


def _coverage_basis(
    check: Checker,
    request: tree_pb2.RecordReviewRequest,
    covered_from: datetime | None,
    covered_to: datetime | None,
) -> tuple[str, tuple[tuple[str, int], ...]]:
    """How the result's coverage is known, and its counts. Counts never stand in for an
    interval: a result covered by counts (or not at all) must leave `covered` empty."""
    basis = COVERAGE_BASES.get(request.coverage_basis)
    if basis is None:
        check.fail("coverage_basis", f"unknown coverage basis {request.coverage_basis}")
        return "interval", ()
    if basis != "interval" and (covered_from or covered_to):
        check.fail(
            "covered",
            f"must be empty with coverage_basis {basis}: the interval is not known",
        )
    if basis == "counts" and not request.coverage_counts:
        check.fail("coverage_counts", "needs at least one count with coverage_basis counts")
    if basis != "counts" and request.coverage_counts:
        check.fail("coverage_counts", "are only given with coverage_basis COVERAGE_COUNTS")
    seen: set[str] = set()
    for i, item in enumerate(request.coverage_counts):
        check.identifier(f"coverage_counts[{i}].what", item.what)
        if item.what in seen:
            check.fail(f"coverage_counts[{i}].what", f"{item.what!r} is counted twice")
        seen.add(item.what)
        if item.count < 0:
            check.fail(f"coverage_counts[{i}].count", "must be >= 0")
    return basis, tuple((c.what, c.count) for c in request.coverage_counts)
