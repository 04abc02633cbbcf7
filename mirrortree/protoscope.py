"""Scope ↔ proto, shared by both services and the gateway.

The proto field for Global is named `global`, a Python keyword, so it is set through setattr
in this one place rather than with keyword-argument tricks scattered around.
"""

from __future__ import annotations

from mirrortree.scopes import ScopeValue
from mirrortree.v1 import common_pb2


def global_scope() -> common_pb2.Scope:
    scope = common_pb2.Scope()
    setattr(scope, "global", True)
    return scope


def project_scope(project_ids: list[str] | tuple[str, ...]) -> common_pb2.Scope:
    return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=list(project_ids)))


def scope_to_proto(scope: ScopeValue | None) -> common_pb2.Scope:
    """None (the caller asked for the default) becomes an empty Scope."""
    if scope is None:
        return common_pb2.Scope()
    if scope.is_global:
        return global_scope()
    return project_scope(scope.projects)


def time_range(start: str = "", end: str = "") -> common_pb2.TimeRange:
    """A TimeRange; its `from` field is a Python keyword too."""
    value = common_pb2.TimeRange(to=end)
    setattr(value, "from", start)
    return value
