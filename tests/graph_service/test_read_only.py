"""The three queries write nothing: proven on the primary's write-ahead log, not assumed.
(They also call no model: graph_service has no model client at all.)

Every page of every query runs against the replica, in READ ONLY transactions; this test
checks the consequence that matters: between the first and the last call, no WAL record
touches a story-graph or tree table (every one of them is logged, so any insert, update or
delete would show). Table statistics are not the proof: a backend reports its counters up to
10 s after its writes, so an earlier test's writes can surface during these reads.
"""

from __future__ import annotations

import asyncpg

from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import load_acceptance_story

TABLES = (
    "review_results",
    "scope_results",
    "graph_objects",
    "graph_links",
    "sources",
    "preferences",
    "source_revisions",
    "trees",
    "nodes",
    "bindings",
    "idempotency_keys",
)


async def wal_touching(
    conn: asyncpg.Connection, filenodes: set[int], start: int, end: int
) -> list[str]:
    """WAL records between two positions that change a block of one of the tables. Records
    without a transaction id are left out: they are maintenance (autovacuum's pruning and
    visibility marks, which may run at any time), while every insert, update or delete runs in
    a transaction that has one."""
    if end <= start:  # asyncpg reads pg_lsn as an int
        return []
    touched = []
    for record in await conn.fetch(
        "SELECT resource_manager, record_type, block_ref FROM pg_get_wal_records_info($1, $2) "
        "WHERE xid <> '0'",
        start,
        end,
    ):
        refs = record["block_ref"] or ""
        if any(f"/{node} " in refs or refs.endswith(f"/{node}") for node in filenodes):
            touched.append(f"{record['resource_manager']} {record['record_type']} {refs}")
    return touched


async def test_search_context_and_source_reads_write_nothing(
    cluster, tree_service, tree_stub, graph_stub
):
    story = await load_acceptance_story(f"127.0.0.1:{tree_service.port}")
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        filenodes = {
            int(r["relfilenode"])
            for r in await conn.fetch(
                "SELECT relfilenode FROM pg_class WHERE relname = any($1::text[])", list(TABLES)
            )
        }
        # The replica has replayed the story before the measurement starts.
        await graph_stub.Search(
            graph_pb2.SearchRequest(query="decision", scope=story.scope, options=story.options())
        )
        start = await conn.fetchval("SELECT pg_current_wal_lsn()")

        for query in ("decision", "SQLite", "zzz-no-match"):
            await graph_stub.Search(graph_pb2.SearchRequest(query=query, scope=story.scope))
        for mode in (graph_pb2.CURRENT, graph_pb2.TIMELINE):
            for object_ref in (
                common_pb2.ObjectRef(type=common_pb2.ENTITY, id="ent-storage"),
                common_pb2.ObjectRef(type=common_pb2.EVENT, id="ev-decide-a"),
                common_pb2.ObjectRef(type=common_pb2.PREFERENCE, id=story.ids["pref-boring-tech"]),
            ):
                await graph_stub.GetContext(
                    graph_pb2.GetContextRequest(object_ref=object_ref, scope=story.scope, mode=mode)
                )
        for kind in (graph_pb2.SNAPSHOT, graph_pb2.CURRENT_CONTENT):
            await graph_stub.ReadSource(
                graph_pb2.ReadSourceRequest(
                    source_reference_id="src-notes-v2", scope=story.scope, read_kind=kind
                )
            )

        end = await conn.fetchval("SELECT pg_current_wal_lsn()")
        assert await wal_touching(conn, filenodes, start, end) == []

        # Control: the same check does see a write (so the assertion above can fail).
        await tree_stub.RecordSource(
            tree_pb2.RecordSourceRequest(
                idempotency_key=unique("k"),
                source_id=unique("control"),
                source_type="document",
                text="a write",
            )
        )
        after = await conn.fetchval("SELECT pg_current_wal_lsn()")
        assert await wal_touching(conn, filenodes, end, after) != []
    finally:
        await conn.close()
