"""The collections of a context read by mode, and a page of each as planned from X's
neighbourhood before its copies are read whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph_service.neighbourhood import EVIDENCE, Member, Page, RowKey
from graph_service.views import PreferenceRow

NEIGHBOURS = ("story_line", "entity", "summary")


@dataclass(frozen=True)
class PlannedPage:
    """A collection page chosen from the neighbourhood, before its copies are read whole."""

    name: str
    keys: tuple[RowKey, ...]
    label: str
    has_more: bool
    total: int | None
    position: list[Any]


@dataclass(frozen=True)
class PlannedPreferences:
    """The preferences' page, before the relations that give their pending differences are
    read."""

    prefs: tuple[PreferenceRow, ...]
    has_more: bool
    total: int | None
    position: list[Any]


def linked_page(name: str, page: Page) -> PlannedPage:
    last = page.last
    return PlannedPage(
        name,
        tuple(m.key for m in page.members),
        collection_label(name),
        page.has_more,
        page.total,
        [last[0], last[1].isoformat(), *last[2:]] if last else [],
    )


def snapshots_page(
    copies_of_x: list[Member], size: int, after: list[Any] | None, count: bool
) -> PlannedPage:
    """X's own copies in recording order, after a graph revision."""
    rest = [m for m in copies_of_x if after is None or m.graph_revision > int(after[0])]
    page = rest[:size]
    return PlannedPage(
        "snapshots",
        tuple(m.key for m in page),
        collection_label("snapshots"),
        len(rest) > size,
        len(copies_of_x) if count else None,
        [page[-1].graph_revision] if page else [],
    )


def sources_page(page: Page) -> PlannedPage:
    shown = page.members
    return PlannedPage(
        "sources",
        tuple(m.key for m in shown),
        collection_label("sources"),
        page.has_more,
        page.total,
        [shown[-1].object_id, shown[-1].result_id] if shown else [],
    )


@dataclass(frozen=True)
class Linked:
    """A collection of objects related to X, read from graph_objects through the links."""

    name: str
    types: tuple[str, ...]
    include_self: bool = False
    dated_only: bool = False
    undated_only: bool = False
    evidence: bool = True  # the time filter applies (it narrows evidence, not neighbours)


CURRENT_MODE: tuple[str | Linked, ...] = (
    "current",
    "snapshots",
    Linked("events", ("event",)),
    Linked("changes", ("entity_change",)),
    Linked("relations", ("relation",)),
    Linked("leaves", ("leaf_fact",)),
    Linked("related", NEIGHBOURS, evidence=False),
    "sources",
    "preferences",
)
TIMELINE_MODE: tuple[str | Linked, ...] = (
    Linked("timeline", EVIDENCE, include_self=True, dated_only=True),
    Linked("undated", EVIDENCE, include_self=True, undated_only=True),
    "snapshots",
    Linked("related", NEIGHBOURS, evidence=False),
    "sources",
)


# What kind of statement a collection's items are (ContextItem.label); "stored_copy" for the
# others. A content continuation labels its item as the page that held it did.
COLLECTION_LABELS = {
    "snapshots": "stored_snapshot",
    "sources": "source_reference",
    "undated": "undated_evidence",
}


def collection_label(name: str) -> str:
    return COLLECTION_LABELS.get(name, "stored_copy")


def collections_of(mode: str) -> dict[str, str | Linked]:
    specs = CURRENT_MODE if mode == "current" else TIMELINE_MODE
    return {(s if isinstance(s, str) else s.name): s for s in specs}
