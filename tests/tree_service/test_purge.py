"""T16 delete: archive first, then purge after an impact preview. The preview lists exactly what
the purge does; the content is gone, tombstones stay, and whatever rested on it reads as
purged or retracted."""

from __future__ import annotations

import uuid

import grpc

from mirrortree.rpcstatus import RpcFailure
from mirrortree.v1 import common_pb2, graph_pb2, purge_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.graph_service.story import ref
from tests.tree_service.helpers import ask
from tests.tree_service.purging import (
    ALL,
    as_answered,
    failure_of,
    fields,
    footprint,
    preview,
    purge_request,
    set_state,
    world,
)
from tests.tree_service.reviews import scope_of


async def test_the_preview_lists_every_impact_and_the_purge_does_exactly_that(tree_stub, db):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    impact = shown.impact
    assert (impact.branch_id, impact.tree_id, impact.branch_revision) == (
        w.branch_id,
        w.tree_id,
        2,
    )
    assert {n.node_id for n in impact.nodes} == {w.branch_id, w.branch_answer_id}
    assert [(c.citing_node_id, c.position, c.cited_node_id) for c in impact.citations] == [
        (w.citing_id, 0, w.branch_answer_id)
    ]
    assert [(e.version_id, sorted(e.node_ids)) for e in impact.canon_entries] == [
        (w.version.id, sorted([w.branch_id, w.branch_answer_id]))
    ]
    actions = {(g.object_id, g.action) for g in impact.graph_objects}
    prefix = f"mainline-{w.version.id}-"
    assert (prefix + w.branch_id, purge_pb2.GRAPH_TOMBSTONE) in actions
    assert (prefix + w.branch_answer_id, purge_pb2.GRAPH_TOMBSTONE) in actions
    assert (f"mainline-version-{w.version.id}", purge_pb2.GRAPH_RETRACT) in actions
    # The other nodes' references stay as they are.
    assert prefix + w.root_id not in {g.object_id for g in impact.graph_objects}
    assert [(m.question_id, m.source_node_id) for m in impact.merge_references] == [
        (w.merge_question_id, w.branch_id)
    ]
    reviewed = {(g.object_id, g.action) for g in impact.graph_objects if "review" in g.result_id}
    assert reviewed == {
        ("msg", purge_pb2.GRAPH_TOMBSTONE),
        ("plan", purge_pb2.GRAPH_RETRACT),  # cites it
        ("said", purge_pb2.GRAPH_RETRACT),
        ("sum", purge_pb2.GRAPH_RETRACT),  # quotes it
    }
    # The review's preference about its decision, and the memory accepted from the version.
    memory = f"mainline-memory-{w.version.candidates[1].id}"
    assert [p.preference_id for p in impact.preferences] == [memory, f"pref-{w.branch_id}"]
    subjects = {c.subject for c in impact.context_copies}
    assert f"citation:{w.citing_id}:0" in subjects
    assert f"node:{w.branch_answer_id}" in subjects
    assert f"memory:{memory}" in subjects  # the memory, as recorded contexts copied it
    assert await footprint(db, w.secret)  # the content is there before

    done = await tree_stub.Purge(purge_request(w, shown.preview_token))

    assert done.impact == as_answered(impact)
    assert done.tombstone.branch_id == w.branch_id
    assert (done.tombstone.purged_by, done.tombstone.reason) == (
        "user-1",
        "I never want to see this again",
    )
    assert await footprint(db, w.secret) == []
    # What was written is exactly what the preview listed, and nothing else.
    purge_id = uuid.UUID(done.tombstone.purge_id)
    purged = await db.fetch("SELECT node_id::text FROM purged_nodes WHERE purge_id = $1", purge_id)
    assert {r["node_id"] for r in purged} == {n.node_id for n in impact.nodes}
    rewritten = await db.fetch(
        "SELECT result_id, object_id, confirmation_state FROM graph_objects "
        "WHERE details->'purged'->>'purge_id' = $1",
        str(purge_id),
    )
    assert sorted((r["result_id"], r["object_id"]) for r in rewritten) == sorted(
        (g.result_id, g.object_id) for g in impact.graph_objects
    )
    assert {r["confirmation_state"] for r in rewritten} == {"retracted"}
    tombstoned = await db.fetch(
        "SELECT n.id::text, c.ord - 1 AS position FROM nodes n, "
        "jsonb_array_elements(n.citations) WITH ORDINALITY c (value, ord) "
        "WHERE c.value->>'status' = 'purged'"
        " AND c.value->>'node_id' = any($1::text[])",
        [n.node_id for n in impact.nodes],
    )
    assert sorted((r["id"], r["position"]) for r in tombstoned) == sorted(
        (c.citing_node_id, c.position) for c in impact.citations
    )
    for retracted in (f"pref-{w.branch_id}", memory):
        preference = await db.fetchrow(
            "SELECT text, revision FROM preferences WHERE id = $1", retracted
        )
        assert preference["revision"] == 2 and preference["text"].startswith("Retracted:")
    candidates = await db.fetch(
        "SELECT subject, text FROM canon_candidates WHERE version_id = $1",
        uuid.UUID(w.version.id),
    )
    assert {(c["subject"], c["text"].startswith("Retracted:")) for c in candidates} == {("", True)}
    context = await tree_stub.GetContextVersion(
        tree_pb2.GetContextVersionRequest(
            context_version_id=impact.context_copies[0].context_version_id
        )
    )
    purged_items = [i for i in context.items if i.omitted_reason.startswith("purged:")]
    assert purged_items and all(i.text == "" for i in purged_items)


async def test_archive_conclude_and_purge_read_differently_everywhere(tree_stub):
    w = await world(tree_stub, archive=False)
    concluded_tree = (await create_tree(tree_stub)).tree
    question = await ask(tree_stub, concluded_tree.id, "concluded q")
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=question.id,
            state=tree_pb2.CONCLUDED,
            expected_revision=1,
            changed_by="user-1",
            summary="done",
        )
    )
    got = await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))
    assert (got.node.branch_state, got.node.text) == (tree_pb2.CONCLUDED, "concluded q")

    await set_state(tree_stub, w.branch_id, tree_pb2.ARCHIVED, 1)
    got = await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=w.branch_id))
    assert (got.node.branch_state, got.node.text) == (tree_pb2.ARCHIVED, f"Q: {w.secret}")
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=w.tree_id))
    assert w.branch_id not in {n.id for n in listed.nodes}

    shown = await preview(tree_stub, w.branch_id)
    await tree_stub.Purge(purge_request(w, shown.preview_token))

    got = await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=w.branch_answer_id))
    assert (got.node.branch_state, got.node.text) == (tree_pb2.PURGED, "")
    branch = (await tree_stub.GetBranch(tree_pb2.GetBranchRequest(node_id=w.branch_id))).branch
    assert branch.state == tree_pb2.PURGED
    assert [(t.from_state, t.to_state) for t in branch.transitions][-1] == (
        tree_pb2.ARCHIVED,
        tree_pb2.PURGED,
    )
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=w.tree_id))
    assert w.branch_id not in {n.id for n in listed.nodes}
    everything = await tree_stub.ListNodes(
        tree_pb2.ListNodesRequest(tree_id=w.tree_id, include_archived=True)
    )
    states = {n.id: n.branch_state for n in everything.nodes}
    assert states[w.branch_id] == states[w.branch_answer_id] == tree_pb2.PURGED
    path = await tree_stub.GetPath(tree_pb2.GetPathRequest(node_id=w.branch_answer_id))
    assert [(n.text, n.branch_state) for n in path.nodes][-2:] == [
        ("", tree_pb2.PURGED),
        ("", tree_pb2.PURGED),
    ]
    branches = await tree_stub.ListBranches(tree_pb2.ListBranchesRequest(tree_id=w.tree_id))
    assert list(branches.branches) == []
    # Like archived ones, purged branches are listed only on request.
    purged = await tree_stub.ListBranches(
        tree_pb2.ListBranchesRequest(
            tree_id=w.tree_id, states=[tree_pb2.PURGED], include_archived=True
        )
    )
    assert [b.node_id for b in purged.branches] == [w.branch_id]
    archived = await tree_stub.ListBranches(
        tree_pb2.ListBranchesRequest(
            tree_id=w.tree_id, states=[tree_pb2.ARCHIVED], include_archived=True
        )
    )
    assert list(archived.branches) == []
    # A purged branch is final: it cannot be restored.
    failure = await failure_of(set_state(tree_stub, w.branch_id, tree_pb2.ACTIVE, branch.revision))
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    stone = await tree_stub.GetPurgeTombstone(
        purge_pb2.GetPurgeTombstoneRequest(node_id=w.branch_answer_id)
    )
    assert (stone.tombstone.branch_id, stone.tombstone.node_id) == (
        w.branch_id,
        w.branch_answer_id,
    )


async def test_references_into_the_branch_report_the_purge(tree_stub):
    w = await world(tree_stub)
    merged = await tree_stub.ListMergeReferences(
        tree_pb2.ListMergeReferencesRequest(question_id=w.merge_question_id)
    )
    assert [r.source_state for r in merged.references] == [tree_pb2.SOURCE_ARCHIVED]

    shown = await preview(tree_stub, w.branch_id)
    await tree_stub.Purge(purge_request(w, shown.preview_token))

    merged = await tree_stub.ListMergeReferences(
        tree_pb2.ListMergeReferencesRequest(question_id=w.merge_question_id)
    )
    assert [(r.source_node_id, r.source_state) for r in merged.references] == [
        (w.branch_id, tree_pb2.SOURCE_PURGED)
    ]
    cited = await tree_stub.ListCitations(tree_pb2.ListCitationsRequest(node_id=w.citing_id))
    citation = cited.citations[0].citation
    assert citation.status == tree_pb2.CITATION_PURGED
    assert citation.snapshot == ""
    assert citation.node_id == w.branch_answer_id
    assert "purged" in citation.source_description
    snapshot = await tree_stub.GetMainLineSnapshot(
        tree_pb2.GetMainLineSnapshotRequest(version_id=w.version.id)
    )
    entries = {n.id: n for n in snapshot.nodes}
    assert entries[w.root_id].text == "Where to go?"
    assert (entries[w.branch_id].text, entries[w.branch_id].branch_state) == (
        "",
        tree_pb2.PURGED,
    )
    assert snapshot.snapshot_length == len(w.version.node_ids)


async def test_story_graph_reads_show_retractions_and_tombstones_after_a_purge(
    tree_stub, graph_stub
):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    done = await tree_stub.Purge(purge_request(w, shown.preview_token))
    options = graph_pb2.ReadOptions(min_consistency=done.consistency)
    scope = scope_of(w.project)

    found = await graph_stub.Search(
        graph_pb2.SearchRequest(query="secret plan", scope=scope, options=options)
    )
    assert list(found.hits) == []
    decision = await graph_stub.Search(
        graph_pb2.SearchRequest(query="Trip plans", scope=scope, options=options)
    )
    event = f"mainline-version-{w.version.id}"
    hit = next(h for h in decision.hits if h.ref.id == event)
    assert hit.time.confirmation_state == common_pb2.RETRACTED
    context = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(common_pb2.EVENT, event), scope=scope, options=options
        )
    )
    text = "".join(i.content.text for c in context.collections for i in c.items)
    assert "Retracted" in text
    assert w.secret not in text
    source = await graph_stub.ReadSource(
        graph_pb2.ReadSourceRequest(
            source_reference_id=f"mainline-{w.version.id}-{w.branch_answer_id}",
            scope=scope,
            options=options,
        )
    )
    assert (source.text, source.availability) == ("", graph_pb2.DELETED)


async def test_purging_twice_is_one_purge(tree_stub, db):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    first = await tree_stub.Purge(purge_request(w, shown.preview_token))
    again = await tree_stub.Purge(purge_request(w, shown.preview_token))
    assert (again.impact, again.tombstone) == (first.impact, first.tombstone)
    purges = await db.fetchval(
        "SELECT count(*) FROM purges WHERE branch_id = $1", uuid.UUID(w.branch_id)
    )
    assert purges == 1
    # A retry with the same key is answered from the first response too.
    key = unique("k")
    w2 = await world(tree_stub)
    shown2 = await preview(tree_stub, w2.branch_id)
    one = await tree_stub.Purge(purge_request(w2, shown2.preview_token, idempotency_key=key))
    two = await tree_stub.Purge(purge_request(w2, shown2.preview_token, idempotency_key=key))
    assert one.tombstone == two.tombstone
    # Previewing a purged branch says so.
    failure = await failure_of(preview(tree_stub, w.branch_id))
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "purged already" in failure.message


async def test_bad_purges_are_refused_by_name_and_write_nothing(tree_stub, db):
    w = await world(tree_stub, archive=False)
    # Not archived: refused naming the state.
    failure = await failure_of(preview(tree_stub, w.branch_id))
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "is active" in failure.message
    unknown = str(uuid.uuid4())
    failure = await failure_of(preview(tree_stub, unknown))
    assert failure.code == grpc.StatusCode.NOT_FOUND
    await set_state(tree_stub, w.branch_id, tree_pb2.ARCHIVED, 1)
    shown = await preview(tree_stub, w.branch_id)

    async def refused(request: purge_pb2.PurgeRequest) -> RpcFailure:
        failure = await failure_of(tree_stub.Purge(request))
        assert (await db.fetchval("SELECT count(*) FROM purges WHERE branch_id = $1",
                                  uuid.UUID(w.branch_id))) == 0  # fmt: skip
        return failure

    garbage = await refused(purge_request(w, "not-a-token"))
    assert (garbage.code, fields(garbage)) == (grpc.StatusCode.INVALID_ARGUMENT, ["preview_token"])
    missing = await refused(purge_request(w, "", reason="", purged_by=""))
    assert fields(missing) == ["preview_token", "purged_by", "reason"]
    other = w.root_id
    wrong = shown.preview_token.replace(w.branch_id, other)
    failure = await refused(purge_request(w, wrong))
    assert (failure.code, fields(failure)) == (grpc.StatusCode.INVALID_ARGUMENT, ["preview_token"])
    failure = await refused(purge_request(w, shown.preview_token, node_id=unknown))
    assert failure.code == grpc.StatusCode.NOT_FOUND
    copies = purge_pb2.PurgeChoice(
        citations=True,
        canon_entries=True,
        graph_facts=True,
        merge_references=True,
        transplant_copies=True,
    )
    failure = await refused(purge_request(w, shown.preview_token, choice=copies))
    assert fields(failure) == ["choice.transplant_copies"]
    # A write into the branch after the preview makes it stale.
    await ask(tree_stub, w.tree_id, "one more", parent_id=w.branch_answer_id)
    stale = await refused(purge_request(w, shown.preview_token))
    assert (stale.code, stale.reason) == (grpc.StatusCode.ABORTED, "purge_preview_stale")
    # Nothing was removed by any of these.
    got = await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=w.branch_id))
    assert got.node.text == f"Q: {w.secret}"
    fresh = await preview(tree_stub, w.branch_id)
    assert len(fresh.impact.nodes) == 3
    done = await tree_stub.Purge(purge_request(w, fresh.preview_token))
    assert done.impact == as_answered(fresh.impact)


async def test_transplanted_copies_are_kept_or_purged_as_chosen(tree_stub, db):
    w = await world(tree_stub, archive=False)
    moved = await tree_stub.TransplantBranch(
        tree_pb2.TransplantBranchRequest(
            idempotency_key=unique("k"), node_id=w.branch_id, title="copy", transplanted_by="u"
        )
    )
    copy_tree = moved.tree.id
    await set_state(tree_stub, w.branch_id, tree_pb2.ARCHIVED, 1)
    kept = await preview(tree_stub, w.branch_id)
    assert len(kept.impact.transplant_copies) == 2
    assert not any(c.purged for c in kept.impact.transplant_copies)
    both = await preview(tree_stub, w.branch_id, copies=True)
    assert all(c.purged for c in both.impact.transplant_copies)
    assert {n.tree_id for n in both.impact.nodes} == {w.tree_id, copy_tree}
    assert kept.preview_token != both.preview_token
    choice = purge_pb2.PurgeChoice()
    choice.CopyFrom(ALL)
    choice.transplant_copies = True
    await tree_stub.Purge(purge_request(w, both.preview_token, choice=choice))
    copy_nodes = await tree_stub.ListNodes(
        tree_pb2.ListNodesRequest(tree_id=copy_tree, include_archived=True)
    )
    assert {(n.text, n.branch_state) for n in copy_nodes.nodes} == {("", tree_pb2.PURGED)}
    origin = await tree_stub.GetTransplantOrigin(
        tree_pb2.GetTransplantOriginRequest(tree_id=copy_tree)
    )
    assert w.secret not in str(origin)
    assert await footprint(db, w.secret) == []
