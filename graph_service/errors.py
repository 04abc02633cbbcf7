"""Errors of the graph service.

    GraphError
    ├── InvalidInput          a malformed field (names it); also `as_of_unsupported`
    ├── InvalidCursor         tampered, truncated or belongs to another query
    ├── StaleCursor           the data under the cursor changed; re-run the query
    ├── ScopeRequired         no explicit scope and no current project to default to
    ├── ScopeMismatch         the object exists, but not in the resolved scope
    ├── NotFound              no such object
    ├── Unauthenticated       unknown or revoked binding credential
    ├── ConsistencyTimeout    no replica reached the requested consistency token in time
    ├── ReplicaUnavailable    no healthy replica to read from
    ├── HistoricalVersionUnavailable   that version's text is not kept (says what can be read)
    ├── SourceUnavailable     the source is deleted, inaccessible or moved out of the scope
    ├── ResponseTooLarge      the answer would exceed the byte limit; ask for smaller pages
    ├── SearchBudgetExceeded  a search's index scans ran past their time budget; narrow it
    └── Disabled              a switch gating the story-graph tools is off for this caller

The store raises these (it alone translates asyncpg errors); the servicer maps each class to a
gRPC status code in one table.
"""

from __future__ import annotations

from mirrortree.violations import FieldViolation


class GraphError(Exception):
    """Base class; `reason` is the stable machine code sent in ErrorInfo."""

    reason = "internal"

    def __init__(self, message: str, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata or {}


class InvalidInput(GraphError):
    """One or more request fields are invalid."""

    reason = "invalid_argument"

    def __init__(self, violations: list[FieldViolation], reason: str | None = None) -> None:
        first = violations[0]
        extra = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        super().__init__(f"invalid {first.field}: {first.description}{extra}")
        self.violations = violations
        if reason:
            self.reason = reason

    @classmethod
    def one(cls, field: str, description: str, reason: str | None = None) -> InvalidInput:
        return cls([FieldViolation(field, description)], reason)


class InvalidCursor(GraphError):
    reason = "invalid_cursor"


class StaleCursor(GraphError):
    reason = "stale_cursor"


class ScopeRequired(GraphError):
    reason = "scope_required"


class ScopeMismatch(GraphError):
    reason = "scope_mismatch"


class NotFound(GraphError):
    reason = "not_found"


class Unauthenticated(GraphError):
    reason = "unauthenticated"


class ConsistencyTimeout(GraphError):
    reason = "consistency_timeout"


class ReplicaUnavailable(GraphError):
    reason = "replica_unavailable"


class HistoricalVersionUnavailable(GraphError):
    reason = "historical_version_unavailable"


class SourceUnavailable(GraphError):
    """The source behind a reference is deleted, inaccessible or moved out of the scope."""

    reason = "source_unavailable"


class ResponseTooLarge(GraphError):
    reason = "response_too_large"


class SearchBudgetExceeded(GraphError):
    """Finding a search's rare matches through the indexes took longer than the budget (a text
    the trigram index cannot use, such as one or two characters, means reading every copy in
    scope). Nothing is returned rather than a page that claims to be complete."""

    reason = "search_budget_exceeded"


class Disabled(GraphError):
    reason = "disabled"
