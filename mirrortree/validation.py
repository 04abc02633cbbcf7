"""Field validation shared by both services: collect every violation, then fail once.

A client sees all of its mistakes in one answer (dotted paths such as `events[2].title`), and
nothing is written. Each service subclasses `FieldChecker` with its own error type.
"""

from __future__ import annotations

from datetime import datetime

from mirrortree.scopes import ScopeError, ScopeValue, check_identifier
from mirrortree.timefmt import NaiveTimeError, parse_aware
from mirrortree.v1 import common_pb2
from mirrortree.violations import FieldViolation

MAX_ID = 200
SHOWN_CHARS = 40


def shown(value: str) -> str:
    """A caller's value quoted in a message: its first SHOWN_CHARS characters, so that a
    refusal of a huge value stays small."""
    cut = value[:SHOWN_CHARS]
    return repr(cut) + ("…" if len(value) > SHOWN_CHARS else "")


class FieldChecker:
    """Collects field violations; `done()` raises `error(violations)` if there were any."""

    def __init__(self) -> None:
        self.violations: list[FieldViolation] = []

    def error(self, violations: list[FieldViolation]) -> Exception:
        """The exception `done()` raises; services return their own InvalidInput."""
        raise NotImplementedError

    def fail(self, field: str, description: str) -> None:
        self.violations.append(FieldViolation(field, description))

    def text(self, field: str, value: str, max_len: int, *, required: bool = True) -> str:
        """Non-empty (when required), at most `max_len` code points, no NUL (PostgreSQL text
        cannot hold one)."""
        if not value.strip():
            if required:
                self.fail(field, "must not be empty")
            return value
        if len(value) > max_len:
            self.fail(field, f"is {len(value)} characters long; the limit is {max_len}")
        elif "\x00" in value:
            self.fail(field, "contains a NUL character")
        return value

    def identifier(self, field: str, value: str, *, required: bool = True) -> str:
        if not value and not required:
            return value
        try:
            check_identifier(value, field, MAX_ID)
        except ScopeError as exc:
            self.fail(field, str(exc).removeprefix(f"{field} "))
        return value

    def time(self, field: str, value: str, *, required: bool = False) -> datetime | None:
        """An RFC 3339 time with a zone, normalized to UTC; naive times are refused."""
        if not value:
            if required:
                self.fail(field, "is required (RFC 3339 with a zone)")
            return None
        quoted = shown(value)  # the value may be any length; the answer stays small
        try:
            return parse_aware(value)
        except NaiveTimeError:
            self.fail(field, f"{quoted} has no time zone; add 'Z' or an offset such as +08:00")
        except (ValueError, OverflowError) as exc:  # overflow: out of range once in UTC
            problem = (
                "is outside the representable range in UTC"
                if "representable" in str(exc) or isinstance(exc, OverflowError)
                else "is not an RFC 3339 time with a zone (such as 2026-10-01T08:00:00+08:00)"
            )
            self.fail(field, f"{quoted} {problem}")
        return None

    def scope(self, field: str, value: common_pb2.Scope, *, required: bool) -> ScopeValue | None:
        """A normalized scope; None when it is absent (an error only when `required`)."""
        which = value.WhichOneof("kind")
        if which is None:
            if required:
                self.fail(field, "is required: Global or one or more projects")
            return None
        if which == "global":
            if not getattr(value, "global"):
                self.fail(f"{field}.global", "must be true when set")
            return ScopeValue.global_scope()
        try:
            return ScopeValue.of_projects(list(value.projects.project_ids))
        except ScopeError as exc:
            self.fail(f"{field}.projects", str(exc))
            return None

    def page_size(self, value: int, default: int, maximum: int) -> int:
        """A page size: 1..maximum, with 0 meaning the default."""
        if not 0 <= value <= maximum:
            self.fail("page_size", f"must be between 1 and {maximum} (0 means {default})")
        return value or default

    def counter(self, field: str, value: str, *, required: bool = True) -> int | None:
        """A non-negative decimal integer sent as text (versions, page positions)."""
        if not value:
            if required:
                self.fail(field, "is required")
            return None
        if not (value.isascii() and value.isdigit()) or len(value) > 18:
            self.fail(field, f"{shown(value)} is not a whole number (0 to 10^18)")
            return None
        return int(value)

    def done(self) -> None:
        if self.violations:
            raise self.error(self.violations)
