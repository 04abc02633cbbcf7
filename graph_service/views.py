"""Read models of the graph service: SQL rows mapped straight to frozen dataclasses."""

from __future__ import annotations

import calendar
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from mirrortree.scopes import ScopeValue

# Totals are counted exactly up to this many matches and within this time; beyond either they
# are reported unknown rather than guessed.
COUNT_CAP = 1_000
COUNT_BUDGET_MS = 10


@dataclass(frozen=True)
class Caller:
    """Who is asking: a binding (from its token) or a trusted caller naming a session."""

    session_id: str | None
    project_id: str | None
    runtime: str | None = None
    binding_id: str | None = None
    allowed_scopes: tuple[str, ...] = ()  # scope keys a binding may also name explicitly


@dataclass(frozen=True)
class ResolvedScope:
    requested: ScopeValue | None
    resolved: ScopeValue
    resolution: str  # "explicit" | "session_current_project" | "cursor"


PRECISION_PERIODS = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
}


def event_time_until(start: datetime, end: datetime | None, precision: str | None) -> datetime:
    """The latest instant an event may lie at: its end (or start) plus its precision's period,
    less a microsecond — the SQL function event_time_until (migration 0012), which counts
    periods in UTC and, like PostgreSQL, ends a month on the last day of a shorter one."""
    base = end or start
    if precision in PRECISION_PERIODS:
        return base + PRECISION_PERIODS[precision] - timedelta(microseconds=1)
    if precision in ("month", "year"):
        utc = base.astimezone(UTC)
        months = utc.year * 12 + utc.month - 1 + (1 if precision == "month" else 12)
        year, month = divmod(months, 12)
        day = min(utc.day, calendar.monthrange(year, month + 1)[1])
        return utc.replace(year=year, month=month + 1, day=day) - timedelta(microseconds=1)
    return base


@dataclass(frozen=True)
class TimeFilter:
    start: datetime | None
    end: datetime | None
    basis: str  # "event_time" | "review_generated_at" | "recorded_at"

    @property
    def active(self) -> bool:
        return self.start is not None or self.end is not None

    @property
    def excludes_unknown_times(self) -> bool:
        """Only an event-time range leaves out objects whose time is unknown."""
        return self.active and self.basis == "event_time"

    def admits(
        self,
        event_start: datetime | None,
        event_end: datetime | None,
        review_generated_at: datetime,
        recorded_at: datetime,
        event_precision: str | None = None,
    ) -> bool:
        """Whether an object with these times passes the filter: the rule of the SQL time
        filter (the time rule of queries.search), for objects already read. An event passes when its
        interval, widened by its precision (event_time_until), intersects the closed range;
        an unknown event time never does."""
        if not self.active:
            return True
        if self.basis == "event_time":
            if event_start is None:
                return False
            return (self.end is None or event_start <= self.end) and (
                self.start is None
                or event_time_until(event_start, event_end, event_precision) >= self.start
            )
        moment = review_generated_at if self.basis == "review_generated_at" else recorded_at
        return (self.start is None or moment >= self.start) and (
            self.end is None or moment <= self.end
        )


@dataclass(frozen=True)
class ValidityView:
    """Validity established only by evidenced relations; "unknown" otherwise."""

    state: str  # "unknown" | "current" | "superseded" | "disputed"
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    basis: tuple[str, ...] = ()  # the relation ids that establish it


UNKNOWN_VALIDITY = ValidityView("unknown")


@dataclass(frozen=True)
class RelationTouch:
    """One evidenced relation touching an object: which end it is and the other end."""

    link: str  # "replaces.from" | "replaces.to" | "contradicts.from" | "contradicts.to"
    relation_id: str
    effective_at: datetime | None
    other: tuple[str, str]  # (type, id) of the other end
    # The relation's own times, for narrowing validity to an evidence range.
    effective_to: datetime | None
    review_generated_at: datetime
    recorded_at: datetime
    # The version of the touched object the relation is about (the revision the review gave,
    # else the one recorded when the relation was); None when not known.
    revision: str | None = None

    def within(self, time_filter: TimeFilter) -> bool:
        return time_filter.admits(
            self.effective_at, self.effective_to, self.review_generated_at, self.recorded_at
        )

    def applies_to(self, revision: str | None) -> bool:
        """Whether the relation is about this version of the object: a relation about
        revision 1 says nothing of revision 2. Unknown on either side: it may be."""
        return self.revision is None or revision is None or self.revision == revision


def validity_of(touches: list[RelationTouch], revision: str | None = None) -> ValidityView:
    """The validity of an object's version `revision` (None: not known) from the relations
    touching the object that are about that version: superseded > disputed > current > unknown.

    - `replaces.to` (something replaced this, on evidence): superseded from its effective time;
    - a `contradicts` whose two ends no `replaces` between them settles: disputed;
    - `replaces.from` (this replaced something): current from its effective time;
    - nothing evidenced: unknown. Newer, more assertive or confirmed is never enough.
    """
    touches = [t for t in touches if t.applies_to(revision)]
    replaced = [t for t in touches if t.link == "replaces.to"]
    if replaced:
        times = [t.effective_at for t in replaced if t.effective_at is not None]
        return ValidityView(
            "superseded",
            valid_to=min(times) if times else None,
            basis=tuple(sorted({t.relation_id for t in replaced})),
        )
    settled = {t.other for t in touches if t.link.startswith("replaces.")}
    disputes = [t for t in touches if t.link.startswith("contradicts.") and t.other not in settled]
    if disputes:
        return ValidityView("disputed", basis=tuple(sorted({t.relation_id for t in disputes})))
    replacing = [t for t in touches if t.link == "replaces.from"]
    if replacing:
        times = [t.effective_at for t in replacing if t.effective_at is not None]
        return ValidityView(
            "current",
            valid_from=max(times) if times else None,
            basis=tuple(sorted({t.relation_id for t in replacing})),
        )
    return UNKNOWN_VALIDITY


@dataclass(frozen=True)
class SourceView:
    source_reference_id: str
    details: dict[str, Any]


# Not frozen, unlike the other views: a hub's context read builds about a hundred of these and of
# ContextEntry, and a frozen dataclass's __init__ costs four times a plain one's (3.5 µs against
# 0.8, one setattr call per field). Nothing changes them once built.
@dataclass(slots=True)
class SearchRow:
    result_id: str
    object_type: str
    object_id: str
    type_rank: int
    scope_key: str
    title: str
    body: str
    kind: str | None
    object_revision: str | None
    confirmation_state: str | None
    event_time_start: datetime | None
    event_time_end: datetime | None
    event_time_precision: str | None
    event_time_basis: str | None
    review_generated_at: datetime
    recorded_at: datetime
    details: dict[str, Any]
    score: int
    sources: tuple[SourceView, ...] = ()
    validity: ValidityView = UNKNOWN_VALIDITY
    details_text: str = ""  # `details` as the database wrote it (documents.stored_content)


@dataclass(frozen=True)
class CoveredResult:
    result_id: str
    phase: str
    covered_from: datetime | None
    covered_to: datetime | None
    review_generated_at: datetime
    basis: str = "interval"  # how its coverage is known: "interval", "counts" or "unknown"
    counts: tuple[tuple[str, int], ...] = ()  # (what, count), for basis "counts"


@dataclass(frozen=True)
class CoverageView:
    results_in_scope: int
    processed: tuple[CoveredResult, ...]  # the newest results (a bounded list)
    # Over every result in scope: the gaps they report ("result: gap", newest first; one more
    # than queries.scope_state.GAPS_LISTED says the list goes on) and the source types they
    # excluded.
    gaps: tuple[str, ...]
    excluded_source_types: tuple[str, ...]


@dataclass(frozen=True)
class MatchCounts:
    """Counts of one query; None = unknown (over the cap or the time budget)."""

    total: int | None
    unknown_time_excluded: int | None
    event_time_filtered: bool  # only an event-time filter can exclude unknown times


@dataclass(frozen=True)
class SearchPage:
    rows: tuple[SearchRow, ...]
    has_more: bool
    counts: MatchCounts
    coverage: CoverageView
    read_revision: int
    read_at: datetime | None  # the last commit the replica replayed (None: none yet)
    scope: ResolvedScope
    position: list[Any] = field(default_factory=list)
    # The first page's linked leaves (queries.leaves.LINKED_LEAVES rows).
    linked: tuple[Any, ...] = ()
    # The first page's background: the matching preferences that apply, newest update first.
    background: tuple[PreferenceRow, ...] = ()


@dataclass(frozen=True)
class CurrentSource:
    """One readable state of a source: a message revision or a recorded source."""

    text: str
    revision: str
    project_id: str | None
    node_id: uuid.UUID | None  # messages only
    deleted: bool = False
    written_at: datetime | None = None  # when this revision was written
    first_written_at: datetime | None = None  # a message's first revision; None: not kept


@dataclass(frozen=True)
class TimeFact:
    """A time a source has (None: unknown), and what it is or why it is unknown."""

    at: datetime | None
    basis: str


@dataclass(frozen=True)
class SourceTimes:
    created: TimeFact
    updated: TimeFact
    captured: TimeFact


@dataclass(frozen=True)
class SourceRead:
    """One read of a source reference, before paging (content is the whole text read)."""

    reference_id: str
    result_id: str
    scope_key: str
    source_type: str
    source_id: str
    reference_version: str  # the version the reference saved ("" = unknown)
    fragment_start: int
    fragment_end: int
    locator: dict[str, Any]
    content: str
    content_kind: str  # "saved_fragment" | "whole_source"
    returned_version: str
    # "available" | "deleted" | "inaccessible" | "moved_out_of_scope": whether the source
    # can be read here beyond the saved fragment
    availability: str
    available_kinds: tuple[str, ...]  # "snapshot", "version", "current"
    differs_from_reference: bool
    # Code points of the whole source at the version read (a snapshot: the version the
    # reference saved), when it can be read here.
    source_length: int | None
    coverage: CoverageView
    read_revision: int
    read_at: datetime | None  # the last commit the replica replayed (None: none yet)
    times: SourceTimes | None = None


# How a confirmed preference is labelled wherever a read shows it (a context item, a search's
# background): background the user confirmed, never a graph fact.
PREFERENCE_LABEL = "background: confirmed preference"


@dataclass(frozen=True)
class PreferenceRow:
    preference_id: str
    scope_key: str
    subject: str
    text: str
    about: tuple[dict[str, str], ...]
    confirmed_by: str
    revision: int
    updated_at: datetime


@dataclass(slots=True)  # not frozen: see SearchRow
class ContextEntry:
    """One item of a context collection: a stored object copy, a preference, or the
    computed current projection (`content` is the JSON document the fragments page over)."""

    ref_type: str
    ref_id: str
    result_id: str  # "" for computed items and preferences
    scope_key: str
    label: str
    kind: str
    content: str
    row: SearchRow | None = None  # stored objects: their time facts, revision and sources
    validity: ValidityView = UNKNOWN_VALIDITY
    revision: str | None = None  # for items without a row (preferences)
    recorded_at: datetime | None = None  # for items without a row (preferences)

    @property
    def key(self) -> list[str]:
        return [self.ref_type, self.ref_id, self.result_id]


@dataclass(frozen=True)
class CollectionPage:
    name: str
    entries: tuple[ContextEntry, ...]
    has_more: bool
    total: int | None  # None: unknown (over the cap or the time budget)
    position: list[Any]  # keyset after the last entry, for the next page


@dataclass(frozen=True)
class ContextContinuation:
    """Where a GetContext cursor continues: one collection's next page, or the rest of one
    item's content."""

    kind: str  # "collection" | "content"
    collection: str
    position: list[Any]  # the keyset after the last item, or the item's key
    total: int | None = None  # the collection's total from the first page
    # What the first page reported as left out of the time filter for an unknown event time.
    unknown_time_excluded: int | None = None


@dataclass(frozen=True)
class ContextRead:
    object_type: str
    object_id: str
    collections: tuple[CollectionPage, ...]
    coverage: CoverageView
    unknown_time_excluded: int | None
    event_time_filtered: bool
    history_gaps: tuple[str, ...]
    read_revision: int
    read_at: datetime | None  # the last commit the replica replayed (None: none yet)
    preferences_version: str
    # The first page's linked leaves about the object (queries.leaves.LINKED_LEAVES_ABOUT).
    linked: tuple[Any, ...] = ()
