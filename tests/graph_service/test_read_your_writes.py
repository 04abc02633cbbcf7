"""A read that names a write's consistency token sees that write, the caller's own binding
included: replay on the replica is paused, so the write is provably not there when the read
arrives."""

from __future__ import annotations

import asyncio

from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import create_tree, replay_paused, unique


async def test_a_new_binding_is_resolved_once_the_replica_has_it(cluster, tree_stub, graph_stub):
    project = unique("own")
    session = (await create_tree(tree_stub, project_id=project)).tree
    async with replay_paused(cluster.replica_dsn) as replica:
        binding = await tree_stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=unique("k"), session_id=session.id, runtime="Continue"
            )
        )
        search = asyncio.ensure_future(
            graph_stub.Search(
                graph_pb2.SearchRequest(
                    query="x", options=graph_pb2.ReadOptions(min_consistency=binding.consistency)
                ),
                metadata=[("authorization", f"Bearer {binding.token}")],
            )
        )
        # Read before the binding replays, the token would be unknown: the read must wait.
        await asyncio.sleep(0.3)
        assert not search.done(), search.exception() if search.done() else None
        await replica.execute("SELECT pg_wal_replay_resume()")
        response = await search
    assert response.basis.scope.resolution == "session_current_project"
    assert list(response.basis.scope.resolved.projects.project_ids) == [project]
