"""Stored object types in their tie-break order in search results ("type, stable id, result
id"): tree_service stores each copy's rank, graph_service narrows a search's index walk to the
ranks of the requested types, and the gateway offers the names in its tool schemas."""

from __future__ import annotations

OBJECT_TYPE_NAMES = (
    "story_line",
    "event",
    "entity",
    "entity_change",
    "relation",
    "summary",
    "source_reference",
    "leaf_fact",
)
OBJECT_TYPE_RANKS: dict[str, int] = {
    name: rank for rank, name in enumerate(OBJECT_TYPE_NAMES, start=1)
}
