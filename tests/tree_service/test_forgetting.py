"""Forgetting reaches every copy (T12, T16): after a revocation no stored response replayed to
a retry, no transplanted tree's origin, no context summary and no column of the database
holds the withdrawn words; a purge that keeps some copies (a partial choice) marks each kept
copy as resting on purged content; no review and no MCP tool brings purged words back. (What a
purge does to every write's replay is test_replays.py.)"""

from __future__ import annotations

import json
import uuid

import grpc

from mirrortree.v1 import purge_pb2, tree_pb2
from tests.conftest import unique
from tests.gateway.harness import in_memory
from tests.gateway.test_linked_leaf_tools import binding_in
from tests.gateway.test_story_tools import call
from tests.tree_service.helpers import answer, ask, confirmation, new_tree
from tests.tree_service.purging import (
    Replayable,
    failure_of,
    footprint,
    preview,
    purge_request,
    world,
)
from tests.tree_service.reviews import review
from tests.tree_service.test_citation_anchors import grant


async def test_a_partial_choice_keeps_the_copies_it_was_not_given_and_marks_them(tree_stub, db):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    only_memory = purge_pb2.PurgeChoice(graph_facts=True, merge_references=True)
    await tree_stub.Purge(purge_request(w, shown.preview_token, choice=only_memory))

    own = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=w.branch_answer_id))).node
    assert own.text == ""  # the branch's own words always go
    (kept,) = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=w.citing_id))).node.citations
    assert kept.status == tree_pb2.CITATION_SOURCE_PURGED
    assert kept.snapshot == f"A: {w.secret}"  # the citer's copy stays, saying what happened
    assert "purged" in kept.source_description
    snapshot = await tree_stub.GetMainLineSnapshot(
        tree_pb2.GetMainLineSnapshotRequest(version_id=w.version.id)
    )
    entry = next(n for n in snapshot.nodes if n.id == w.branch_answer_id)
    assert entry.text == f"A: {w.secret}"
    assert (entry.branch_id, entry.branch_state) == (w.branch_id, tree_pb2.PURGED)
    # Memory was chosen: its facts are retracted, whatever else was kept.
    facts = await db.fetch(
        "SELECT body FROM graph_objects WHERE result_id = $1", f"review-{w.branch_id}"
    )
    assert all(w.secret not in r["body"] for r in facts)


async def test_a_revocation_reaches_replays_summaries_and_origins(tree_stub, db):
    words = f"the launch date {uuid.uuid4().hex}"
    theirs = await new_tree(tree_stub, owner="ana")
    cited = await ask(tree_stub, theirs.id, f"It is {words}")
    mine = await new_tree(tree_stub, owner="me")
    granted = await grant(tree_stub, theirs.id, "ana", "me")
    send = Replayable(tree_stub)
    top = await ask(tree_stub, mine.id, "Plan?")
    top_answer = await answer(tree_stub, top.id, "Let us see")
    citing = (
        await send(
            "AskQuestion",
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"),
                tree_id=mine.id,
                parent_id=top_answer.id,
                text="When?",
                citations=[tree_pb2.Citation(node_id=cited.id, authorization_id=granted.id)],
            ),
        )
    ).node
    summary_subject = f"citation:{citing.id}:0"
    await send(
        "RecordContextSummary",
        tree_pb2.RecordContextSummaryRequest(
            idempotency_key=unique("k"),
            subject=summary_subject,
            text=f"They said {words}",
            written_by="me",
        ),
    )
    reply = await answer(tree_stub, citing.id, "Noted")
    again = await ask(tree_stub, mine.id, "And?", parent_id=top_answer.id)
    await send(
        "EditQuestion",
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=again.id,
            expected_revision=again.revision,
            text="And when again?",
            citations=[tree_pb2.Citation(node_id=cited.id, authorization_id=granted.id)],
        ),
    )
    await send(
        "Canonicalize",
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=mine.id,
            leaf_node_id=reply.id,
            confirmation=confirmation("me"),
        ),
    )
    await send(
        "AssembleContext",
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=reply.id, budget=10_000
        ),
    )
    below = await ask(tree_stub, mine.id, "Next?", parent_id=reply.id)
    moved = await send(
        "TransplantBranch",
        tree_pb2.TransplantBranchRequest(
            idempotency_key=unique("k"), node_id=below.id, title="Later", transplanted_by="me"
        ),
    )
    assert set(await send.leaks(words)) == {m for m, _ in send.sent}

    await tree_stub.RevokeCitationAuthorization(
        tree_pb2.RevokeCitationAuthorizationRequest(
            idempotency_key=unique("k"), authorization_id=granted.id, revoked_by="ana"
        )
    )

    assert await send.leaks(words) == []
    summaries = await db.fetchval(
        "SELECT count(*) FROM context_summaries WHERE subject = $1", summary_subject
    )
    assert summaries == 0
    origin = await tree_stub.GetTransplantOrigin(
        tree_pb2.GetTransplantOriginRequest(tree_id=moved.tree.id)
    )
    assert words not in str(origin)
    citer = next(n for n in origin.origin.ancestor_path if n.id == citing.id)
    assert citer.citations[0].status == tree_pb2.CITATION_REVOKED
    # Only the grantor's own question holds them, and its record as a source.
    assert await footprint(db, words) == ["nodes.text", "source_revisions.text"]


async def test_a_review_cannot_cite_a_purged_message(tree_stub, db):
    w = await world(tree_stub)
    shown = await preview(tree_stub, w.branch_id)
    await tree_stub.Purge(purge_request(w, shown.preview_token))
    again = review(
        w.project,
        result_id=unique("review"),
        source_references=[
            tree_pb2.SourceReferenceInput(
                id="again", source_type="message", source_id=w.branch_answer_id, fragment="A:"
            )
        ],
    )
    failure = await failure_of(tree_stub.RecordReview(again))
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert failure.metadata["field"] == "source_references[0].source_id"
    assert "purged" in failure.message
    recorded = await db.fetchval(
        "SELECT count(*) FROM review_results WHERE result_id = $1", again.result_id
    )
    assert recorded == 0


async def test_no_mcp_tool_finds_purged_words(tree_stub, graph_service):
    """Every story-graph tool an agent runtime has, asked about the purged branch the ways an
    agent would: by its words, by the facts that rested on it and by its source reference."""
    w = await world(tree_stub)
    token, consistency = await binding_in(tree_stub, w.project)
    shown = await preview(tree_stub, w.branch_id)

    async def everything_said(lsn: str) -> str:
        options = {"min_consistency": {"lsn": lsn}}
        async with in_memory(graph_service.port, token) as client:
            said = [
                await call(client, "story_graph_search", {"query": q, "options": options})
                for q in (w.secret, "Plan chosen", "Summary", "The user said")
            ]
            for kind, object_id in (("event", "plan"), ("summary", "sum"), ("leaf_fact", "said")):
                said.append(
                    await call(
                        client,
                        "story_graph_get_context",
                        {"object_ref": {"type": kind, "id": object_id}, "options": options},
                    )
                )
            said.append(
                await call(
                    client,
                    "story_graph_read_source",
                    {"source_reference_id": "msg", "options": options},
                )
            )
        return json.dumps(said, ensure_ascii=False)

    assert w.secret in await everything_said(consistency.lsn)  # the tools found it before
    done = await tree_stub.Purge(purge_request(w, shown.preview_token))
    assert w.secret not in await everything_said(done.consistency.lsn)
