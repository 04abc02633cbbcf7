"""Merging trees by reference (T15): an explicit question in the target tree names source
nodes of another tree; nothing is copied, and the reference outlives archiving the source."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, new_tree


async def merge(stub, tree_id: str, sources: list[str], **fields: Any):
    return await stub.MergeByReference(
        tree_pb2.MergeByReferenceRequest(
            idempotency_key=fields.pop("idempotency_key", unique("k")),
            tree_id=tree_id,
            text=fields.pop("text", "How do these two lines meet?"),
            source_node_ids=sources,
            merged_by=fields.pop("merged_by", "user-1"),
            **fields,
        )
    )


async def failure_of(call) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return describe(caught.value)


async def test_a_merge_question_references_sources_without_copying_them(tree_stub, db):
    source_tree = await new_tree(tree_stub)
    source_q = await ask(tree_stub, source_tree.id, "source question")
    source_a = await answer(tree_stub, source_q.id, "source answer")
    target = await new_tree(tree_stub)
    root = await ask(tree_stub, target.id)
    parent = await answer(tree_stub, root.id)
    source_nodes_before = await db.fetchval(
        "SELECT count(*) FROM nodes WHERE tree_id = $1", uuid.UUID(source_tree.id)
    )
    merged = await merge(tree_stub, target.id, [source_a.id, source_q.id], parent_id=parent.id)
    question = merged.question
    assert (question.tree_id, question.parent_id, question.kind) == (
        target.id,
        parent.id,
        tree_pb2.QUESTION,
    )
    assert [(r.source_node_id, r.source_tree_id, r.position) for r in merged.references] == [
        (source_a.id, source_tree.id, 0),
        (source_q.id, source_tree.id, 1),
    ]
    assert {r.source_state for r in merged.references} == {tree_pb2.SOURCE_AVAILABLE}
    # Nothing moved: the source tree is as it was, the target gained only the question.
    assert (
        await db.fetchval(
            "SELECT count(*) FROM nodes WHERE tree_id = $1", uuid.UUID(source_tree.id)
        )
        == source_nodes_before
    )
    target_nodes = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=target.id))
    assert [n.id for n in target_nodes.nodes] == [root.id, parent.id, question.id]
    listed = await tree_stub.ListMergeReferences(
        tree_pb2.ListMergeReferencesRequest(question_id=question.id)
    )
    assert list(listed.references) == list(merged.references)


async def test_a_merge_reference_survives_archiving_its_source_and_says_so(tree_stub):
    source_tree = await new_tree(tree_stub)
    source_q = await ask(tree_stub, source_tree.id)
    target = await new_tree(tree_stub)
    merged = await merge(tree_stub, target.id, [source_q.id])
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=source_q.id,
            state=tree_pb2.ARCHIVED,
            expected_revision=1,
            changed_by="user-1",
        )
    )
    listed = await tree_stub.ListMergeReferences(
        tree_pb2.ListMergeReferencesRequest(question_id=merged.question.id)
    )
    [reference] = listed.references
    assert (reference.source_node_id, reference.source_state) == (
        source_q.id,
        tree_pb2.SOURCE_ARCHIVED,
    )
    # The archived source still reads through the reference.
    node = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=source_q.id))).node
    assert node.branch_state == tree_pb2.ARCHIVED


async def test_refused_merges_write_nothing(tree_stub, db):
    target = await new_tree(tree_stub)
    own = await ask(tree_stub, target.id)
    stranger_tree = await new_tree(tree_stub, owner="someone-else")
    stranger = await ask(tree_stub, stranger_tree.id)
    other = await new_tree(tree_stub)
    fine = await ask(tree_stub, other.id)
    bad = await failure_of(merge(tree_stub, "", [fine.id, fine.id], text="", merged_by=""))
    assert bad.code == grpc.StatusCode.INVALID_ARGUMENT
    assert {v.field for v in bad.violations} == {"tree_id", "text", "merged_by", "source_node_ids"}
    empty = await failure_of(merge(tree_stub, target.id, []))
    assert [v.field for v in empty.violations] == ["source_node_ids"]
    cases = [
        ([fine.id, str(uuid.uuid4())], grpc.StatusCode.NOT_FOUND),
        ([fine.id, own.id], grpc.StatusCode.FAILED_PRECONDITION),  # in the target tree
        ([stranger.id], grpc.StatusCode.FAILED_PRECONDITION),  # another owner's tree
    ]
    for sources, code in cases:
        failure = await failure_of(merge(tree_stub, target.id, sources))
        assert failure.code == code, (sources, failure)
    missing_target = await failure_of(merge(tree_stub, str(uuid.uuid4()), [fine.id]))
    assert missing_target.code == grpc.StatusCode.NOT_FOUND
    assert (
        await db.fetchval("SELECT count(*) FROM nodes WHERE tree_id = $1", uuid.UUID(target.id))
        == 1
    )
    assert (
        await db.fetchval(
            "SELECT count(*) FROM merge_references WHERE tree_id = $1", uuid.UUID(target.id)
        )
        == 0
    )


async def test_a_retried_merge_appends_one_question(tree_stub):
    source = await ask(tree_stub, (await new_tree(tree_stub)).id)
    target = await new_tree(tree_stub)
    key = unique("k")
    first = await merge(tree_stub, target.id, [source.id], idempotency_key=key)
    again = await merge(tree_stub, target.id, [source.id], idempotency_key=key)
    assert again.question == first.question
    nodes = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=target.id))
    assert len(nodes.nodes) == 1
