"""Scopes shared by the writer and the reader: one project, a project set, or Global.

A scope is stored as one canonical key so that "the exact scope of a result" is a plain
equality: `global`, or `projects:` plus the sorted, de-duplicated project ids joined by U+001F
(a control character that project ids may not contain).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MAX_PROJECT_ID = 200
MAX_PROJECTS = 50
_SEPARATOR = "\x1f"


class ScopeError(ValueError):
    """The scope is malformed; the message says how."""


def check_identifier(value: str, what: str, max_len: int = MAX_PROJECT_ID) -> str:
    """Validate a caller-supplied identifier: non-empty, bounded, no control characters."""
    if not value or not value.strip():
        raise ScopeError(f"{what} must not be empty")
    if len(value) > max_len:
        raise ScopeError(f"{what} is longer than {max_len} characters")
    if any(unicodedata.category(ch).startswith("C") for ch in value):
        raise ScopeError(f"{what} contains control or unassigned characters")
    return value


@dataclass(frozen=True)
class ScopeValue:
    """A normalized scope. `projects` is sorted and unique; empty means Global."""

    projects: tuple[str, ...] = ()

    @classmethod
    def global_scope(cls) -> ScopeValue:
        return cls(())

    @classmethod
    def of_projects(cls, project_ids: list[str] | tuple[str, ...]) -> ScopeValue:
        if not project_ids:
            raise ScopeError("a project scope needs at least one project id")
        if len(project_ids) > MAX_PROJECTS:
            raise ScopeError(f"a project set holds at most {MAX_PROJECTS} projects")
        for i, project in enumerate(project_ids):
            check_identifier(project, f"project_ids[{i}]")
        return cls(tuple(sorted(set(project_ids))))

    @classmethod
    def from_key(cls, key: str) -> ScopeValue:
        if key == "global":
            return cls.global_scope()
        if key.startswith("projects:"):
            return cls(tuple(key.removeprefix("projects:").split(_SEPARATOR)))
        raise ScopeError(f"unknown scope key {key!r}")

    @property
    def is_global(self) -> bool:
        return not self.projects

    @property
    def key(self) -> str:
        return "global" if self.is_global else "projects:" + _SEPARATOR.join(self.projects)

    def describe(self) -> str:
        """Human-readable form for messages."""
        if self.is_global:
            return "Global"
        if len(self.projects) == 1:
            return f"project {self.projects[0]!r}"
        return "projects " + ", ".join(repr(p) for p in self.projects)
