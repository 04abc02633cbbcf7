"""Proto ↔ read-model conversion for the graph service, with input validation at the edge."""

from __future__ import annotations

import functools
import re
from datetime import datetime

from google.protobuf import unknown_fields
from google.protobuf.message import Message

from graph_service.errors import InvalidInput
from graph_service.queries.scope_state import GAPS_LISTED
from graph_service.views import (
    COUNT_BUDGET_MS,
    COUNT_CAP,
    PREFERENCE_LABEL,
    ContextEntry,
    ContextRead,
    CoverageView,
    CoveredResult,
    MatchCounts,
    PreferenceRow,
    ResolvedScope,
    SearchPage,
    SearchRow,
    TimeFilter,
    ValidityView,
)
from mirrortree.protoscope import scope_to_proto, time_range
from mirrortree.scopes import ScopeValue
from mirrortree.timefmt import format_utc
from mirrortree.v1 import common_pb2, graph_pb2
from mirrortree.validation import FieldChecker
from mirrortree.violations import FieldViolation
from mirrortree.vocabulary import CONFIRMATION_VALUES, PRECISION_VALUES

MAX_QUERY = 500
DEFAULT_PAGE = 10
MAX_PAGE = 50
EXCERPT_BEFORE = 80
EXCERPT_LENGTH = 240
UNCOUNTED = (
    f"not counted: more than {COUNT_CAP:,} matches, or too many to count within "
    f"{COUNT_BUDGET_MS} ms; page through them or narrow the query"
)
# Field numbers reserved for `as_of` in every request (see graph.proto).
AS_OF_FIELD = 100

OBJECT_TYPES = {
    common_pb2.STORY_LINE: "story_line",
    common_pb2.EVENT: "event",
    common_pb2.ENTITY: "entity",
    common_pb2.ENTITY_CHANGE: "entity_change",
    common_pb2.RELATION: "relation",
    common_pb2.SUMMARY: "summary",
    common_pb2.SOURCE_REFERENCE: "source_reference",
    common_pb2.LEAF_FACT: "leaf_fact",
}
# Preferences are read as background (get_context, a search's `background`), never searched
# as graph objects.
OBJECT_TYPE_TO_PROTO = {v: k for k, v in OBJECT_TYPES.items()} | {
    "preference": common_pb2.PREFERENCE
}
TIME_BASES = {
    common_pb2.TIME_BASIS_UNSPECIFIED: "event_time",
    common_pb2.EVENT_TIME: "event_time",
    common_pb2.REVIEW_GENERATED_AT: "review_generated_at",
    common_pb2.RECORDED_AT: "recorded_at",
}
TIME_BASIS_TO_PROTO = {
    "event_time": common_pb2.EVENT_TIME,
    "review_generated_at": common_pb2.REVIEW_GENERATED_AT,
    "recorded_at": common_pb2.RECORDED_AT,
}


def reject_unknown_fields(request: Message) -> None:
    """Refuse fields this service does not know instead of silently ignoring them.

    `as_of` (field 100, reserved) gets its own machine code: reading the graph as it was at a
    past moment needs history reconstruction, which is not offered, and a silent fallback to
    `current` would answer a different question.
    """
    fields = unknown_fields.UnknownFieldSet(request)
    numbers = sorted({fields[i].field_number for i in range(len(fields))})
    if AS_OF_FIELD in numbers:
        raise InvalidInput.one(
            "as_of",
            "is not supported: only current and timeline reads exist; drop as_of",
            reason="as_of_unsupported",
        )
    if numbers:
        raise InvalidInput.one(
            "request", f"has fields this service does not know (numbers {numbers})"
        )


class Checker(FieldChecker):
    """Field checks of the graph service; fails with InvalidInput."""

    def error(self, violations: list[FieldViolation]) -> Exception:
        return InvalidInput(violations)


def time_filter(check: Checker, value: common_pb2.TimeRange, basis: int) -> TimeFilter:
    start = check.time("time_range.from", getattr(value, "from"))
    end = check.time("time_range.to", value.to)
    if start and end and end < start:
        check.fail("time_range.to", "is before time_range.from")
    if basis not in TIME_BASES:
        check.fail("time_basis", f"unknown time basis {basis}")
    return TimeFilter(start, end, TIME_BASES.get(basis, "event_time"))  # type: ignore[call-overload]


def search_query(check: Checker, value: str) -> str:
    return check.text("query", value, MAX_QUERY)


def object_types(check: Checker, values: list[int]) -> list[str]:
    if not values:
        return list(OBJECT_TYPES.values())
    names = []
    for i, value in enumerate(values):
        name = OBJECT_TYPES.get(value)  # type: ignore[call-overload]
        if value == common_pb2.PREFERENCE:
            check.fail(
                f"object_types[{i}]",
                "preferences are not a graph object type: a search lists those whose text "
                "matches in `background`, and get_context reads them",
            )
        elif name is None:
            check.fail(f"object_types[{i}]", f"unknown object type {value}")
        else:
            names.append(name)
    return sorted(set(names))


# Content pages of ReadSource and of get_context's items, in code points.
DEFAULT_CONTENT_PAGE = 4_000
MAX_CONTENT_PAGE = 8_000


# ---- read models → responses ------------------------------------------------------------


def public_fields(object_type: str) -> tuple[str, str]:
    """The names a caller knows for an object's stored title and body columns."""
    title = {"entity": "label"}.get(object_type, "title")
    body = {
        "summary": "text",
        "source_reference": "fragment",
        "leaf_fact": "text",
        "relation": "reason",
    }.get(object_type, "description")
    return title, body


def excerpt(row: SearchRow, query: str) -> graph_pb2.Excerpt:
    """A hit's excerpt (field_excerpt) of its title and body, by the names callers know."""
    title_name, body_name = public_fields(row.object_type)
    return field_excerpt((title_name, row.title), (body_name, row.body), query)


def field_excerpt(title: tuple[str, str], body: tuple[str, str], query: str) -> graph_pb2.Excerpt:
    """A window around the first match: in the longer text (body) when it matches (more
    context), else in the title; each given as (field name, text); offsets are code points
    within that field."""
    (title_name, title_text), (body_name, body_text) = title, body
    needle = re.compile(re.escape(query), re.IGNORECASE)
    match = needle.search(body_text) if body_text else None
    name, text = (body_name, body_text) if match else (title_name, title_text)
    if not match:
        match = needle.search(title_text)
    at = match.start() if match else 0
    start = max(0, at - EXCERPT_BEFORE)
    end = min(len(text), start + EXCERPT_LENGTH)
    return graph_pb2.Excerpt(
        text=text[start:end],
        field=name,
        start=start,
        end=end,
        field_length=len(text),
        is_excerpt=True,
    )


def matched_fields(row: SearchRow, query: str) -> list[str]:
    needle = re.compile(re.escape(query), re.IGNORECASE)
    title_name, body_name = public_fields(row.object_type)
    fields = []
    if needle.search(row.title):
        fields.append(title_name)
    if needle.search(row.body):
        fields.append(body_name)
    return fields


VALIDITY_VALUES = {
    "unknown": common_pb2.VALIDITY_UNKNOWN,
    "current": common_pb2.VALIDITY_CURRENT,
    "superseded": common_pb2.VALIDITY_SUPERSEDED,
    "disputed": common_pb2.VALIDITY_DISPUTED,
}


# The fields of a context read's items are set in place: a hub's first page builds fifty
# items, and building each part as a message of its own, then copying it in, cost a third more.
def set_validity(message: common_pb2.Validity, view: ValidityView) -> None:
    """Validity is only ever established by evidenced `replaces`/`contradicts` relations (their
    ids are the basis); without one it is unknown — never derived from confirmation, review or
    record times."""
    message.state = VALIDITY_VALUES[view.state]
    if view.valid_from is not None:
        setattr(message, "from", format_utc(view.valid_from))
    if view.valid_to is not None:
        message.to = format_utc(view.valid_to)
    if view.basis:
        message.basis = ",".join(view.basis)


def set_event_time(message: common_pb2.EventTime, row: SearchRow) -> None:
    if row.event_time_start is not None:
        message.start = format_utc(row.event_time_start)
        message.known = True
    if row.event_time_end is not None:
        message.end = format_utc(row.event_time_end)
    message.precision = PRECISION_VALUES.get(row.event_time_precision or "", 0)  # type: ignore[assignment]
    if row.event_time_basis:
        message.basis = row.event_time_basis


def set_time_facts(message: common_pb2.TimeFacts, row: SearchRow, view: ValidityView) -> None:
    """A stored copy's time facts, with the validity `view` (the copy's own, or as computed
    for the read that shows it)."""
    set_event_time(message.event_time, row)
    message.review_generated_at = format_utc(row.review_generated_at)
    message.recorded_at = format_utc(row.recorded_at)
    set_validity(message.validity, view)
    message.confirmation_state = CONFIRMATION_VALUES.get(row.confirmation_state or "", 0)  # type: ignore[assignment]


def time_facts(row: SearchRow) -> common_pb2.TimeFacts:
    message = common_pb2.TimeFacts()
    set_time_facts(message, row, row.validity)
    return message


def revision(value: str | None, why: str) -> common_pb2.Revision:
    message = common_pb2.Revision()
    set_revision(message, value, why)
    return message


def set_revision(message: common_pb2.Revision, value: str | None, why: str) -> None:
    if value:
        message.known = value
    else:
        message.unknown.reason = why


def count(value: int | None, why: str) -> common_pb2.Count:
    if value is None:
        return common_pb2.Count(unknown=common_pb2.Unknown(reason=why))
    return common_pb2.Count(exact=value)


def locator(data: dict[str, object]) -> common_pb2.SourceLocator:
    return common_pb2.SourceLocator(
        project_id=str(data.get("project_id", "")),
        session_id=str(data.get("session_id", "")),
        message_id=str(data.get("message_id", "")),
        order=int(data.get("order", 0) or 0),  # type: ignore[call-overload]
        role=str(data.get("role", "")),
        known=bool(data.get("known", False)),
        document_id=str(data.get("document_id", "")),
        chunk_id=str(data.get("chunk_id", "")),
        chunk_start=int(data.get("chunk_start", 0) or 0),  # type: ignore[call-overload]
        chunk_end=int(data.get("chunk_end", 0) or 0),  # type: ignore[call-overload]
        external=str(data.get("external", "")),
    )


def related_refs(row: SearchRow) -> list[common_pb2.ObjectRef]:
    refs = []
    for key, type_name in (("event_ids", "event"), ("entity_ids", "entity")):
        for object_id in row.details.get(key, []):
            refs.append(
                common_pb2.ObjectRef(type=OBJECT_TYPE_TO_PROTO[type_name], id=str(object_id))
            )
    for key, type_name in (("entity_id", "entity"), ("event_id", "event")):
        if row.details.get(key):
            refs.append(
                common_pb2.ObjectRef(type=OBJECT_TYPE_TO_PROTO[type_name], id=str(row.details[key]))
            )
    ends = (
        [row.details.get("from"), row.details.get("to")] if "relation_kind" in row.details else []
    )
    for ref in [*row.details.get("fact_refs", []), *row.details.get("about", []), *ends]:
        proto_type = OBJECT_TYPE_TO_PROTO.get((ref or {}).get("type", ""))
        if proto_type is not None:
            refs.append(common_pb2.ObjectRef(type=proto_type, id=str(ref.get("id", ""))))
    return refs


# How many sources and related refs one hit or item carries: an object may cite or link
# thousands (a story line of every event), and a page of one must still fit the response.
REFS_SHOWN = 20


def source_entries(row: SearchRow) -> list[graph_pb2.SourceEntry]:
    return [
        graph_pb2.SourceEntry(
            source_reference_id=s.source_reference_id,
            source_type=str(s.details.get("source_type", "")),
            source_id=str(s.details.get("source_id", "")),
            source_version=str(s.details.get("source_version", "")),
            locator=locator(s.details.get("locator", {})),
        )
        for s in row.sources[:REFS_SHOWN]
    ]


@functools.lru_cache(maxsize=1024)
def _scope_message(scope_key: str) -> common_pb2.Scope:
    """The Scope message of a stored scope key; copied into each hit and item, never changed."""
    return scope_to_proto(ScopeValue.from_key(scope_key))


def search_hit(row: SearchRow, query: str) -> graph_pb2.SearchHit:
    fields = matched_fields(row, query)
    related = related_refs(row)
    return graph_pb2.SearchHit(
        ref=common_pb2.ObjectRef(type=OBJECT_TYPE_TO_PROTO[row.object_type], id=row.object_id),
        result_id=row.result_id,
        scope=_scope_message(row.scope_key),
        title=row.title,
        kind=row.kind or "",
        matched_fields=fields,
        match_reason=f"case-insensitive substring {query!r} found in {', '.join(fields)}",
        excerpt=excerpt(row, query),
        object_revision=revision(
            row.object_revision, "this result did not record a content revision"
        ),
        time=time_facts(row),
        sources=source_entries(row),
        related=related[:REFS_SHOWN],
        score=row.score,
        sources_omitted=max(len(row.sources) - REFS_SHOWN, 0),
        related_omitted=max(len(related) - REFS_SHOWN, 0),
    )


def background_hit(pref: PreferenceRow, query: str) -> graph_pb2.BackgroundHit:
    """A confirmed preference a search matched, labelled as background."""
    return graph_pb2.BackgroundHit(
        ref=common_pb2.ObjectRef(type=common_pb2.PREFERENCE, id=pref.preference_id),
        scope=_scope_message(pref.scope_key),
        subject=pref.subject,
        excerpt=field_excerpt(("subject", pref.subject), ("text", pref.text), query),
        label=PREFERENCE_LABEL,
        revision=pref.revision,
        updated_at=format_utc(pref.updated_at),
        confirmed_by=pref.confirmed_by,
    )


COVERAGE_BASIS_TO_PROTO = {
    "interval": common_pb2.COVERAGE_INTERVAL,
    "counts": common_pb2.COVERAGE_COUNTS,
    "unknown": common_pb2.COVERAGE_UNKNOWN,
}
COUNTS_ONLY = "the result reported only counts, which imply no time, version or semantic coverage"
NOTHING_KNOWN = "the result did not say what it processed"
NO_INTERVAL = "the result gave no covered interval"


def covered_interval(r: CoveredResult) -> graph_pb2.CoveredInterval:
    """One result's claim: its interval, or unknown (counts alone never imply one, and a result
    that gave no interval at all covered an unknown period, never an unbounded one)."""
    bounded = r.covered_from is not None or r.covered_to is not None
    basis = r.basis if r.basis != "interval" or bounded else "unknown"
    message = graph_pb2.CoveredInterval(
        result_id=r.result_id,
        phase=r.phase,
        review_generated_at=format_utc(r.review_generated_at),
        basis=COVERAGE_BASIS_TO_PROTO[basis],
        counts=[common_pb2.CoverageCount(what=w, count=n) for w, n in r.counts],
    )
    if basis == "interval":
        message.covered.CopyFrom(time_range(format_utc(r.covered_from), format_utc(r.covered_to)))
    elif r.basis == "interval":
        message.covered_unknown.reason = NO_INTERVAL
    else:
        message.covered_unknown.reason = COUNTS_ONLY if r.basis == "counts" else NOTHING_KNOWN
    return message


def coverage(view: CoverageView, counts: MatchCounts | None = None) -> graph_pb2.Coverage:
    message = graph_pb2.Coverage(
        state=graph_pb2.Coverage.PARTIAL if view.results_in_scope else graph_pb2.Coverage.UNKNOWN,
        results_in_scope=count(view.results_in_scope, ""),
        processed=[covered_interval(r) for r in view.processed],
        excluded_source_types=view.excluded_source_types,
        results_not_listed=view.results_in_scope - len(view.processed),
    )
    if not view.results_in_scope:
        message.gaps.append("no review result exists in this scope; nothing is known to be covered")
    message.gaps.extend(view.gaps[:GAPS_LISTED])
    if len(view.gaps) > GAPS_LISTED:
        message.gaps.append(
            f"older results report more gaps than the {GAPS_LISTED} newest listed here"
        )
    if counts is not None:
        # Only an event-time filter can exclude objects for an unknown time (review and record
        # times are always known), so without one the exact count is zero.
        excluded = counts.unknown_time_excluded if counts.event_time_filtered else 0
        message.unknown_time_excluded.CopyFrom(count(excluded, UNCOUNTED))
    return message


def basis(
    scope: ResolvedScope, tf: TimeFilter, read_revision: int, read_at: datetime | None
) -> graph_pb2.ResponseBasis:
    return graph_pb2.ResponseBasis(
        scope=graph_pb2.ResolvedScope(
            requested=scope_to_proto(scope.requested),
            resolved=scope_to_proto(scope.resolved),
            resolution=scope.resolution,
        ),
        time_range=time_range(format_utc(tf.start), format_utc(tf.end)),
        time_basis=TIME_BASIS_TO_PROTO[tf.basis],
        read_at=format_utc(read_at),
        read_revision=read_revision,
    )


def search_response(
    page: SearchPage, query: str, tf: TimeFilter, next_cursor: str
) -> graph_pb2.SearchResponse:
    return graph_pb2.SearchResponse(
        hits=[search_hit(row, query) for row in page.rows],
        page=common_pb2.PageInfo(
            returned_count=len(page.rows),
            has_more=page.has_more,
            next_cursor=next_cursor,
            complete=not page.has_more,
            limit_reason="page_size" if page.has_more else "",
            total=count(page.counts.total, UNCOUNTED),
        ),
        coverage=coverage(page.coverage, page.counts),
        basis=basis(page.scope, tf, page.read_revision, page.read_at),
        background=[background_hit(pref, query) for pref in page.background],
    )


# ---- get_context ------------------------------------------------------------------------

CONTEXT_MODES = {
    graph_pb2.CONTEXT_MODE_UNSPECIFIED: "current",
    graph_pb2.CURRENT: "current",
    graph_pb2.TIMELINE: "timeline",
}
CONTEXT_MODE_TO_PROTO = {"current": graph_pb2.CURRENT, "timeline": graph_pb2.TIMELINE}
MAX_RESPONSE_BYTES = 100_000


def object_ref(check: Checker, ref: common_pb2.ObjectRef) -> tuple[str, str]:
    name = OBJECT_TYPES.get(ref.type)
    if ref.type == common_pb2.PREFERENCE:
        name = "preference"
    if name is None:
        check.fail("object_ref.type", "is required: the type of the object to read")
    check.identifier("object_ref.id", ref.id)
    return name or "", ref.id


def context_mode(check: Checker, value: int) -> str:
    mode: str | None = CONTEXT_MODES.get(value)  # type: ignore[call-overload]
    if mode is None:
        check.fail("mode", f"unknown mode {value}: current or timeline")
    return mode or "current"


def content_page_size(check: Checker, value: int) -> int:
    if not 0 <= value <= MAX_CONTENT_PAGE:
        check.fail(
            "content_page_size",
            f"must be between 1 and {MAX_CONTENT_PAGE} code points (0 = {DEFAULT_CONTENT_PAGE})",
        )
    return value or DEFAULT_CONTENT_PAGE


def context_item(
    entry: ContextEntry, start: int, size: int, next_cursor: str
) -> graph_pb2.ContextItem:
    """One item with one fragment of its JSON content, `[start, start + size)` code points."""
    end = min(len(entry.content), start + size)
    item = graph_pb2.ContextItem(result_id=entry.result_id, label=entry.label, kind=entry.kind)
    item.ref.type = OBJECT_TYPE_TO_PROTO[entry.ref_type]
    item.ref.id = entry.ref_id
    item.scope.CopyFrom(_scope_message(entry.scope_key))
    content = item.content
    content.part = entry.label
    content.start = start
    content.end = end
    content.total_length = len(entry.content)
    content.text = entry.content[start:end]
    content.next_cursor = next_cursor
    row = entry.row
    if row is not None and entry.result_id:
        set_revision(
            item.object_revision,
            row.object_revision,
            "this result did not record a content revision",
        )
        set_time_facts(item.time, row, entry.validity)
        item.sources.extend(source_entries(row))
        item.sources_omitted = max(len(row.sources) - REFS_SHOWN, 0)
        return item
    if entry.revision is not None:  # a preference: its own revision and real update time
        set_revision(item.object_revision, entry.revision, "")
        item.time.event_time.known = False
        item.time.recorded_at = format_utc(entry.recorded_at)
        item.time.confirmation_state = common_pb2.CONFIRMED
    else:  # the computed projection: its revision is the read revision, not an object's
        set_revision(
            item.object_revision, None, "a computed projection: it is as of the read revision"
        )
        if row is not None:
            set_event_time(item.time.event_time, row)
    set_validity(item.time.validity, entry.validity)
    return item


def context_response(
    read: ContextRead,
    scope: ResolvedScope,
    mode: str,
    tf: TimeFilter,
    collections: list[graph_pb2.ContextCollection],
) -> graph_pb2.GetContextResponse:
    note = "stored facts and their organisation; no new advice is generated"
    if tf.active:
        note = (
            "within the selected evidence range only: this is not the state at the end of the "
            "range; " + note
        )
    return graph_pb2.GetContextResponse(
        object_ref=common_pb2.ObjectRef(
            type=OBJECT_TYPE_TO_PROTO[read.object_type], id=read.object_id
        ),
        mode=CONTEXT_MODE_TO_PROTO[mode],
        collections=collections,
        evidence_note=note,
        coverage=coverage(
            read.coverage, MatchCounts(None, read.unknown_time_excluded, read.event_time_filtered)
        ),
        basis=basis(scope, tf, read.read_revision, read.read_at),
        history_gaps=list(read.history_gaps),
        object_scope=scope_to_proto(scope.resolved),
    )
