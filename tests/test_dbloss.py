"""Telling a lost database from a bug: by error class, and for the driver's ambiguous errors by
the state of the connection the call used — real connections, cut by the server."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from mirrortree import dbloss


async def terminated(conn: asyncpg.Connection, admin: asyncpg.Connection) -> BaseException:
    """The error a statement on `conn` raises once the server ended its session."""
    await admin.execute("SELECT pg_terminate_backend($1)", conn.get_server_pid())
    with pytest.raises(Exception) as caught:
        await conn.fetchval("SELECT 1")
    return caught.value


async def test_a_session_ended_by_the_server_is_a_lost_database(cluster):
    admin = await asyncpg.connect(cluster.primary_dsn)
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        error = await terminated(conn, admin)
        # Which error the driver raises depends on when the server's goodbye is read: one that
        # names the loss by its class, or an ambiguous one that the closed connection decides.
        for _ in range(200):
            if conn.is_closed():
                break
            await asyncio.sleep(0.01)
        assert dbloss.database_lost(error, conn) is error
        # What asyncpg raises for the next use of that connection: ambiguous by class, decided
        # by the connection's state.
        ambiguous = asyncpg.InterfaceError("cannot call Transaction.__aexit__()")
        assert dbloss.database_lost(ambiguous, conn) is ambiguous
        switch = asyncpg.InternalClientError("cannot switch to state 12")
        assert dbloss.database_lost(switch, conn) is switch
        assert dbloss.database_lost(asyncpg.DataError("bad value"), conn) is None
    finally:
        await admin.close()
        await conn.close()


async def test_the_same_driver_errors_on_a_live_connection_are_not_a_lost_database(cluster):
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        assert dbloss.database_lost(asyncpg.InterfaceError("misuse"), conn) is None
        assert dbloss.database_lost(asyncpg.InternalClientError("misuse"), conn) is None
        # Without a connection and none tracked for the call, nothing shows a loss.
        assert dbloss.database_lost(asyncpg.InterfaceError("misuse")) is None
    finally:
        await conn.close()


async def test_a_call_judges_ambiguous_errors_by_the_connections_it_acquired(cluster):
    admin = await asyncpg.connect(cluster.primary_dsn)
    pool = await asyncpg.create_pool(
        cluster.primary_dsn, min_size=1, max_size=1, setup=dbloss.track_connections
    )
    token = dbloss.start_call()
    try:
        async with pool.acquire() as conn:
            await terminated(conn, admin)
        ambiguous = asyncpg.InterfaceError("the underlying connection is closed")
        assert dbloss.database_lost(ambiguous) is ambiguous
    finally:
        dbloss.end_call(token)
        await pool.close()
        await admin.close()
    # Another call has its own record.
    token = dbloss.start_call()
    try:
        assert dbloss.database_lost(asyncpg.InterfaceError("closed")) is None
    finally:
        dbloss.end_call(token)


def test_an_error_raised_from_none_hides_the_loss_it_handled():
    try:
        try:
            raise ConnectionResetError("reset")
        except ConnectionResetError:
            raise ValueError("handled") from None
    except ValueError as handled:
        assert dbloss.database_lost(handled) is None
    try:
        try:
            raise ConnectionResetError("reset")
        except ConnectionResetError:
            raise ValueError("while handling")  # noqa: B904 - the loss stays in the chain
    except ValueError as error:
        assert isinstance(dbloss.database_lost(error), ConnectionResetError)


def test_the_outcome_of_a_write_cut_off_while_committing_is_found_in_the_chain():
    unknown = dbloss.OutcomeUnknown("lost during COMMIT")
    try:
        raise RuntimeError("wrapper") from unknown
    except RuntimeError as error:
        assert dbloss.outcome_unknown(error) is unknown
    assert dbloss.outcome_unknown(RuntimeError("other")) is None
