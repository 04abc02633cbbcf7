"""SearchLeaves (G9): a leaf extracted once is read by every scope its source belongs to —
Global reads project extractions, a project reads Global's extractions of its own sources —
and never by another project; each leaf says where it was extracted."""

from __future__ import annotations

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import leaves_pb2, tree_pb2
from tests.conftest import unique
from tests.leaves import Message, leaf_review, message, scope

TEXT = "We chose PostgreSQL for the ledger. Budget is 12k. Ship by March."
FACTS = [(0, 35, "The ledger uses PostgreSQL"), (36, 50, "The budget is 12k")]


def search(project: str | None, msg: Message, token, **fields) -> leaves_pb2.SearchLeavesRequest:
    return leaves_pb2.SearchLeavesRequest(
        scope=scope(project),
        source_type="message",
        source_id=msg.node_id,
        min_consistency=token,
        **fields,
    )


def texts(response: leaves_pb2.SearchLeavesResponse) -> list[str]:
    return [leaf.text for leaf in response.leaves]


async def test_a_leaf_extracted_once_is_read_by_its_projects_scopes_only(tree_stub, graph_stub):
    msg = await message(tree_stub, TEXT)
    under_global = await tree_stub.RecordReview(leaf_review(None, msg, FACTS))
    under_a = await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS))
    token = under_a.consistency
    as_a = await graph_stub.SearchLeaves(search(msg.project, msg, token))
    as_global = await graph_stub.SearchLeaves(search(None, msg, token))
    as_b = await graph_stub.SearchLeaves(search(unique("proj"), msg, token))
    assert texts(as_a) == texts(as_global) == [t for _, _, t in FACTS]
    assert texts(as_b) == []
    # One set of leaves, labelled with the Global extraction that stored them: the project
    # reads them as Global's extraction, never as a conclusion of its own.
    assert {leaf.leaf_id for leaf in as_a.leaves} == {leaf.leaf_id for leaf in as_global.leaves}
    for leaf in as_a.leaves:
        assert leaf.extracted_in.WhichOneof("kind") == "global"
        assert leaf.extracted_in_result_id == under_global.result_id
        assert (leaf.source_project, leaf.recorded_in_scope) == (msg.project, True)
        assert (leaf.source_version, leaf.contract_version, leaf.analysis) == (
            "1",
            "leaf-extraction/1",
            1,
        )
    assert (as_a.leaves[0].range.start, as_a.leaves[0].range.end) == (0, 35)


async def test_global_reads_leaves_extracted_under_a_project(tree_stub, graph_stub):
    msg = await message(tree_stub, TEXT)
    written = await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS[:1]))
    found = await graph_stub.SearchLeaves(search(None, msg, written.consistency))
    assert texts(found) == [FACTS[0][2]]
    leaf = found.leaves[0]
    assert leaf.extracted_in.projects.project_ids == [msg.project]
    assert leaf.recorded_in_scope is False  # Global reads it; it did not record it


async def test_a_text_search_and_paging_stay_inside_the_scope(tree_stub, graph_stub):
    msg = await message(tree_stub, TEXT)
    other = await message(tree_stub, TEXT)
    word = unique("Word")
    facts = [(0, 35, f"{word} one"), (36, 50, f"{word} two"), (51, 65, f"{word} three")]
    await tree_stub.RecordReview(leaf_review(other.project, other, facts))
    written = await tree_stub.RecordReview(leaf_review(msg.project, msg, facts))
    request = leaves_pb2.SearchLeavesRequest(
        scope=scope(msg.project),
        query=word.lower(),
        page_size=2,
        min_consistency=written.consistency,
    )
    first = await graph_stub.SearchLeaves(request)
    assert (texts(first), first.page.has_more) == ([f"{word} one", f"{word} two"], True)
    request.cursor = first.page.next_cursor
    second = await graph_stub.SearchLeaves(request)
    assert (texts(second), second.page.complete) == ([f"{word} three"], True)
    everywhere = await graph_stub.SearchLeaves(
        leaves_pb2.SearchLeavesRequest(
            scope=scope(None), query=word, page_size=50, min_consistency=written.consistency
        )
    )
    assert len(everywhere.leaves) == 6


async def test_a_source_edit_adds_leaves_and_the_confirmed_old_ones_stay_readable(
    tree_stub, graph_stub
):
    msg = await message(tree_stub, TEXT)
    await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS, confirmed=True))
    edited_text = TEXT.replace("12k", "15k")
    edited = await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=msg.node_id,
            expected_revision=1,
            text=edited_text,
        )
    )
    newer = Message(msg.project, msg.tree_id, edited.node.id, "2", edited_text)
    written = await tree_stub.RecordReview(
        leaf_review(msg.project, newer, [(36, 50, "The budget is 15k")])
    )
    found = await graph_stub.SearchLeaves(search(msg.project, msg, written.consistency))
    assert [(leaf.source_version, leaf.text, leaf.confirmation_state) for leaf in found.leaves] == [
        ("1", FACTS[0][2], "confirmed"),
        ("1", FACTS[1][2], "confirmed"),
        ("2", "The budget is 15k", "auto_generated"),
    ]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"source_type": "message"}, "source_id"),
        ({"page_size": 51}, "page_size"),
        ({"query": "x" * 501}, "query"),
        ({"cursor": "forged"}, "cursor"),
    ],
)
async def test_a_bad_leaf_search_is_refused_naming_the_field(graph_stub, fields, field):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.SearchLeaves(leaves_pb2.SearchLeavesRequest(scope=scope(None), **fields))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    error = describe(caught.value)
    assert field in [v.field for v in error.violations] or field in (caught.value.details() or "")


async def test_a_leaf_search_without_a_scope_or_session_requires_one(graph_stub):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.SearchLeaves(leaves_pb2.SearchLeavesRequest())
    assert describe(caught.value).reason == "scope_required"
