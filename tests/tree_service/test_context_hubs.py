"""Hubs' stored members (mirrortree.neighbourhoods) are exactly what the live walk returns.

Generated story graphs are recorded result by result through TreeService.RecordReview, with
objects described again, relations between objects of earlier results and leaf facts, summaries
and story lines linking them; after every result, each hub's stored member copies must equal
the live walk's, row for row, and the hubs must be exactly the objects with the threshold's
links. A hub made later (a lower threshold at start) must read the same through
StoryGraph.GetContext as before it was one.

Each test works in a database of its own on the session cluster: the threshold applied is
database-wide state.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools import pgcluster
from graph_service import app as graph_app
from mirrortree import neighbourhoods
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import fresh_database, graph_settings, switch_app, unique, with_database
from tests.graph_service.story import load_acceptance_story, project_scope, ref, relation_input
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings
from tree_service.migrate import migrate

ENTITIES = [f"ent-{i}" for i in range(3)]
EVENTS = [f"ev-{i}" for i in range(5)]
RELATIONS = [f"rel-{i}" for i in range(3)]
LEAVES = [f"lf-{i}" for i in range(2)]
SUMMARIES = ["sum-0"]
LINES = ["line-0"]
Ref = tuple[common_pb2.ObjectType, str]
EVENT = common_pb2.EVENT
ENTITY = common_pb2.ENTITY


@contextlib.asynccontextmanager
async def tree_in(dsn: str, hub_links: int) -> AsyncIterator[tree_pb2_grpc.TreeServiceStub]:
    service = await tree_app.start(TreeSettings(dsn=dsn, listen="127.0.0.1:0", hub_links=hub_links))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            yield tree_pb2_grpc.TreeServiceStub(channel)
    finally:
        await service.stop()


async def assert_hubs_match_live(conn: asyncpg.Connection, scope_key: str, hub_links: int) -> None:
    """The hubs are the objects with `hub_links` links or more, each one's stored members and
    citations are the live walk's, row for row, and its counts are theirs."""
    degrees = await conn.fetch(
        """SELECT t, id, count(*) AS links
           FROM (SELECT to_type AS t, to_id AS id FROM graph_links WHERE scope_key = $1
                 UNION ALL
                 SELECT from_type, from_id FROM graph_links WHERE scope_key = $1) e
           GROUP BY t, id""",
        scope_key,
    )
    hubs = {
        (r["object_type"], r["object_id"])
        for r in await conn.fetch(
            "SELECT object_type, object_id FROM context_hubs WHERE scope_key = $1", scope_key
        )
    }
    assert hubs == {(r["t"], r["id"]) for r in degrees if r["links"] >= hub_links}
    # nothing stored for a non-hub
    for table in ("context_members", "context_citations", "context_counts"):
        anchors = await conn.fetch(
            f"SELECT DISTINCT anchor_type, anchor_id FROM {table} WHERE scope_key = $1", scope_key
        )
        assert {(r["anchor_type"], r["anchor_id"]) for r in anchors} <= hubs, table
    for object_type, object_id in sorted(hubs):
        x = (scope_key, object_type, object_id)
        for stored_rows, live_rows in (
            (neighbourhoods.STORED_MEMBERS, neighbourhoods.LIVE_MEMBERS),
            (neighbourhoods.STORED_CITATIONS, neighbourhoods.LIVE_CITATIONS),
        ):
            stored = sorted(map(tuple, await conn.fetch(stored_rows, *x)))
            assert stored == sorted(map(tuple, await conn.fetch(live_rows, *x))), x
        counts = sorted(map(tuple, await conn.fetch(neighbourhoods.STORED_COUNTS, *x)))
        assert counts == sorted(map(tuple, await conn.fetch(neighbourhoods.COUNTED_STORED, *x))), x


@dataclass
class GraphSoFar:
    """What earlier results of one generated story recorded, so later ones name only objects
    that exist, and describe each relation with the ends it was first given."""

    existing: set[Ref] = field(default_factory=set)
    relation_ends: dict[str, tuple[Ref, Ref, tree_pb2.RelationKind]] = field(default_factory=dict)


@st.composite
def review_results(draw: st.DrawFn) -> list[dict[str, Any]]:
    """2–5 results, each a dict of RecordReviewRequest fields (without the envelope)."""
    so_far = GraphSoFar()
    results = []
    for number in range(draw(st.integers(2, 5))):
        evidence = f"src-{number}"
        cite = [evidence]
        fields: dict[str, list[Any]] = {
            "source_references": [
                tree_pb2.SourceReferenceInput(
                    id=evidence, source_type="document", source_id="doc-hubs", fragment="quoted"
                )
            ]
        }
        entities = draw(st.lists(st.sampled_from(ENTITIES), unique=True, max_size=3))
        events = draw(st.lists(st.sampled_from(EVENTS), unique=True, max_size=4))
        here = {(ENTITY, e) for e in entities} | {(EVENT, e) for e in events}
        known = so_far.existing | here
        known_entities = sorted(i for t, i in known if t == ENTITY)
        fields["entities"] = [
            tree_pb2.EntityInput(
                id=e,
                label=e,
                source_reference_ids=cite if draw(st.booleans()) else [],
            )
            for e in entities
        ]
        fields["events"] = [
            tree_pb2.EventInput(
                id=e,
                kind=tree_pb2.DISCUSSION,
                title=e,
                event_time=common_pb2.EventTime(
                    start=f"2026-10-{draw(st.integers(1, 28)):02d}T10:00:00Z", known=True
                )
                if draw(st.booleans())
                else common_pb2.EventTime(known=False),
                entity_ids=draw(st.lists(st.sampled_from(known_entities), unique=True))
                if known_entities
                else [],
                source_reference_ids=cite if draw(st.booleans()) else [],
            )
            for e in events
        ]
        ends = sorted(known)
        relations = []
        for relation_id in draw(st.lists(st.sampled_from(RELATIONS), unique=True, max_size=2)):
            if relation_id not in so_far.relation_ends and len(ends) >= 2:
                pair = draw(st.lists(st.sampled_from(ends), min_size=2, max_size=2, unique=True))
                kind = draw(st.sampled_from([tree_pb2.CONTRASTS, tree_pb2.REPLACES]))
                so_far.relation_ends[relation_id] = (pair[0], pair[1], kind)
            if relation_id in so_far.relation_ends:
                new, old, kind = so_far.relation_ends[relation_id]
                relations.append(
                    relation_input(
                        relation_id,
                        kind,
                        ref(*new),
                        ref(*old),
                        reason="generated",
                        source_reference_ids=cite,
                    )
                )
                here.add((common_pb2.RELATION, relation_id))
        fields["relations"] = relations
        known = so_far.existing | here
        about = sorted(known)
        if about:
            fields["leaf_facts"] = [
                tree_pb2.LeafFactInput(
                    id=leaf,
                    text=leaf,
                    about=[ref(*draw(st.sampled_from(about)))],
                    source_reference_ids=cite,
                )
                for leaf in draw(st.lists(st.sampled_from(LEAVES), unique=True, max_size=2))
            ]
            fields["summaries"] = [
                tree_pb2.SummaryInput(
                    id=summary,
                    title=summary,
                    text=summary,
                    fact_refs=[
                        ref(*r)
                        for r in draw(st.lists(st.sampled_from(about), unique=True, max_size=3))
                    ],
                )
                for summary in draw(st.lists(st.sampled_from(SUMMARIES), max_size=1))
            ]
        known_events = sorted(i for t, i in known if t == EVENT)
        fields["story_lines"] = [
            tree_pb2.StoryLineInput(
                id=line,
                title=line,
                event_ids=draw(st.lists(st.sampled_from(known_events), unique=True))
                if known_events
                else [],
                entity_ids=draw(st.lists(st.sampled_from(known_entities), unique=True))
                if known_entities
                else [],
            )
            for line in draw(st.lists(st.sampled_from(LINES), max_size=1))
        ]
        so_far.existing = (
            known
            | {(common_pb2.LEAF_FACT, f.id) for f in fields.get("leaf_facts", [])}
            | {(common_pb2.SUMMARY, s.id) for s in fields.get("summaries", [])}
            | {(common_pb2.STORY_LINE, s.id) for s in fields["story_lines"]}
        )
        results.append(fields)
    return results


def daily_review(project: str, day: str) -> tree_pb2.RecordReviewRequest:
    """An empty daily review result of the project, covering the morning of `day`."""
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=unique("res"),
        scope=project_scope(project),
        phase="daily",
        covered={"from": f"{day}T00:00:00Z", "to": f"{day}T12:00:00Z"},
        review_generated_at=f"{day}T13:00:00Z",
    )


async def record_all(
    stub: tree_pb2_grpc.TreeServiceStub, project: str, results: Sequence[dict[str, Any]]
) -> AsyncIterator[tree_pb2.RecordReviewResponse]:
    for day, fields in enumerate(results, start=1):
        request = daily_review(project, f"2026-11-{day:02d}")
        for name, values in fields.items():
            getattr(request, name).extend(values)
        yield await stub.RecordReview(request)


@pytest.mark.parametrize("hub_links", [1, 2, 3])
@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(results=review_results())
async def test_stored_members_are_the_live_walk(
    empty_database: str, hub_links: int, results: list[dict[str, Any]]
) -> None:
    """After every result, every hub's stored members equal the live walk; the hubs are the
    objects with `hub_links` links (1: every linked object, from its first link; 2 and 3:
    objects that become hubs in a later result, filled then, and kept after)."""
    project = unique("hubs")
    scope_key = f"projects:{project}"
    conn = await asyncpg.connect(empty_database)
    try:
        async with tree_in(empty_database, hub_links) as stub:
            async for _ in record_all(stub, project, results):
                await assert_hubs_match_live(conn, scope_key, hub_links)
    finally:
        await conn.close()


def busy_entity_results(project: str) -> list[tree_pb2.RecordReviewRequest]:
    """Two results that make the story's storage entity busy: 24 more events about it (dated
    to the minute, day or month, or undated; some decisions, described again in the second
    result, some citing a source), relations between them, and leaf facts."""
    results = []
    for day in (1, 2):
        evidence = f"src-busy-{day}"
        request = daily_review(project, f"2026-10-1{day}")
        request.source_references.append(
            tree_pb2.SourceReferenceInput(
                id=evidence, source_type="document", source_id="doc-busy", fragment="quoted"
            )
        )
        for n in range(24 if day == 1 else 12):
            precision = [common_pb2.MINUTE, common_pb2.DAY, common_pb2.MONTH][n % 3]
            request.events.append(
                tree_pb2.EventInput(
                    id=f"ev-busy-{n:02d}",
                    kind=tree_pb2.DECISION if n % 4 == 0 else tree_pb2.DISCUSSION,
                    title=f"busy {n} (result {day})",
                    event_time=common_pb2.EventTime(known=False)
                    if n % 5 == 4
                    else common_pb2.EventTime(
                        start=f"2026-{9 + n % 2:02d}-{1 + n:02d}T{n % 24:02d}:00:00Z",
                        precision=precision,
                        known=True,
                    ),
                    entity_ids=["ent-storage"],
                    source_reference_ids=[evidence] if n % 2 else [],
                )
            )
        for n in range(0, 10, 3):
            request.relations.append(
                relation_input(
                    f"rel-busy-{n}",
                    tree_pb2.REPLACES if n % 2 else tree_pb2.CONTRASTS,
                    ref(EVENT, f"ev-busy-{n + 1:02d}"),
                    ref(EVENT, f"ev-busy-{n:02d}"),
                    reason="generated",
                    source_reference_ids=[evidence],
                )
            )
        request.leaf_facts.append(
            tree_pb2.LeafFactInput(
                id=f"lf-busy-{day}",
                text="busy",
                about=[ref(ENTITY, "ent-storage")],
                source_reference_ids=[evidence],
            )
        )
        results.append(request)
    return results


def as_compared(response: graph_pb2.GetContextResponse) -> graph_pb2.GetContextResponse:
    """A response as compared: its time of reading aside, and cursors only by where they lead
    (they are opaque)."""
    plain = graph_pb2.GetContextResponse()
    plain.CopyFrom(response)
    plain.basis.read_at = ""
    for collection in plain.collections:
        collection.page.next_cursor = ""
        for item in collection.items:
            item.content.next_cursor = ""
    return plain


# The reads compared: both modes, unfiltered and through three time filters.
TIME_FILTERS: list[dict[str, Any]] = [
    {},
    {"time_range": {"from": "2026-09-05T00:00:00Z", "to": "2026-09-20T00:00:00Z"}},
    {
        "time_range": {"from": "2026-09-30T00:00:00Z"},
        "time_basis": common_pb2.REVIEW_GENERATED_AT,
    },
    {"time_range": {"to": "2026-10-11T20:00:00Z"}, "time_basis": common_pb2.RECORDED_AT},
]


async def every_page(
    stub: graph_pb2_grpc.StoryGraphStub, request: graph_pb2.GetContextRequest
) -> list[graph_pb2.GetContextResponse]:
    """Every page of every collection of one read, following each collection's cursor to its
    last page."""
    first = await stub.GetContext(request)
    pages = [as_compared(first)]
    for collection in first.collections:
        cursor = collection.page.next_cursor
        while cursor:
            following = graph_pb2.GetContextRequest()
            following.CopyFrom(request)
            following.cursor = cursor
            page = await stub.GetContext(following)
            pages.append(as_compared(page))
            (continued,) = page.collections
            cursor = continued.page.next_cursor
    return pages


async def test_a_lower_threshold_makes_hubs_that_read_the_same(
    cluster: pgcluster.ClusterInfo,
) -> None:
    """The acceptance story with a busy entity, every page of every collection of every object
    read through GetContext (both modes, with and without time filters) with no hubs, reads
    the same once a tree_service started with a lower threshold has made hubs of its objects —
    their collections paged in SQL — and those hubs' stored members equal the live walk."""
    async with fresh_database(cluster) as name:
        primary = with_database(cluster.primary_dsn, name)

        async def every_context(
            tree_port: int,
            story_project: str,
            objects: list[tuple[str, str]],
            context_cache_mb: int = 64,
        ) -> list[Any]:
            await switch_app(tree_port, True)
            graph = await graph_app.start(
                graph_settings(
                    cluster,
                    replica_dsns=(with_database(cluster.replica_dsn, name),),
                    gate_dsn=primary,
                    context_cache_mb=context_cache_mb,
                )
            )
            try:
                # Its first replica check may time out on a loaded machine; the monitor's next
                # one brings the replica in.
                for _ in range(200):
                    if any(r.healthy for r in graph.router.replicas):
                        break
                    await asyncio.sleep(0.05)
                async with grpc.aio.insecure_channel(f"127.0.0.1:{graph.port}") as channel:
                    stub = graph_pb2_grpc.StoryGraphStub(channel)
                    read = []
                    for object_type, object_id in objects:
                        for mode in (graph_pb2.CURRENT, graph_pb2.TIMELINE):
                            for time_filter in TIME_FILTERS:
                                request = graph_pb2.GetContextRequest(
                                    object_ref=common_pb2.ObjectRef(
                                        type=object_type.upper(), id=object_id
                                    ),
                                    scope=project_scope(story_project),
                                    mode=mode,
                                    page_size=2,
                                    options=options,
                                    **time_filter,
                                )
                                read.append(await every_page(stub, request))
                    return read
            finally:
                await graph.stop()

        service = await tree_app.start(
            TreeSettings(dsn=primary, listen="127.0.0.1:0", hub_links=1_000)
        )
        try:
            story = await load_acceptance_story(f"127.0.0.1:{service.port}")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
                tree_stub = tree_pb2_grpc.TreeServiceStub(channel)
                for request in busy_entity_results(story.project):
                    written = await tree_stub.RecordReview(request)
            options = graph_pb2.ReadOptions(min_consistency=written.consistency)
            scope_key = f"projects:{story.project}"
            conn = await asyncpg.connect(primary)
            try:
                objects = [
                    (r["object_type"], r["object_id"])
                    for r in await conn.fetch(
                        "SELECT DISTINCT object_type, object_id FROM graph_objects"
                        " WHERE scope_key = $1 AND object_type <> 'source_reference' ORDER BY 1, 2",
                        scope_key,
                    )
                ]
                assert await conn.fetchval("SELECT count(*) FROM context_hubs") == 0
                before = await every_context(service.port, story.project, objects)
            finally:
                await conn.close()
        finally:
            await service.stop()

        lower = await tree_app.start(TreeSettings(dsn=primary, listen="127.0.0.1:0", hub_links=2))
        try:
            assert lower.hub_catch_up is not None
            assert await lower.hub_catch_up > 0
            conn = await asyncpg.connect(primary)
            try:
                assert (
                    await conn.fetchval(
                        "SELECT count(*) FROM context_hubs WHERE object_type = 'entity'"
                    )
                    > 0
                )
                await assert_hubs_match_live(conn, scope_key, 2)
                assert await conn.fetchval("SELECT hub_links FROM context_hub_threshold") == 2
            finally:
                await conn.close()
            # A hub is paged in SQL whether the service holds neighbourhoods or not; a
            # non-hub's reads after its first come from memory when it does.
            after = await every_context(lower.port, story.project, objects, 0)
            after_held = await every_context(lower.port, story.project, objects)
        finally:
            await lower.stop()
        assert len(before) == len(objects) * 2 * len(TIME_FILTERS)
        assert sum(len(pages) for pages in before) > 4 * len(before)  # collections were paged
        for object_read, (read_before, read_after, read_after_held) in enumerate(
            zip(before, after, after_held, strict=True)
        ):
            assert read_after == read_before, object_read
            assert read_after_held == read_before, object_read


async def test_the_counts_migration_counts_the_hubs_made_before_it(empty_database: str) -> None:
    """Migration 0015 fills context_counts for the hubs of a graph stored before it: its
    counts are those of their stored members and citations, and later results keep adding to
    them."""
    service = await tree_app.start(
        TreeSettings(dsn=empty_database, listen="127.0.0.1:0", hub_links=2)
    )
    try:
        story = await load_acceptance_story(f"127.0.0.1:{service.port}")
        scope_key = f"projects:{story.project}"
        conn = await asyncpg.connect(empty_database)
        try:
            # The database as it was before 0015, with the hubs and members 0013 and 0014 keep.
            await conn.execute(
                """DROP TABLE context_counts;
                   DROP INDEX context_members_decisions, graph_links_changes,
                              graph_objects_completed_changes;
                   DELETE FROM schema_migrations WHERE version = 15"""
            )
            assert await conn.fetchval("SELECT count(*) FROM context_members") > 0
            assert await migrate(conn) == [15]
            await assert_hubs_match_live(conn, scope_key, 2)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
                tree_stub = tree_pb2_grpc.TreeServiceStub(channel)
                for request in busy_entity_results(story.project):
                    await tree_stub.RecordReview(request)
            await assert_hubs_match_live(conn, scope_key, 2)
        finally:
            await conn.close()
    finally:
        await service.stop()
