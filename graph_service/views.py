"""Read models of the graph service: SQL rows mapped straight to frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mirrortree.scopes import ScopeValue

# Totals are counted exactly up to this many matches and within this time; beyond either they
# are reported unknown rather than guessed.
COUNT_CAP = 1_000
COUNT_BUDGET_MS = 25


@dataclass(frozen=True)
class Caller:
    """Who is asking: a binding (from its token) or a trusted caller naming a session."""

    session_id: str | None
    project_id: str | None
    runtime: str | None = None
    binding_id: str | None = None


@dataclass(frozen=True)
class ResolvedScope:
    requested: ScopeValue | None
    resolved: ScopeValue
    resolution: str  # "explicit" | "session_current_project" | "cursor"


@dataclass(frozen=True)
class TimeFilter:
    start: datetime | None
    end: datetime | None
    basis: str  # "event_time" | "review_generated_at" | "recorded_at"

    @property
    def active(self) -> bool:
        return self.start is not None or self.end is not None


@dataclass(frozen=True)
class SourceView:
    source_reference_id: str
    details: dict[str, Any]


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class CoveredResult:
    result_id: str
    phase: str
    covered_from: datetime | None
    covered_to: datetime | None
    review_generated_at: datetime
    excluded_source_types: tuple[str, ...]


@dataclass(frozen=True)
class CoverageView:
    results_in_scope: int
    processed: tuple[CoveredResult, ...]


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
    read_at: datetime
    scope: ResolvedScope
    position: list[Any] = field(default_factory=list)


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
    available_kinds: tuple[str, ...]  # "snapshot", "version", "current"
    differs_from_reference: bool
    source_length: int | None  # whole-source length in code points, when known
    coverage: CoverageView
    read_revision: int
    read_at: datetime
