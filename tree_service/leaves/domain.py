"""Domain types of shared leaves beyond a review's declared extraction (tree_service.domain
holds that: source parts, leaf keys): the plan of an extraction."""

from __future__ import annotations

from dataclasses import dataclass

from mirrortree.scopes import ScopeValue
from tree_service.domain import Part


@dataclass(frozen=True)
class ExtractionPlanRequest:
    scope: ScopeValue
    contract_version: str
    parts: tuple[Part, ...]
