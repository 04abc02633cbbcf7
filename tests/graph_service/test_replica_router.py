"""ReplicaRouter.run with a transaction: the read answers first, its transaction ends after.

A read's COMMIT and the release of its connection run in the background once the read has
returned. These tests hold the router to what that must still guarantee: the read ran in one
REPEATABLE READ READ ONLY transaction, a failed read is rolled back before its error is
raised, every connection comes back to the pool with no transaction left open on the replica,
and nothing goes wrong unseen in the background.
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg
import pytest

from graph_service.errors import ReplicaUnavailable
from graph_service.queries import replica as queries
from graph_service.replicas import ReplicaRouter
from tests.conftest import unique


async def open_transactions(replica_dsn: str, application: str) -> list[str]:
    """The states of the replica's sessions of `application` that are inside a transaction."""
    conn = await asyncpg.connect(replica_dsn)
    try:
        rows = await conn.fetch(
            "SELECT state FROM pg_stat_activity "
            "WHERE application_name = $1 AND state LIKE '%in transaction%'",
            application,
        )
        return [r["state"] for r in rows]
    finally:
        await conn.close()


async def one_connection_router(replica_dsn: str, application: str) -> ReplicaRouter:
    """A started router over the replica, one connection, its sessions named `application`."""
    router = ReplicaRouter(
        (f"{replica_dsn}?application_name={application}",), pool_max=1, health_interval_s=60
    )
    await router.start()
    return router


async def test_reads_answer_then_end_their_transactions_and_give_back_every_connection(cluster):
    # What the event loop is told of: asyncpg reports a connection released with its
    # transaction open, asyncio a background task's error that nobody retrieved.
    reported: list[str] = []
    asyncio.get_running_loop().set_exception_handler(
        lambda _, context: reported.append(str(context.get("message")))
    )
    application = unique("router")
    router = await one_connection_router(cluster.replica_dsn, application)
    try:

        async def settings(conn: asyncpg.Connection) -> tuple[str, str]:
            row = await conn.fetchrow(
                "SELECT current_setting('transaction_isolation') AS isolation, "
                "current_setting('transaction_read_only') AS read_only"
            )
            return row["isolation"], row["read_only"]

        # One connection: each read waits for the one before it to be committed and released.
        for _ in range(20):
            answered = await asyncio.wait_for(
                router.run(settings, begin=queries.BEGIN_READ_WITH_GENERIC_PLANS), timeout=10
            )
            assert answered == ("repeatable read", "on")

        async def failing(conn: asyncpg.Connection) -> None:
            await conn.fetchval("SELECT 1")
            raise LookupError("the read failed")

        with pytest.raises(LookupError):
            await router.run(failing, begin=queries.BEGIN_READ)
        # Rolled back before the error came out: the connection is in the pool, idle.
        (replica,) = router.replicas
        assert replica.pool is not None
        assert replica.pool.get_idle_size() == replica.pool.get_size() == 1
        assert await open_transactions(cluster.replica_dsn, application) == []

        # Reads in flight together: each answers, and with no read after them every
        # transaction still ends and every connection comes back.
        answers = await asyncio.gather(
            *(router.run(settings, begin=queries.BEGIN_READ) for _ in range(8))
        )
        assert set(answers) == {("repeatable read", "on")}
        for _ in range(100):
            if replica.pool.get_idle_size() == replica.pool.get_size():
                break
            await asyncio.sleep(0.02)
        assert replica.pool.get_idle_size() == replica.pool.get_size()
        assert await open_transactions(cluster.replica_dsn, application) == []

        # Closing right after a read, its transaction perhaps still ending, closes cleanly.
        assert await router.run(settings, begin=queries.BEGIN_READ) == ("repeatable read", "on")
    finally:
        await router.close()
        asyncio.get_running_loop().set_exception_handler(None)
    assert reported == []


@pytest.mark.parametrize("noticed", [False, True], ids=["mid-statement", "between-statements"])
async def test_a_read_whose_session_the_server_ended_fails_over(cluster, caplog, noticed):
    """A replica session ended under a read, whether the driver learns of it while the read's
    next statement is under way or before it is sent (asyncpg then has already given the
    connection back to its pool, and its proxy refuses every call): the read fails over — here
    to no other replica — instead of failing as a bug, and the replica is marked down for the
    read's own error, not for one the router met handling it."""
    router = await one_connection_router(cluster.replica_dsn, unique("ended"))
    admin = await asyncpg.connect(cluster.replica_dsn)
    own: list[BaseException] = []
    try:

        async def ended(conn: asyncpg.Connection) -> None:
            await admin.execute("SELECT pg_terminate_backend($1)", conn.get_server_pid())
            if noticed:
                await asyncio.sleep(0.2)  # the driver reads the server's goodbye meanwhile
            try:
                await conn.fetchval("SELECT 1")
            except Exception as exc:
                own.append(exc)
                raise

        with (
            caplog.at_level(logging.WARNING, logger="graph_service.replicas"),
            pytest.raises(ReplicaUnavailable) as raised,
        ):
            await router.run(ended, begin=queries.BEGIN_READ, wait_s=0.5)
        (error,) = own
        assert raised.value.__cause__ is error
        (lost,) = [r.getMessage() for r in caplog.records if "lost under a read" in r.getMessage()]
        assert lost == f"replica lost under a read: {type(error).__name__}: {error}"
        assert not router.replicas[0].healthy
    finally:
        await admin.close()
        await router.close()
