"""Domain types of shared leaves: source parts, leaf keys and a review's declared extraction."""

from __future__ import annotations

from dataclasses import dataclass

from mirrortree.scopes import ScopeValue


@dataclass(frozen=True)
class Part:
    """A part of a source version; `end` None means the whole version."""

    field: str  # the request field that named it, e.g. "leaf_extraction.parts[0]"
    source_type: str
    source_id: str
    source_version: str
    start: int
    end: int | None

    @property
    def source(self) -> tuple[str, str, str]:
        return (self.source_type, self.source_id, self.source_version)


@dataclass(frozen=True)
class LeafKey:
    """What one leaf fact of a review was extracted from, and its text's digest."""

    field: str  # "leaf_facts[2]"
    object_id: str
    source_type: str
    source_id: str
    source_version: str
    start: int
    end: int
    text: str
    text_hash: bytes

    @property
    def source(self) -> tuple[str, str, str]:
        return (self.source_type, self.source_id, self.source_version)


@dataclass(frozen=True)
class LeafExtraction:
    contract_version: str
    reanalysis: bool
    parts: tuple[Part, ...]
    leaves: tuple[LeafKey, ...]


@dataclass(frozen=True)
class ExtractionPlanRequest:
    scope: ScopeValue
    contract_version: str
    parts: tuple[Part, ...]
