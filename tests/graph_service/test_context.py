"""StoryGraph.GetContext: the acceptance story end to end, validity from evidence only, time
roles, completion evidence, retractions, scope and version answers (paging and cursors:
test_context_paging.py)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from graph_service import context as context_reads
from graph_service.queries import context as queries
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.contexts import collection, content, context, items_by_id
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


async def test_acceptance_story_old_decision_evidenced_revision_current_recommendation(
    graph_stub, story
):
    """A → evidenced revision → B: the tools return A, the revision, the replacing evidence
    and B, so an agent can recommend B citing both sources; option C does not invalidate B;
    B being decided is not B being done."""
    response = await context(graph_stub, story, ref(ENTITY, "ent-storage"))
    events = items_by_id(response, "events")
    assert events["ev-decide-a"].time.validity.state == SUPERSEDED
    assert events["ev-decide-a"].time.validity.basis == "rel-b-replaces-a"
    assert events["ev-decide-a"].time.validity.to == "2026-09-30T15:30:00Z"
    assert events["ev-revise-b"].time.validity.state == CURRENT
    # C is only a contrasting option for B (and conflicts with a preference): B stays current.
    assert events["ev-option-c"].time.validity.state != SUPERSEDED
    relations = items_by_id(response, "relations")
    replaces = content(relations["rel-b-replaces-a"])
    assert replaces["relation_kind"] == "replaces"
    assert replaces["from"]["id"] == "ev-revise-b" and replaces["to"]["id"] == "ev-decide-a"
    assert replaces["to"]["version"]["recorded_in"] == story.ids["demo-review-2026-09-28"]
    assert replaces["evidenced"] is True
    assert content(relations["rel-c-contrasts-b"])["relation_kind"] == "contrasts"
    # Both decisions' sources are there: the old one (v1) and the revising one (v2).
    sources = {i.ref.id for i in collection(response, "sources").items}
    assert {"src-notes-v1", "src-notes-v2"} <= sources
    assert [s.source_reference_id for s in events["ev-revise-b"].sources] == ["src-notes-v2"]

    current = content(collection(response, "current").items[0])
    decisions = {d["event_id"]: d for d in current["decisions"]["items"]}
    assert decisions["ev-decide-a"]["validity"]["state"] == "superseded"
    assert decisions["ev-revise-b"]["validity"]["state"] == "current"
    assert current["work_state"]["completion"]["state"] == "unknown"

    decision_b = await context(graph_stub, story, ref(EVENT, "ev-revise-b"))
    projection = content(collection(decision_b, "current").items[0])
    assert projection["work_state"]["decision"]["state"] == "decided"
    assert projection["work_state"]["completion"]["state"] == "unknown"
    assert (
        "not evidence that it was carried out" in projection["work_state"]["completion"]["reason"]
    )
    assert projection["validity"]["state"] == "current"

    hits = await graph_stub.Search(
        graph_pb2.SearchRequest(query="Decision A", scope=story.scope, options=story.options())
    )
    hit = next(h for h in hits.hits if h.ref.id == "ev-decide-a")
    assert hit.time.validity.state == SUPERSEDED


async def test_old_descriptions_are_not_hidden_by_the_current_projection(graph_stub, story):
    response = await context(graph_stub, story, ref(ENTITY, "ent-storage"))
    snapshots = collection(response, "snapshots")
    assert [i.result_id for i in snapshots.items] == [
        story.ids["demo-review-2026-09-28"],
        story.ids["demo-review-2026-10-01"],
    ]
    assert [i.object_revision.known for i in snapshots.items] == ["1", "2"]
    assert "SQLite" in content(snapshots.items[0])["description"]
    current = content(collection(response, "current").items[0])
    assert current["description"]["recorded_by_result"] == story.ids["demo-review-2026-10-01"]


async def test_late_recorded_old_event_stays_old_in_the_timeline(graph_stub, story):
    response = await context(
        graph_stub, story, ref(common_pb2.STORY_LINE, "line-storage"), mode=graph_pb2.TIMELINE
    )
    timeline = collection(response, "timeline").items
    events = [i for i in timeline if i.ref.type == EVENT]
    # The kickoff was recorded last (by the 2026-10-05 review) but happened first.
    assert events[0].ref.id == "ev-kickoff"
    assert events[0].time.recorded_at == max(i.time.recorded_at for i in events)
    starts = [i.time.event_time.start for i in timeline]
    assert starts == sorted(starts)
    assert (
        f"{story.ids['demo-review-2026-10-05']}: messages after 2026-10-04T18:00Z were not reached"
        in response.coverage.gaps
    )
    assert "attachment" in response.coverage.excluded_source_types
    undated = collection(response, "undated").items
    assert [i.ref.id for i in undated if i.ref.type == EVENT] == ["ev-benchmark"]
    assert not any(i.time.event_time.known for i in undated)


async def test_time_filter_narrows_evidence_and_counts_unknown_times(graph_stub, story):
    response = await context(
        graph_stub,
        story,
        ref(ENTITY, "ent-storage"),
        time_range=common_pb2.TimeRange(to="2026-09-29T00:00:00+08:00"),
    )
    assert "within the selected evidence range" in response.evidence_note
    # Only A happened before the end of the range; B and its replacement are outside it.
    assert set(items_by_id(response, "events")) == {"ev-decide-a"}
    assert not collection(response, "relations").items
    current = content(collection(response, "current").items[0])
    assert "within the selected evidence range" in current["statement"]
    # The benchmark has no event time: it never matches a range, and it is counted.
    assert response.coverage.unknown_time_excluded.exact >= 1
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await context(
            graph_stub,
            story,
            ref(ENTITY, "ent-storage"),
            time_range=common_pb2.TimeRange(to="2026-09-29T00:00:00"),
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "time_range.to" in caught.value.details()


async def test_preference_is_background_with_a_pending_difference(graph_stub, story):
    response = await context(graph_stub, story, ref(ENTITY, "ent-storage"))
    preferences = collection(response, "preferences").items
    pref = next(p for p in preferences if p.ref.id == story.ids["pref-boring-tech"])
    assert pref.label.startswith("background")
    assert pref.time.recorded_at  # its real update time
    assert not pref.time.event_time.known  # never passed off as when it was decided
    body = content(pref)
    assert body["text"].startswith("Prefer boring")
    assert [d["graph_fact"]["id"] for d in body["pending_differences"]] == ["ev-option-c"]
    # Reading the preference itself shows the same difference, and the preference stands.
    own = await context(
        graph_stub, story, ref(common_pb2.PREFERENCE, story.ids["pref-boring-tech"])
    )
    current = collection(own, "current").items[0]
    projection = content(current)
    assert projection["preference"]["text"] == body["text"]
    assert projection["preference"]["pending_differences"]
    # A pending difference is not a dispute: the preference's validity says the same in both.
    assert current.time.validity.state == pref.time.validity.state == UNKNOWN
    assert projection["validity"]["state"] == "unknown" and not projection["open_conflicts"]


async def test_not_found_scope_mismatch_and_missing_version_are_distinct(graph_stub, story):
    async def code_of(**fields: Any) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await context(graph_stub, story, **fields)
        return caught.value.code(), describe(caught.value).reason

    assert await code_of(object_ref=ref(EVENT, "no-such-event")) == (
        grpc.StatusCode.NOT_FOUND,
        "not_found",
    )
    other = common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[unique("other")]))
    # The stable id exists, but not in the scope asked for: no escape by id.
    assert await code_of(object_ref=ref(EVENT, "ev-decide-a"), scope=other) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "scope_mismatch",
    )
    code, reason = await code_of(
        object_ref=ref(ENTITY, "ent-storage"), result_id=story.ids["demo-review-2026-10-05"]
    )
    assert (code, reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "historical_version_unavailable",
    )
    # One stored version can be read on its own.
    pinned = await context(
        graph_stub, story, ref(ENTITY, "ent-storage"), result_id=story.ids["demo-review-2026-09-28"]
    )
    assert [i.result_id for i in collection(pinned, "snapshots").items] == [
        story.ids["demo-review-2026-09-28"]
    ]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(
            graph_pb2.GetContextRequest(object_ref=ref(ENTITY, "ent-storage"))
        )
    assert describe(caught.value).reason == "scope_required"


async def test_a_completed_change_is_the_evidence_a_decision_was_carried_out(tree_stub, graph_stub):
    """Completion comes only from a 'completed' entity change linked to the decision, and the
    gaps of the results holding an object are reported with it (both read with the scope's
    state, in the statement that opens the read)."""
    project = unique("proj")
    scope = common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project]))
    gap = "messages after 2026-10-01T18:00Z were not reached"
    results = [unique("res"), unique("res")]
    written = []
    for result_id, gaps, changes in (
        (
            results[0],
            [gap],
            [
                tree_pb2.EntityChangeInput(
                    id="chg-started", entity_id="ent-db", event_id="ev-move", change_type="revised"
                ),
                tree_pb2.EntityChangeInput(
                    id="chg-done", entity_id="ent-db", event_id="ev-move", change_type="completed"
                ),
            ],
        ),
        (results[1], [], []),
    ):
        written.append(
            await tree_stub.RecordReview(
                tree_pb2.RecordReviewRequest(
                    idempotency_key=unique("k"),
                    result_id=result_id,
                    scope=scope,
                    phase="daily",
                    covered={"from": "2026-10-01T00:00:00Z", "to": "2026-10-02T00:00:00Z"},
                    review_generated_at="2026-10-02T01:00:00Z",
                    events=[
                        tree_pb2.EventInput(
                            id="ev-move" if changes else "ev-later",
                            kind=tree_pb2.DECISION,
                            title="Move to Postgres",
                            entity_ids=["ent-db"],
                        )
                    ],
                    entities=[tree_pb2.EntityInput(id="ent-db", label="Database")],
                    entity_changes=changes,
                    coverage_gaps=gaps,
                )
            )
        )
    options = graph_pb2.ReadOptions(min_consistency=written[-1].consistency)

    async def read(object_ref: common_pb2.ObjectRef) -> graph_pb2.GetContextResponse:
        request = graph_pb2.GetContextRequest(object_ref=object_ref, scope=scope, options=options)
        response: graph_pb2.GetContextResponse = await graph_stub.GetContext(request)
        return response

    moved = await read(ref(EVENT, "ev-move"))
    completion = content(collection(moved, "current").items[0])["work_state"]["completion"]
    assert completion == {
        "state": "completed",
        "evidence": [{"entity_change": "chg-done", "result_id": results[0]}],
    }
    assert list(moved.history_gaps) == [f"a result holding this object reports: {gap}"]
    unresolved = content(collection(moved, "current").items[0])["unresolved"]
    assert unresolved["coverage_gaps"] == list(moved.history_gaps)

    later = await read(ref(EVENT, "ev-later"))
    assert (
        content(collection(later, "current").items[0])["work_state"]["completion"]["state"]
        == "unknown"
    )
    assert list(later.history_gaps) == []
    # The entity is held by both results: one of them reports the gap.
    entity = await read(ref(ENTITY, "ent-db"))
    assert list(entity.history_gaps) == [f"a result holding this object reports: {gap}"]


async def test_a_retraction_withdraws_the_relation_recorded_before_it(tree_stub, graph_stub):
    """A later result that records a relation as retracted withdraws every earlier copy of it:
    validity is unknown again, in Search and GetContext alike. A result after the retraction
    may record the relation again, and then it counts."""
    project = unique("proj")
    scope = project_scope(project)

    def evidence(source_id: str) -> tree_pb2.SourceReferenceInput:
        return tree_pb2.SourceReferenceInput(
            id=source_id, source_type="document", source_id="doc-decisions", fragment=source_id
        )

    def b_replaces_a(source_id: str, state: int = 0) -> tree_pb2.RelationInput:
        return relation_input(
            "rel-b-a",
            tree_pb2.REPLACES,
            ref(EVENT, "ev-b"),
            ref(EVENT, "ev-a"),
            reason="the user switched to B",
            source_reference_ids=[source_id],
            confirmation_state=state,
        )

    async def states() -> dict[str, tuple[Any, Any]]:
        """Each event's validity as (Search, GetContext) read it."""
        after = options(written)
        found = await graph_stub.Search(
            graph_pb2.SearchRequest(query="Decide", scope=scope, options=after)
        )
        read = {}
        for hit in found.hits:
            response = await graph_stub.GetContext(
                graph_pb2.GetContextRequest(object_ref=hit.ref, scope=scope, options=after)
            )
            current = collection(response, "current").items[0]
            read[hit.ref.id] = (hit.time.validity.state, current.time.validity.state)
        return read

    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id="ev-a", kind=tree_pb2.DECISION, title="Decide A"),
            tree_pb2.EventInput(id="ev-b", kind=tree_pb2.DECISION, title="Decide B"),
        ],
        sources=[evidence("src-switch")],
        relations=[b_replaces_a("src-switch")],
    )
    assert await states() == {"ev-a": (SUPERSEDED,) * 2, "ev-b": (CURRENT,) * 2}

    for source_id, state, expected in (
        ("src-misread", common_pb2.RETRACTED, {"ev-a": (UNKNOWN,) * 2, "ev-b": (UNKNOWN,) * 2}),
        ("src-again", 0, {"ev-a": (SUPERSEDED,) * 2, "ev-b": (CURRENT,) * 2}),
    ):
        written = await record(
            tree_stub,
            project,
            review_generated_at="2026-10-03T01:00:00Z",
            sources=[evidence(source_id)],
            relations=[b_replaces_a(source_id, state)],
        )
        assert await states() == expected, source_id


async def test_an_object_of_many_results_and_scopes_is_read_where_it_is(tree_stub, graph_stub):
    """Any stored version can be named, however many results hold the object, and an object
    recorded in many scopes is read in each of them (the lists the errors name are bounded; the
    answers are not)."""
    project = unique("proj")
    scope = project_scope(project)

    async def entity_in(in_project: str, result_id: str) -> tree_pb2.RecordReviewResponse:
        return await record(
            tree_stub,
            in_project,
            result_id=result_id,
            entities=[tree_pb2.EntityInput(id="ent-shared", label="Shared")],
        )

    results = [unique("res") for _ in range(context_reads.VERSIONS_LISTED + 2)]
    for result_id in results:
        written = await entity_in(project, result_id)
    after = options(written)
    newest = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(ENTITY, "ent-shared"),
            scope=scope,
            result_id=results[-1],
            options=after,
        )
    )
    assert [i.result_id for i in collection(newest, "snapshots").items] == [results[-1]]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=ref(ENTITY, "ent-shared"),
                scope=scope,
                result_id="res-none",
                options=after,
            )
        )
    assert describe(caught.value).reason == "historical_version_unavailable"
    assert f"the oldest {context_reads.VERSIONS_LISTED} of {len(results)}" in caught.value.details()

    elsewhere = [unique("other") for _ in range(queries.SCOPES_LISTED + 1)]
    for other in elsewhere:
        await entity_in(other, unique("res"))
    last = unique("zz-last")
    written = await entity_in(last, unique("res"))
    read = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(ENTITY, "ent-shared"),
            scope=project_scope(last),
            options=options(written),
        )
    )
    assert len(collection(read, "snapshots").items) == 1


async def test_a_replacement_of_one_version_says_nothing_of_a_later_version(tree_stub, graph_stub):
    """`new replaces old@1` supersedes revision 1 of `old`; a later result's revision 2 of it
    is not superseded by that evidence (its validity is unknown), in Search, in the snapshots
    and in the current projection, which describes revision 2."""
    project = unique("proj")
    scope = project_scope(project)

    await record(
        tree_stub,
        project,
        entities=[
            tree_pb2.EntityInput(id="plan-old", label="Omega plan", revision="1"),
            tree_pb2.EntityInput(id="plan-new", label="Omega plan B", revision="1"),
        ],
        sources=[
            tree_pb2.SourceReferenceInput(
                id="src-switch", source_type="document", source_id="doc-plans", fragment="B wins"
            )
        ],
        relations=[
            relation_input(
                "rel-b-replaces-old",
                tree_pb2.REPLACES,
                ref(ENTITY, "plan-new"),
                ref(ENTITY, "plan-old"),
                to_revision="1",
                reason="the team chose plan B",
                source_reference_ids=["src-switch"],
            )
        ],
    )
    written = await record(
        tree_stub,
        project,
        entities=[tree_pb2.EntityInput(id="plan-old", label="Omega plan, revised", revision="2")],
    )
    after = options(written)
    found = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="omega plan",
            scope=scope,
            object_types=[common_pb2.ENTITY],
            options=after,
        )
    )
    by_version = {
        (hit.ref.id, hit.object_revision.known): hit.time.validity.state for hit in found.hits
    }
    assert by_version == {
        ("plan-old", "1"): SUPERSEDED,
        ("plan-old", "2"): UNKNOWN,
        ("plan-new", "1"): CURRENT,
    }
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(object_ref=ref(ENTITY, "plan-old"), scope=scope, options=after)
    )
    snapshots = collection(response, "snapshots").items
    assert [(s.object_revision.known, s.time.validity.state) for s in snapshots] == [
        ("1", SUPERSEDED),
        ("2", UNKNOWN),
    ]
    current = collection(response, "current").items[0]
    assert current.time.validity.state == UNKNOWN
    assert content(current)["description"]["label"] == "Omega plan, revised"


async def test_a_late_recorded_backfill_does_not_become_the_current_description(
    tree_stub, graph_stub
):
    """The current projection describes an object as its most recent review does: a backfill
    about last month, recorded after this month's review, stays a snapshot."""
    project = unique("proj")
    scope = project_scope(project)
    written = None
    for generated, revision, text in (
        ("2026-10-01T00:00:00Z", "2", "PostgreSQL (revision 2)"),
        ("2026-09-01T00:00:00Z", "1", "SQLite (revision 1)"),
    ):
        written = await record(
            tree_stub,
            project,
            review_generated_at=generated,
            entities=[
                tree_pb2.EntityInput(
                    id="ent-db", label="Database", description=text, revision=revision
                )
            ],
        )
    assert written is not None
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(ENTITY, "ent-db"),
            scope=scope,
            options=options(written),
        )
    )
    description = content(collection(response, "current").items[0])["description"]
    assert description["description"] == "PostgreSQL (revision 2)"
    # Snapshots stay in recording order: the backfill is the second one recorded.
    assert [s.object_revision.known for s in collection(response, "snapshots").items] == ["2", "1"]


async def test_an_objects_history_gaps_say_when_there_are_more(tree_stub, graph_stub):
    """The gaps reported by the results holding an object are listed up to a bound, and past
    it the list says there are more instead of ending as if complete."""
    project = unique("proj")
    scope = project_scope(project)
    for i in range(queries.HISTORY_GAPS_LISTED + 1):
        written = await record(
            tree_stub,
            project,
            coverage_gaps=[f"chat export {i:02} was not read"],
            entities=[tree_pb2.EntityInput(id="ent-gappy", label="Gappy")],
        )
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(ENTITY, "ent-gappy"),
            scope=scope,
            options=options(written),
        )
    )
    gaps = list(response.history_gaps)
    assert len(gaps) == queries.HISTORY_GAPS_LISTED + 1
    assert gaps[0].endswith("chat export 00 was not read")
    assert gaps[-1].startswith("the results holding this object report more gaps")
