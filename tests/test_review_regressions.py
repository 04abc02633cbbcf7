"""Regressions for defects found in review: each failed before its fix."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest

from mirrortree.lsn import parse_lsn
from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import unique
from tests.gateway.harness import in_memory, tool_error
from tests.gateway.test_tools import bound_project
from tests.tree_service.helpers import answer, ask, new_tree


async def test_editing_and_answering_one_question_at_once_never_deadlocks(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    calls = []
    for i in range(6):
        calls.append(
            tree_stub.EditQuestion(
                tree_pb2.EditQuestionRequest(
                    idempotency_key=unique("k"),
                    question_id=question.id,
                    expected_revision=question.revision,
                    text=f"edit {i}",
                )
            )
        )
        calls.append(answer(tree_stub, question.id, f"answer {i}"))
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert [r for r in results if isinstance(r, BaseException)] == []


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ("list_nodes_token", "page_token"),
        ("world_nul", "world"),
        ("revision_nul", "entities[0].revision"),
        ("fact_ref_type", "summaries[0].fact_refs[0].type"),
        ("time_overflow", "review_generated_at"),
    ],
)
async def test_odd_input_is_invalid_argument_not_internal(tree_stub, call, field):
    tree = await new_tree(tree_stub)
    review = tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=unique("res"),
        scope=project_scope(["p"]),
        phase="daily",
        review_generated_at="2026-10-02T01:00:00Z",
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if call == "list_nodes_token":
            await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id, page_token="²"))
        elif call == "world_nul":
            await tree_stub.ListMainLineVersions(
                tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id, world="a\x00b")
            )
        elif call == "revision_nul":
            review.entities.add(id="e", label="x", revision="r\x00")
            await tree_stub.RecordReview(review)
        elif call == "fact_ref_type":
            review.summaries.add(id="s", title="t").fact_refs.add(type=99, id="x")
            await tree_stub.RecordReview(review)
        else:
            review.review_generated_at = "0001-01-01T00:00:00+01:00"
            await tree_stub.RecordReview(review)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in [v.field for v in failure.violations]


async def test_ids_in_another_spelling_are_the_same_ids(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    reply = await answer(tree_stub, question.id)
    follow = await ask(tree_stub, tree.id.upper(), parent_id=reply.id.upper())
    assert follow.parent_id == reply.id
    adopted = await tree_stub.AdoptAnswer(
        tree_pb2.AdoptAnswerRequest(
            idempotency_key=unique("k"),
            question_id=question.id.upper(),
            answer_id=reply.id,
            expected_revision=question.revision,
        )
    )
    assert adopted.question.adopted_answer_id == reply.id


async def test_a_streaming_bud_cannot_be_cited(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    queue: asyncio.Queue[tree_pb2.StreamAnswerRequest | None] = asyncio.Queue()

    async def requests():
        while (message := await queue.get()) is not None:
            yield message

    call = tree_stub.StreamAnswer(requests())
    await queue.put(
        tree_pb2.StreamAnswerRequest(
            open=tree_pb2.StreamAnswerRequest.Open(
                idempotency_key=unique("k"), question_id=question.id
            )
        )
    )
    bud = (await call.read()).opened
    try:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await ask(tree_stub, tree.id, citations=[tree_pb2.Citation(node_id=bud.id)])
        assert describe(caught.value).metadata["field"] == "citations[0].node_id"
    finally:
        call.cancel()


async def test_a_result_committing_late_makes_open_cursors_stale(cluster, tree_stub, graph_stub):
    """Revisions of one scope commit in order, so no result can slip in under a cursor."""

    project = unique("proj")
    scope = project_scope([project])
    blocker = await asyncpg.connect(cluster.primary_dsn)
    try:
        # Hold the scope's ingestion lock as a slow ingestion would.
        await blocker.execute("BEGIN")
        await blocker.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))", f"projects:{project}"
        )
        late = asyncio.ensure_future(
            tree_stub.RecordReview(
                tree_pb2.RecordReviewRequest(
                    idempotency_key=unique("k"),
                    result_id=unique("res"),
                    scope=scope,
                    phase="daily",
                    review_generated_at="2026-10-02T01:00:00Z",
                    events=[tree_pb2.EventInput(id="late", kind=tree_pb2.CHANGE, title="Item")],
                )
            )
        )
        await asyncio.sleep(0.2)
        assert not late.done()  # it waits for the scope's turn instead of taking a revision
    finally:
        await blocker.execute("ROLLBACK")
        await blocker.close()
    written = await late
    found = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="item",
            scope=scope,
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    assert [h.ref.id for h in found.hits] == ["late"]


def test_lsns_are_parsed_strictly():
    for text in ("-1/0", " 1/0", "1_0/0", "+1/0"):
        with pytest.raises(ValueError):
            parse_lsn(text)


async def test_a_whole_float_is_taken_as_an_integer_and_a_huge_offset_is_refused(
    tree_stub, graph_stub, graph_service
):
    token, _ = await bound_project(tree_stub, graph_stub, "Floats are fine")
    async with in_memory(graph_service.port, token) as client:
        ok = await client.call_tool("story_graph_search", {"query": "floats", "page_size": 5.0})
        huge = await client.call_tool(
            "story_graph_read_source", {"source_reference_id": "s", "offset": 2**63}
        )
    assert not ok.is_error, ok.content
    assert tool_error(huge)["code"] == "invalid_argument"
