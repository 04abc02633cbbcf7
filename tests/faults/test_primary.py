"""The write path under real faults: the primary restarted (crashed, or stopped at once) under
steady writes costs no INTERNAL answer and no acknowledged write — a write cut off while it
committed answers `outcome_unknown`, and its retry under the same idempotency key is applied
at most once."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest

from devtools.pgcluster import faults
from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.faults.load import Writes, wait_for, writing


async def more_acknowledged(writes: Writes, what: str) -> None:
    start = len(writes.acknowledged)
    await wait_for(lambda: len(writes.acknowledged) >= start + 40, 60, what)


@pytest.mark.timeout(240)
async def test_the_primary_restarted_under_writes_loses_no_acknowledged_write(
    faulty_config, faulty_tree
):
    project = unique("p")
    async with writing(faulty_tree.port, project, workers=8) as writes:
        for how in ("sigkill", "immediate", "fast"):
            await more_acknowledged(writes, f"writes before a {how} stop")
            await asyncio.to_thread(faults.take_down, faulty_config, "primary", how)
            await asyncio.sleep(0.3)  # writes meet the missing primary
            await asyncio.to_thread(faults.restart, faulty_config, "primary")
        await more_acknowledged(writes, "writes after the last restart")
    assert writes.tally.bad() == {}, writes.tally.outcomes
    reasons = {k for k in writes.tally.outcomes if k != "OK"}
    assert reasons <= {
        "UNAVAILABLE/database_unavailable",
        "UNAVAILABLE/outcome_unknown",
        "UNAVAILABLE/",
    }, writes.tally.outcomes
    assert reasons, "no write met the missing primary"
    # Every acknowledged write is there, once.
    assert len(set(writes.acknowledged)) == len(writes.acknowledged)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{faulty_tree.port}") as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        for tree_id in writes.acknowledged:
            found = await stub.GetTree(tree_pb2.GetTreeRequest(tree_id=tree_id))
            assert found.tree.id == tree_id


SLOW_COMMIT = """
CREATE OR REPLACE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.title = 'slow commit' THEN PERFORM pg_sleep(30); END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON trees
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_slow_commit();
"""


async def test_a_write_cut_off_while_it_commits_is_outcome_unknown_and_its_retry_applies_once(
    faulty_cluster, faulty_tree
):
    """A deferred trigger holds one CreateTree inside its COMMIT; its session is ended there,
    so the client cannot know whether it was applied."""
    admin = await asyncpg.connect(faulty_cluster.primary_dsn)
    request = tree_pb2.CreateTreeRequest(
        idempotency_key=unique("k"), title="slow commit", owner="o", project_id=unique("p")
    )
    try:
        await admin.execute(SLOW_COMMIT)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{faulty_tree.port}") as channel:
            stub = tree_pb2_grpc.TreeServiceStub(channel)
            call = asyncio.ensure_future(stub.CreateTree(request))
            committing = None
            for _ in range(500):
                committing = await admin.fetchval(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                    "AND query = 'COMMIT;'"
                )
                if committing:
                    break
                await asyncio.sleep(0.01)
            assert committing, "the write never reached its COMMIT"
            await admin.execute("SELECT pg_terminate_backend($1)", committing)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            failure = describe(caught.value)
            assert (failure.code, failure.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "outcome_unknown",
            )
            assert "same idempotency key" in failure.message
            await admin.execute("DROP TRIGGER test_slow_commit ON trees")
            created = await stub.CreateTree(request)
            replayed = await stub.CreateTree(request)
            assert replayed.tree.id == created.tree.id
            count = await admin.fetchval(
                "SELECT count(*) FROM trees WHERE project_id = $1", request.project_id
            )
            assert count == 1
    finally:
        await admin.execute("DROP TRIGGER IF EXISTS test_slow_commit ON trees")
        await admin.execute("DROP FUNCTION IF EXISTS test_slow_commit()")
        await admin.close()
