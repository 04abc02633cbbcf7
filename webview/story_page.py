"""The story page of one object (its timeline in event-time order, undated evidence apart,
validity bands with the relation that set them, coverage and its gaps), and the source page
that shows a claim's saved fragment in place."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from mirrortree.v1 import common_pb2, graph_pb2
from webview.markup import Markup, el, join
from webview.reads import TYPE_NAMES
from webview.timeaxis import Axis, parse_time, track

VALIDITY = {
    common_pb2.VALIDITY_CURRENT: "current",
    common_pb2.VALIDITY_SUPERSEDED: "superseded",
    common_pb2.VALIDITY_DISPUTED: "disputed",
    common_pb2.VALIDITY_UNKNOWN: "unknown",
}

ItemKey = tuple[int, str, str, str, str, int]
Docs = dict[ItemKey, dict[str, Any]]  # item_key(item) → its content's JSON document


def item_key(item: graph_pb2.ContextItem) -> ItemKey:
    """What tells one item from another (protobuf hands out a new wrapper on every access, so
    object identity cannot)."""
    return (
        item.ref.type,
        item.ref.id,
        item.result_id,
        item.label,
        item.content.part,
        item.content.start,
    )


def type_name(ref: common_pb2.ObjectRef) -> str:
    return TYPE_NAMES.get(ref.type, "object")


def story_href(ref: common_pb2.ObjectRef) -> str:
    return f"/story/{type_name(ref)}/{ref.id}"


def source_href(reference_id: str) -> str:
    return f"/source/{reference_id}#fragment"


def collection(response: graph_pb2.GetContextResponse, name: str) -> graph_pb2.ContextCollection:
    for found in response.collections:
        if found.name == name:
            return found
    return graph_pb2.ContextCollection(name=name)


class StoryPage:
    """Renders an object's current and timeline reads."""

    def __init__(
        self,
        ref: common_pb2.ObjectRef,
        current: graph_pb2.GetContextResponse,
        timeline: graph_pb2.GetContextResponse,
        docs: Docs,
    ) -> None:
        self.ref = ref
        self.current = current
        self.timeline = timeline
        self.docs = docs
        self.relation_kinds: dict[str, str] = {}
        for response in (current, timeline):
            for c in response.collections:
                for item in c.items:
                    if item.ref.type == common_pb2.RELATION:
                        self.relation_kinds[item.ref.id] = item.kind
        self.projection = next(iter(collection(current, "current").items), None)

    def doc(self, item: graph_pb2.ContextItem) -> dict[str, Any]:
        return self.docs.get(item_key(item), {})

    def title(self) -> str:
        if self.projection is not None:
            description = self.doc(self.projection).get("description") or {}
            if isinstance(description, dict) and description.get("title"):
                return str(description["title"])
        for c in self.timeline.collections:
            for item in c.items:
                if item.ref == self.ref:
                    found = self.doc(item)
                    return str(found.get("title") or found.get("label") or self.ref.id)
        return self.ref.id

    def render(self) -> Markup:
        basis = self.timeline.basis
        scope = basis.scope.resolved
        scope_text = (
            "global"
            if scope.HasField("global")
            else "projects " + ", ".join(scope.projects.project_ids)
        )
        return join(
            [
                el(
                    "section",
                    el(
                        "p",
                        type_name(self.ref).replace("_", " "),
                        " ",
                        el("code", self.ref.id),
                        class_="kicker",
                    ),
                    el("h1", self.title()),
                    el(
                        "p",
                        f"Scope: {scope_text} ({basis.scope.resolution}) · graph revision "
                        f"{basis.read_revision} · replayed to {basis.read_at or 'an unknown time'}",
                        class_="meta",
                    ),
                    el("p", self.timeline.evidence_note, class_="hint")
                    if self.timeline.evidence_note
                    else None,
                    class_="story-head",
                ),
                self.now(),
                self.time_view(),
                self.undated(),
                self.coverage(),
                self.others(),
            ]
        )

    # ---- what holds now ----------------------------------------------------------------------

    def validity_words(self, validity: dict[str, Any]) -> Markup:
        state = str(validity.get("state") or "unknown")
        by = validity.get("established_by") or []
        if not by:
            setter: object = " — no evidenced replaces or contradicts relation decides it"
        else:
            setter = [
                " — set by ",
                join(
                    el(
                        "a",
                        f"{rid} ({self.relation_kinds.get(rid, 'relation')})",
                        href=f"/story/relation/{rid}",
                    )
                    for rid in by
                ),
            ]
        return el("span", badge_validity(state), setter, class_="validity")

    def now(self) -> Markup | None:
        if self.projection is None:
            return None
        doc = self.doc(self.projection)
        parts = [el("h2", "What holds now")]
        if doc.get("statement"):
            parts.append(el("p", doc["statement"], class_="hint"))
        validity = doc.get("validity")
        if isinstance(validity, dict):
            parts.append(el("p", "Validity: ", self.validity_words(validity)))
        description = doc.get("description")
        if isinstance(description, dict):
            text = description.get("text") or description.get("description") or ""
            parts.append(
                el(
                    "p",
                    "Description ",
                    el("em", description.get("state", "")),
                    f": {text}" if text else "",
                    f" (chosen by {description['chosen_by']}: {description.get('reason', '')})"
                    if description.get("chosen_by")
                    else "",
                )
            )
        decisions = (doc.get("decisions") or {}).get("items") or []
        if decisions:
            parts.append(
                el(
                    "div",
                    el("h3", "Decisions"),
                    el(
                        "ul",
                        [
                            el(
                                "li",
                                el(
                                    "a",
                                    d.get("title", d.get("event_id", "")),
                                    href=f"/story/event/{d.get('event_id', '')}",
                                ),
                                f" ({d.get('event_time') or 'time unknown'}) ",
                                self.validity_words(d.get("validity") or {}),
                                class_="decision",
                            )
                            for d in decisions
                            if isinstance(d, dict)
                        ],
                    ),
                )
            )
        work = doc.get("work_state")
        if isinstance(work, dict):
            parts.append(
                el(
                    "p",
                    "Work state: ",
                    "; ".join(
                        f"{k}: {v.get('state', '')}"
                        + (f" ({v['reason']})" if v.get("reason") else "")
                        for k, v in work.items()
                        if isinstance(v, dict)
                    ),
                )
            )
        unresolved = doc.get("unresolved")
        if isinstance(unresolved, dict):
            lines = []
            for key, values in unresolved.items():
                if isinstance(values, list) and values:
                    lines.append(
                        el(
                            "li",
                            f"{key.replace('_', ' ')}: ",
                            "; ".join(compact(v) for v in values),
                        )
                    )
            if lines:
                parts.append(el("div", el("h3", "Unresolved"), el("ul", lines)))
        conflicts = doc.get("open_conflicts") or []
        if conflicts:
            parts.append(el("p", "Open conflicts: ", "; ".join(compact(c) for c in conflicts)))
        return el("section", parts, class_="now")

    # ---- the timeline ------------------------------------------------------------------------

    def time_view(self) -> Markup:
        dated = list(collection(self.timeline, "timeline").items)
        processed = list(self.timeline.coverage.processed)
        times: list[datetime] = []
        for item in dated:
            for text in (
                item.time.event_time.start,
                item.time.event_time.end,
                getattr(item.time.validity, "from"),
                item.time.validity.to,
            ):
                moment = parse_time(text)
                if moment:
                    times.append(moment)
        axis = Axis.over(times)  # coverage is drawn within it, clipped, never widening it
        rows = [self.timeline_row(item, axis) for item in dated]
        body: object
        if rows:
            body = el("ol", rows, class_="timeline")
        else:
            body = el(
                "p",
                "No dated evidence is stored for this object in this scope. That is not the "
                "same as nothing having happened: see the coverage below.",
                class_="empty",
            )
        return el(
            "section",
            el("h2", "Timeline (event time)"),
            el(
                "p",
                "Dated evidence in event-time order. Bands show validity, from the relation "
                "that set it; the bottom track shows what the review results covered.",
                class_="hint",
            ),
            axis_ticks(axis) if axis else None,
            body,
            more_note(collection(self.timeline, "timeline"), "timeline"),
            self.coverage_track(axis, processed) if axis else None,
            class_="story-timeline",
        )

    def timeline_row(self, item: graph_pb2.ContextItem, axis: Axis | None) -> Markup:
        doc = self.doc(item)
        event = item.time.event_time
        validity = item.time.validity
        state = VALIDITY.get(validity.state, "unknown")
        setter = ""
        if validity.basis:
            kind = self.relation_kinds.get(validity.basis, "relation")
            setter = f" — set by {validity.basis} ({kind})"
        elif state == "unknown":
            setter = " — no relation decides it"
        label = f"{state}{setter}"
        band = None
        if axis is not None:
            start = parse_time(getattr(validity, "from")) or parse_time(event.start)
            end = parse_time(validity.to)
            bands = [axis.band(start, end, label, f"validity-{state}")]
            if state == "superseded" and end is not None:
                # It held until the relation replaced it, and is superseded from then on.
                bands = [
                    axis.band(start, end, "held until replaced", "validity-held"),
                    axis.band(end, None, label, "validity-superseded"),
                ]
            moment = parse_time(event.start)
            mark = None
            if moment is not None:
                x = f"{axis.at(moment):.2f}%"
                mark = el("line", x1=x, x2=x, y1="0", y2="24", class_="event-mark")
            band = track(bands, mark, label=label)
        when = event.start + (f" → {event.end}" if event.end else "")
        precision = (
            common_pb2.TimePrecision.Name(event.precision).lower() if event.precision else ""
        )
        return el(
            "li",
            el(
                "div",
                el("time", when, datetime=event.start),
                f" ({precision}, {event.basis})" if precision or event.basis else "",
                class_="when",
            ),
            self.item_body(item, doc),
            el("p", "Validity: ", badge_validity(state), setter, class_="validity-line"),
            band,
            class_=f"timeline-item validity-{state}",
            data_ref=f"{type_name(item.ref)}:{item.ref.id}",
        )

    def item_body(self, item: graph_pb2.ContextItem, doc: dict[str, Any]) -> Markup:
        title = doc.get("title") or doc.get("label") or item.ref.id
        text = doc.get("description") or doc.get("reason") or doc.get("text") or ""
        confirmation = (
            common_pb2.ConfirmationState.Name(item.time.confirmation_state).lower()
            if item.time.confirmation_state
            else ""
        )
        return join(
            [
                el(
                    "div",
                    el("span", type_name(item.ref).replace("_", " "), class_="badge kind"),
                    el("span", item.kind, class_="badge ekind") if item.kind else None,
                    el("span", confirmation.replace("_", " "), class_="badge confirmation")
                    if confirmation
                    else None,
                    " ",
                    el("a", title, href=story_href(item.ref), class_="item-title"),
                    class_="item-head",
                ),
                el("p", text, class_="text") if text else None,
                self.sources(item),
                el("p", f"recorded by result {item.result_id}", class_="meta")
                if item.result_id
                else None,
            ]
        )

    def sources(self, item: graph_pb2.ContextItem) -> Markup | None:
        if not item.sources:
            return el("p", "No source cited.", class_="meta")
        links = [
            el(
                "li",
                el(
                    "a",
                    f"{s.source_type} {s.source_id}",
                    f" v{s.source_version}" if s.source_version else "",
                    href=source_href(s.source_reference_id),
                    class_="source-link",
                    data_source=s.source_reference_id,
                ),
            )
            for s in item.sources
        ]
        more = (
            el("li", f"and {item.sources_omitted} more sources") if item.sources_omitted else None
        )
        return el("ul", links, more, class_="sources")

    def undated(self) -> Markup:
        undated = collection(self.timeline, "undated")
        rows = [
            el(
                "li",
                el("div", "time unknown", class_="when"),
                self.item_body(item, self.doc(item)),
                class_="timeline-item undated",
            )
            for item in undated.items
        ]
        return el(
            "section",
            el("h2", "Undated evidence"),
            el(
                "p",
                "Evidence whose event time is unknown; kept apart rather than placed at a "
                "guessed time.",
                class_="hint",
            ),
            el("ol", rows, class_="timeline undated-list")
            if rows
            else el("p", "None: every piece of evidence here has an event time.", class_="empty"),
            more_note(undated, "undated"),
            class_="story-undated",
        )

    # ---- coverage ----------------------------------------------------------------------------

    def coverage_track(self, axis: Axis, processed: list[graph_pb2.CoveredInterval]) -> Markup:
        covered: list[tuple[datetime, datetime]] = []
        bands = []
        for interval in processed:
            start = parse_time(getattr(interval.covered, "from"))
            end = parse_time(interval.covered.to)
            if interval.basis != common_pb2.COVERAGE_INTERVAL or start is None:
                continue
            covered.append((start, end or axis.end))
            bands.append(
                axis.band(
                    start, end, f"covered by {interval.result_id} ({interval.phase})", "covered"
                )
            )
        covered.sort()
        holes = []
        cursor = axis.start
        for start, end in covered:
            if start > cursor:
                holes.append((cursor, start))
            cursor = max(cursor, end)
        if cursor < axis.end:
            holes.append((cursor, axis.end))
        for start, end in holes:
            bands.append(
                axis.band(start, end, "not covered by any review: unknown, not empty", "gap")
            )
        return el(
            "div",
            el("p", "Review coverage", class_="track-title"),
            track(bands, label="review coverage", cls="track coverage-track"),
            class_="coverage-row",
        )

    def coverage(self) -> Markup:
        coverage = self.timeline.coverage
        state = graph_pb2.Coverage.State.Name(coverage.state).lower() if coverage.state else ""
        parts: list[object] = [el("h2", "Coverage and gaps")]
        if state == "unknown" or not coverage.processed:
            parts.append(
                el(
                    "p",
                    "Coverage is unknown: no review result in this scope says what it "
                    "processed. Nothing shown here means only that nothing was recorded.",
                    class_="notice",
                )
            )
        else:
            parts.append(
                el(
                    "p",
                    f"Coverage is {state}: review results exist, and gaps may remain.",
                    class_="notice",
                )
            )
        rows = []
        for interval in coverage.processed:
            if interval.HasField("covered_unknown"):
                span = f"interval unknown: {interval.covered_unknown.reason}"
            else:
                span = (
                    f"{getattr(interval.covered, 'from') or '…'} → {interval.covered.to or 'open'}"
                )
            counts = ", ".join(f"{c.count} {c.what}" for c in interval.counts)
            rows.append(
                el(
                    "li",
                    el("code", interval.result_id),
                    f" ({interval.phase}): {span}",
                    f"; counts {counts}" if counts else "",
                )
            )
        if rows:
            parts.append(el("ul", rows, class_="processed"))
        if coverage.results_not_listed:
            parts.append(el("p", f"{coverage.results_not_listed} older results not listed."))
        gaps = list(coverage.gaps) + [f"history: {g}" for g in self.timeline.history_gaps]
        parts.append(el("h3", "Reported gaps"))
        if gaps:
            parts.append(el("ul", [el("li", g) for g in gaps], class_="gaps"))
        else:
            parts.append(
                el("p", "No result reports a gap; that does not claim the history is complete.")
            )
        if coverage.excluded_source_types:
            parts.append(
                el(
                    "p",
                    "Source types no result processed: ",
                    ", ".join(coverage.excluded_source_types),
                )
            )
        return el("section", parts, class_="coverage")

    # ---- everything else the reads returned --------------------------------------------------

    def others(self) -> Markup:
        blocks = []
        names = (
            ("relations", self.current),
            ("sources", self.timeline),
            ("related", self.timeline),
            ("snapshots", self.timeline),
            ("preferences", self.current),
            ("changes", self.current),
            ("leaves", self.current),
        )
        for name, response in names:
            found = collection(response, name)
            if not found.items:
                continue
            blocks.append(
                el(
                    "details",
                    el("summary", f"{name.capitalize()} ({len(found.items)})"),
                    el(
                        "ul",
                        [el("li", self.item_body(i, self.doc(i))) for i in found.items],
                        class_="items",
                    ),
                    more_note(found, name),
                    class_=f"collection collection-{name}",
                    open=name == "relations",
                )
            )
        return el("section", el("h2", "Evidence behind it"), blocks, class_="others")


def badge_validity(state: str) -> Markup:
    return el("span", state, class_=f"badge validity-badge validity-{state}")


def compact(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)[:300]


def more_note(found: graph_pb2.ContextCollection, name: str) -> Markup | None:
    if not found.page.has_more:
        return None
    page = found.page
    total = page.total.exact if page.total.HasField("exact") else "an unknown number of"
    return el(
        "p",
        f"Showing the first {len(found.items)} of {total} {name} items; the rest are not "
        "shown here.",
        class_="notice",
    )


def axis_ticks(axis: Axis) -> Markup:
    return el(
        "div",
        el("span", axis.start.strftime("%Y-%m-%d %H:%M"), class_="tick-start"),
        el("span", axis.end.strftime("%Y-%m-%d %H:%M"), class_="tick-end"),
        class_="axis",
    )
