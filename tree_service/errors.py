"""Errors of the tree service.

    TreeServiceError
    ├── InvalidInput            bad request fields (each violation names its field)
    ├── NotFound                an id that does not exist
    ├── PreconditionFailed      the request is well-formed but the state forbids it
    │                           (an aggregate's own refusals subclass it: QuotaExceeded, …)
    ├── RevisionConflict        a write expected another revision (carries the current one);
    │                           PurgePreviewStale subclasses it
    ├── Contention              PostgreSQL broke a deadlock or serialization conflict: retry
    └── IdempotencyKeyReused    the key was used for a different request

The stores raise these (they alone translate asyncpg errors); the servicer maps the base
classes to gRPC status codes in one table, and a subclass is answered like its base, so an
aggregate adds a refusal of its own without touching that table.
"""

from __future__ import annotations

from mirrortree.violations import FieldViolation


class TreeServiceError(Exception):
    """Base class; `reason` is the stable machine code sent in ErrorInfo."""

    reason = "internal"

    def __init__(self, message: str, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata or {}


class InvalidInput(TreeServiceError):
    """One or more request fields are invalid; nothing was written."""

    reason = "invalid_argument"

    def __init__(self, violations: list[FieldViolation]) -> None:
        fields = ", ".join(v.field for v in violations)
        first = violations[0]
        extra = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        super().__init__(f"invalid {fields}: {first.description}{extra}")
        self.violations = violations

    @classmethod
    def one(cls, field: str, description: str) -> InvalidInput:
        return cls([FieldViolation(field, description)])


class NotFound(TreeServiceError):
    """The named resource does not exist."""

    reason = "not_found"

    def __init__(self, resource: str, resource_id: str) -> None:
        super().__init__(
            f"{resource} {resource_id!r} does not exist",
            {"resource": resource, "id": resource_id},
        )


class PreconditionFailed(TreeServiceError):
    """The request is valid but the current state does not allow it."""

    reason = "failed_precondition"


class RevisionConflict(TreeServiceError):
    """Optimistic concurrency: the aggregate moved on; re-read and retry."""

    reason = "revision_conflict"

    def __init__(self, resource: str, resource_id: str, expected: int, current: int) -> None:
        super().__init__(
            f"{resource} {resource_id!r} is at revision {current}, not {expected}; "
            "re-read it and retry",
            {"resource": resource, "id": resource_id, "current_revision": str(current)},
        )
        self.current = current


class Contention(TreeServiceError):
    """The database aborted this write to resolve a conflict with a concurrent one; nothing
    was written and the same request (same idempotency key) can simply be retried."""

    reason = "contention"

    def __init__(self) -> None:
        super().__init__(
            "a concurrent write conflicted with this one and it was rolled back; retry it "
            "with the same idempotency key"
        )


class IdempotencyKeyReused(TreeServiceError):
    """The idempotency key belongs to a different request."""

    reason = "idempotency_key_reused"

    def __init__(self, key: str, method: str) -> None:
        super().__init__(
            f"idempotency key {key!r} was already used for a different {method} request; "
            "use a new key for a new request",
            {"idempotency_key": key, "original_method": method},
        )
