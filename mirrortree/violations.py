"""A bad input field, named the way the gRPC richer error model reports it; kept apart from
`rpcstatus` so that domain rules can name fields without importing grpc."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldViolation:
    """One bad input field: a dotted path such as `events[2].event_time.start` and why."""

    field: str
    description: str
