"""StoryGraph.GetContext pages: every collection to its last page, long content in parts,
cursors that go stale, and what every page says of the evidence a filter left out."""

from __future__ import annotations

import json

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.contexts import collection
from tests.graph_service.story import (
    options,
    project_scope,
    record,
    ref,
    relation_input,
)

EVENT, ENTITY = common_pb2.EVENT, common_pb2.ENTITY
SUPERSEDED, CURRENT = common_pb2.VALIDITY_SUPERSEDED, common_pb2.VALIDITY_CURRENT
DISPUTED, UNKNOWN = common_pb2.VALIDITY_DISPUTED, common_pb2.VALIDITY_UNKNOWN


async def record_many(tree_stub, project: str, count: int) -> tree_pb2.RecordReviewResponse:
    """One entity with `count` events, changes, leaf facts and relations around it."""
    sources = [
        tree_pb2.SourceReferenceInput(
            id=f"src-{i:03}", source_type="document", source_id="doc-steps", fragment=f"s{i}"
        )
        for i in range(count)
    ]
    events = [
        tree_pb2.EventInput(
            id=f"ev-{i:03}",
            kind=tree_pb2.DECISION,
            title=f"Step {i}",
            entity_ids=["hub"],
            source_reference_ids=[f"src-{i:03}"],
            event_time=common_pb2.EventTime(start=f"2026-10-01T{i % 24:02}:{i % 60:02}:00Z")
            if i % 3
            else common_pb2.EventTime(),
        )
        for i in range(count)
    ]
    response: tree_pb2.RecordReviewResponse = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
            phase="daily",
            review_generated_at="2026-10-02T00:00:00Z",
            entities=[tree_pb2.EntityInput(id="hub", label="Hub")],
            events=events,
            source_references=sources,
            entity_changes=[
                tree_pb2.EntityChangeInput(
                    id=f"chg-{i:03}", entity_id="hub", change_type="revised", description="x"
                )
                for i in range(count)
            ],
            leaf_facts=[
                tree_pb2.LeafFactInput(
                    id=f"lf-{i:03}",
                    text=f"fact {i}",
                    about=[ref(ENTITY, "hub")],
                    source_reference_ids=[f"src-{i:03}"],
                )
                for i in range(count)
            ],
            relations=[
                relation_input(
                    f"rel-{i:03}",
                    tree_pb2.REPLACES,
                    ref(EVENT, f"ev-{i + 1:03}"),
                    ref(EVENT, f"ev-{i:03}"),
                    reason="stated",
                    source_reference_ids=[f"src-{i + 1:03}"],
                )
                for i in range(count - 1)
            ],
        )
    )
    return response


@pytest.mark.parametrize("mode", [graph_pb2.CURRENT, graph_pb2.TIMELINE])
async def test_every_collection_pages_to_its_last_page_without_gaps(tree_stub, graph_stub, mode):
    project = unique("paging")
    written = await record_many(tree_stub, project, 23)
    scope = common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project]))
    request = graph_pb2.GetContextRequest(
        object_ref=ref(ENTITY, "hub"),
        scope=scope,
        mode=mode,
        page_size=4,
        options=graph_pb2.ReadOptions(min_consistency=written.consistency),
    )
    first = await graph_stub.GetContext(request)
    seen_total = 0
    for coll in first.collections:
        keys = [(i.ref.type, i.ref.id, i.result_id) for i in coll.items]
        cursor = coll.page.next_cursor
        pages = 1
        while cursor:
            follow = graph_pb2.GetContextRequest()
            follow.CopyFrom(request)
            follow.cursor = cursor
            page = await graph_stub.GetContext(follow)
            assert [c.name for c in page.collections] == [coll.name]
            keys += [(i.ref.type, i.ref.id, i.result_id) for i in page.collections[0].items]
            cursor = page.collections[0].page.next_cursor
            assert page.collections[0].page.total == coll.page.total
            pages += 1
        assert len(keys) == len(set(keys)), f"duplicates in {coll.name}"
        assert len(keys) == coll.page.total.exact, coll.name
        seen_total += len(keys)
        if coll.name in ("events", "changes", "leaves", "sources"):
            assert len(keys) == 23 and pages == 6, coll.name
        if coll.name == "relations":
            assert len(keys) == 22
    assert seen_total > 100
    if mode == graph_pb2.TIMELINE:
        # Every third event has no time (8 of 23); changes, leaves and relations have none.
        assert collection(first, "timeline").page.total.exact == 15
        assert collection(first, "undated").page.total.exact == 8 + 23 + 23 + 22


async def test_long_content_continues_in_code_points_and_concatenates(tree_stub, graph_stub):
    project = unique("content")
    description = "起🙂" * 3_000 + "end"  # astral characters: 1 code point, 2 UTF-16 units
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
            phase="daily",
            review_generated_at="2026-10-02T00:00:00Z",
            events=[
                tree_pb2.EventInput(
                    id="long", kind=tree_pb2.MILESTONE, title="Long", description=description
                )
            ],
        )
    )
    request = graph_pb2.GetContextRequest(
        object_ref=ref(EVENT, "long"),
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
        content_page_size=1_000,
        options=graph_pb2.ReadOptions(min_consistency=written.consistency),
    )
    response = await graph_stub.GetContext(request)
    fragment = collection(response, "snapshots").items[0].content
    parts = [fragment]
    while fragment.next_cursor:
        follow = graph_pb2.GetContextRequest()
        follow.CopyFrom(request)
        follow.cursor = fragment.next_cursor
        page = await graph_stub.GetContext(follow)
        fragment = page.collections[0].items[0].content
        parts.append(fragment)
    assert [p.start for p in parts] == [i * 1_000 for i in range(len(parts))]
    assert all(p.end - p.start == len(p.text) for p in parts)
    whole = "".join(p.text for p in parts)
    assert len(whole) == parts[0].total_length
    assert json.loads(whole)["description"] == description


async def test_response_over_the_byte_limit_fails_explicitly(tree_stub, graph_stub):
    project = unique("large")
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
            phase="daily",
            review_generated_at="2026-10-02T00:00:00Z",
            entities=[tree_pb2.EntityInput(id="hub", label="Hub")],
            events=[
                tree_pb2.EventInput(
                    id=f"big-{i}",
                    kind=tree_pb2.DISCUSSION,
                    title="Big",
                    description="漢" * 8_000,
                    entity_ids=["hub"],
                )
                for i in range(10)
            ],
        )
    )
    request = graph_pb2.GetContextRequest(
        object_ref=ref(ENTITY, "hub"),
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
        content_page_size=8_000,
        options=graph_pb2.ReadOptions(min_consistency=written.consistency),
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(request)
    assert caught.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert describe(caught.value).reason == "response_too_large"
    assert "content_page_size" in caught.value.details()
    request.content_page_size = 1_000
    smaller = await graph_stub.GetContext(request)
    assert smaller.ByteSize() <= 100_000


async def test_cursor_goes_stale_after_an_ingestion_and_tampering_is_refused(tree_stub, graph_stub):
    project = unique("stale")
    written = await record_many(tree_stub, project, 8)
    scope = common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project]))
    request = graph_pb2.GetContextRequest(
        object_ref=ref(ENTITY, "hub"),
        scope=scope,
        page_size=2,
        options=graph_pb2.ReadOptions(min_consistency=written.consistency),
    )
    first = await graph_stub.GetContext(request)
    cursor = collection(first, "events").page.next_cursor
    assert cursor

    tampered = graph_pb2.GetContextRequest()
    tampered.CopyFrom(request)
    tampered.cursor = cursor[:-3] + ("AAA" if not cursor.endswith("AAA") else "BBB")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(tampered)
    assert describe(caught.value).reason == "invalid_cursor"

    other_object = graph_pb2.GetContextRequest()
    other_object.CopyFrom(request)
    other_object.object_ref.id = "ev-001"
    other_object.object_ref.type = EVENT
    other_object.cursor = cursor
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(other_object)
    assert describe(caught.value).reason == "invalid_cursor"

    again = await record_many(tree_stub, project, 3)  # a concurrent ingestion in this scope
    follow = graph_pb2.GetContextRequest()
    follow.CopyFrom(request)
    follow.cursor = cursor
    follow.options.min_consistency.CopyFrom(again.consistency)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(follow)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert describe(caught.value).reason == "stale_cursor"

    # A new read sees the new result at once: the service caches a neighbourhood per read
    # revision of the scope, never across one.
    fresh = graph_pb2.GetContextRequest()
    fresh.CopyFrom(request)
    fresh.options.min_consistency.CopyFrom(again.consistency)
    before = collection(first, "events").page.total.exact
    after = collection(await graph_stub.GetContext(fresh), "events").page.total.exact
    assert (before, after) == (8, 8 + 3)


@pytest.mark.parametrize("mode", [graph_pb2.CURRENT, graph_pb2.TIMELINE])
async def test_every_item_continues_its_content_as_the_same_part(graph_stub, story, mode):
    """Stored, computed and background items alike: each fragment of an item's content keeps
    the item's part and label, the fragments concatenate to its JSON document, and a response
    that continues one item does not pass itself off as a complete page of its collection."""
    request = graph_pb2.GetContextRequest(
        object_ref=ref(ENTITY, "ent-storage"),
        scope=story.scope,
        mode=mode,
        content_page_size=100,
        options=story.options(),
    )
    first = await graph_stub.GetContext(request)
    continued = set()
    for listed in first.collections:
        if not listed.items:
            continue
        item = listed.items[0]
        fragment, parts = item.content, [item.content.text]
        while fragment.next_cursor:
            follow = graph_pb2.GetContextRequest()
            follow.CopyFrom(request)
            follow.cursor = fragment.next_cursor
            page = await graph_stub.GetContext(follow)
            (alone,) = page.collections
            assert alone.name == listed.name
            (next_item,) = alone.items
            assert (next_item.label, next_item.content.part) == (item.label, item.content.part)
            assert not alone.page.complete and not alone.page.has_more
            assert alone.page.limit_reason == "content_continuation"
            assert alone.page.total == listed.page.total
            fragment = next_item.content
            parts.append(fragment.text)
        assert len(parts) > 1
        whole = json.loads("".join(parts))
        assert whole["type"] == common_pb2.ObjectType.Name(item.ref.type).lower()
        continued.add(listed.name)
    expected = (
        {"current", "snapshots", "events", "relations", "related", "sources", "preferences"}
        if mode == graph_pb2.CURRENT
        else {"timeline", "undated", "snapshots", "related", "sources"}
    )
    assert expected <= continued


async def test_unknown_time_exclusions_are_counted_on_every_page(tree_stub, graph_stub):
    """What an event-time filter leaves out for an unknown time is said on every page of the
    read, cursor pages included (never a 0 standing in for it), and the timeline counts the
    object's own undated copies, which it would otherwise list."""
    project = unique("proj")
    scope = project_scope(project)
    await record_many(tree_stub, project, 9)
    written = await record(
        tree_stub,
        project,
        events=[tree_pb2.EventInput(id="ev-alone", kind=tree_pb2.DISCUSSION, title="Alone")],
    )
    october_first = common_pb2.TimeRange(
        **{"from": "2026-10-01T00:00:00Z", "to": "2026-10-02T00:00:00Z"}
    )
    request = graph_pb2.GetContextRequest(
        object_ref=ref(ENTITY, "hub"),
        scope=scope,
        time_range=october_first,
        page_size=2,
        content_page_size=100,
        options=options(written),
    )
    first = await graph_stub.GetContext(request)
    excluded = first.coverage.unknown_time_excluded
    assert excluded.exact >= 3  # ev-000, ev-003, ev-006 at least
    events = collection(first, "events")
    for cursor in (events.page.next_cursor, events.items[0].content.next_cursor):
        follow = graph_pb2.GetContextRequest()
        follow.CopyFrom(request)
        follow.cursor = cursor
        assert (await graph_stub.GetContext(follow)).coverage.unknown_time_excluded == excluded

    alone = graph_pb2.GetContextRequest()
    alone.CopyFrom(request)
    alone.object_ref.CopyFrom(ref(EVENT, "ev-alone"))
    alone.mode = graph_pb2.TIMELINE
    timeline = await graph_stub.GetContext(alone)
    assert not collection(timeline, "timeline").items
    assert not collection(timeline, "undated").items
    assert timeline.coverage.unknown_time_excluded.exact == 1


async def test_a_preference_leaving_while_another_arrives_makes_the_cursor_stale(
    tree_stub, graph_stub
):
    """Paging the preferences must not mix two lists: one preference moving to another project
    while a new one arrives leaves their number and revisions' sum as they were, and the
    cursor still goes stale, saying it was the preferences that changed."""
    project = unique("proj")
    scope = project_scope(project)
    ids = {name: unique(f"pref-{name}") for name in "abc"}

    async def prefer(name: str, where: str, revision: int = 0) -> tree_pb2.SetPreferenceResponse:
        response: tree_pb2.SetPreferenceResponse = await tree_stub.SetPreference(
            tree_pb2.SetPreferenceRequest(
                idempotency_key=unique("k"),
                preference_id=ids[name],
                scope=project_scope(where),
                subject="style",
                text=f"preference {name}",
                confirmed_by="user",
                expected_revision=revision,
            )
        )
        return response

    await prefer("a", project)
    await prefer("b", project)
    written = await record(
        tree_stub, project, entities=[tree_pb2.EntityInput(id="ent", label="Entity")]
    )
    request = graph_pb2.GetContextRequest(
        object_ref=ref(ENTITY, "ent"),
        scope=scope,
        page_size=1,
        options=options(written),
    )
    first = collection(await graph_stub.GetContext(request), "preferences")
    assert first.page.has_more  # (global preferences other tests made apply here too)
    await prefer("a", unique("elsewhere"), revision=1)
    arrived = await prefer("c", project)
    follow = graph_pb2.GetContextRequest()
    follow.CopyFrom(request)
    follow.cursor = first.page.next_cursor
    follow.options.min_consistency.CopyFrom(arrived.consistency)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(follow)
    assert describe(caught.value).reason == "stale_cursor"
    assert "preferences" in caught.value.details()
