"""Telling a lost database from a bug, by asyncpg error class and by connection state.

A database that goes away under a call (refused, reset, shut down, restarted, or no longer a
primary) surfaces as many asyncpg error classes. Most say so by their class. Two do not: a
plain `InterfaceError` ("the underlying connection is closed") and a plain
`InternalClientError` ("cannot switch to state …") are also what a misuse of the driver raises,
so they count as a lost database only when a connection the call used is in fact closed. Pools
created with `track_connections` as their `setup` hook record, per call, the connections each
call acquired; `start_call` opens that record (the server interceptor does, for every RPC).

A write whose connection is lost while its COMMIT is in flight (or just after, while reading
its commit position) may or may not have been applied: `OutcomeUnknown` says so, and the
client retries with the same idempotency key, which applies it at most once.
"""

from __future__ import annotations

import contextvars
from typing import Any

import asyncpg
from asyncpg import exceptions as pgexc

# Errors whose class alone says the database went away (or stopped accepting writes).
LOST_BY_CLASS: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset, timed out (TimeoutError is an OSError)
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08, ConnectionDoesNotExistError among them
    asyncpg.CannotConnectNowError,  # starting up or shutting down
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    pgexc.DatabaseDroppedError,
    asyncpg.ReadOnlySQLTransactionError,  # the primary became a standby
)

# Driver errors that mean a lost database only if the call's connection is closed.
_LOST_IF_CLOSED: tuple[type[BaseException], ...] = (
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
)

# Subclasses of the above that are always about the request or the client, never the server.
_NEVER_LOST: tuple[type[BaseException], ...] = (
    asyncpg.DataError,
    pgexc.ClientConfigurationError,
    pgexc.UnsupportedClientFeatureError,
    pgexc.UnsupportedServerFeatureError,
    pgexc.OutdatedSchemaCacheError,
)

_held: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "mirrortree_held_connections", default=None
)


class DatabaseLost(Exception):
    """Raised in place of a driver error once its connection is known to be gone."""


class OutcomeUnknown(Exception):
    """The connection was lost while a write's commit was in flight: it may have applied."""


def start_call() -> contextvars.Token[list[Any] | None]:
    """Begin recording the connections the current call acquires (see `track_connections`)."""
    return _held.set([])


def end_call(token: contextvars.Token[list[Any] | None]) -> None:
    try:
        _held.reset(token)
    except ValueError:
        # A streaming handler closed from another context; the record dies with that context.
        _held.set(None)


def unwrapped(connection: Any) -> Any:
    """The connection behind an asyncpg pool's proxy (or `connection` itself). The proxy
    forgets it once the pool takes it back, which asyncpg does at once when the server ends
    the session; then the proxy can no longer say whether it is closed, and this one can."""
    return getattr(connection, "_con", None) or connection


async def track_connections(proxy: Any) -> None:
    """asyncpg pool `setup` hook: remember the connection behind each acquisition, so that a
    later ambiguous driver error can be judged by whether that connection is closed."""
    held = _held.get()
    if held is not None:
        held.append(unwrapped(proxy))


def _closed(connection: Any) -> bool:
    try:
        return bool(connection.is_closed())
    except asyncpg.InterfaceError:
        return False  # a proxy already released: its state is no longer known


def database_lost(
    exc: BaseException, connection: asyncpg.Connection | None = None
) -> BaseException | None:
    """The error in `exc`'s chain (itself, its cause or context) that shows the database was
    lost, or None. `connection`: the one the failing statement ran on, when the caller has it;
    otherwise those the current call acquired from tracking pools are consulted."""
    seen: set[int] = set()
    current: BaseException | None = exc
    ambiguous: BaseException | None = None
    while current is not None and id(current) not in seen:
        if isinstance(current, (DatabaseLost, *LOST_BY_CLASS)):
            return current
        maybe = isinstance(current, _LOST_IF_CLOSED) and not isinstance(current, _NEVER_LOST)
        if ambiguous is None and maybe:
            ambiguous = current
        seen.add(id(current))
        current = _underlying(current)
    if ambiguous is None:
        return None
    if connection is not None:
        return ambiguous if _closed(connection) else None
    held = _held.get() or []
    return ambiguous if any(_closed(c) for c in held) else None


def outcome_unknown(exc: BaseException) -> OutcomeUnknown | None:
    """The OutcomeUnknown in `exc`'s chain, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OutcomeUnknown):
            return current
        seen.add(id(current))
        current = _underlying(current)
    return None


def _underlying(exc: BaseException) -> BaseException | None:
    """The error `exc` was raised from or while handling — unless raised `from None`: then its
    author handled that one (a statement cancelled past a budget, say)."""
    if exc.__cause__ is not None:
        return exc.__cause__
    return None if exc.__suppress_context__ else exc.__context__
