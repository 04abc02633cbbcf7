"""Transplanting a branch into a new tree (T14): the source stays byte-identical and the copy
is self-contained, with its origin on record."""

from __future__ import annotations

import uuid

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, new_tree


async def transplant(stub, node_id: str, **fields) -> tree_pb2.TransplantBranchResponse:
    response: tree_pb2.TransplantBranchResponse = await stub.TransplantBranch(
        tree_pb2.TransplantBranchRequest(
            idempotency_key=fields.pop("idempotency_key", unique("k")),
            node_id=node_id,
            title=fields.pop("title", "its own topic"),
            transplanted_by=fields.pop("transplanted_by", "user-1"),
        )
    )
    return response


async def all_nodes(stub, tree_id: str) -> list[tree_pb2.Node]:
    listed = await stub.ListNodes(
        tree_pb2.ListNodesRequest(tree_id=tree_id, page_size=500, include_archived=True)
    )
    return list(listed.nodes)


async def failure_of(call) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return describe(caught.value)


async def test_a_transplant_copies_the_branch_and_leaves_the_source_as_it_was(tree_stub, db):
    source = await new_tree(tree_stub)
    root = await ask(tree_stub, source.id, "main question")
    main = await answer(tree_stub, root.id, "main answer")
    await adopt(tree_stub, root.id, main.id, root.revision)
    branch = await ask(
        tree_stub,
        source.id,
        "a side topic",
        parent_id=main.id,
        citations=[tree_pb2.Citation(node_id=main.id, start=0, end=4, note="see")],
    )
    kept = await answer(tree_stub, branch.id, "side answer")
    spare = await answer(tree_stub, branch.id, "another")
    adopted = await adopt(tree_stub, branch.id, kept.id, branch.revision)
    deeper = await ask(tree_stub, source.id, "deeper", parent_id=kept.id)
    before = await all_nodes(tree_stub, source.id)
    source_tree_before = (await tree_stub.GetTree(tree_pb2.GetTreeRequest(tree_id=source.id))).tree

    moved = await transplant(tree_stub, branch.id)
    tree, origin = moved.tree, moved.origin
    assert (tree.title, tree.owner) == ("its own topic", source.owner)
    assert (origin.tree_id, origin.source_tree_id, origin.source_node_id) == (
        tree.id,
        source.id,
        branch.id,
    )
    assert origin.source_tree_revision == source_tree_before.revision
    assert [n.id for n in origin.ancestor_path] == [root.id, main.id]
    assert origin.ancestor_path[1].text == "main answer"
    assert set(origin.copies) == {branch.id, kept.id, spare.id, deeper.id}
    # The source is byte-identical.
    assert await all_nodes(tree_stub, source.id) == before
    assert (await tree_stub.GetTree(tree_pb2.GetTreeRequest(tree_id=source.id))).tree == (
        source_tree_before
    )

    copies = await all_nodes(tree_stub, tree.id)
    assert [n.id for n in copies] == [
        origin.copies[n] for n in (branch.id, kept.id, spare.id, deeper.id)
    ]
    by_source = {n.id: n for n in before}
    for copy in copies:
        original = by_source[next(k for k, v in origin.copies.items() if v == copy.id)]
        assert (copy.text, copy.kind, copy.realm, copy.tree_id) == (
            original.text,
            original.kind,
            original.realm,
            tree.id,
        )
    new_root, new_kept, _, new_deeper = copies
    assert new_root.parent_id == "" and new_deeper.parent_id == new_kept.id
    assert new_root.adopted_answer_id == new_kept.id and new_root.revision == adopted.revision
    assert new_kept.lifecycle == tree_pb2.IN_EXPLORATION
    # The citation travels with its snapshot and reads without the source.
    assert [(c.node_id, c.snapshot, c.note) for c in new_root.citations] == [
        (main.id, "main", "see")
    ]
    cited = await tree_stub.ListCitations(tree_pb2.ListCitationsRequest(node_id=new_root.id))
    assert [c.citation.snapshot for c in cited.citations] == ["main"]
    # The copy grows on its own.
    grown = await ask(tree_stub, tree.id, "continuing here", parent_id=new_kept.id)
    assert grown.ordinal == 5
    assert await all_nodes(tree_stub, source.id) == before
    read = await tree_stub.GetTransplantOrigin(tree_pb2.GetTransplantOriginRequest(tree_id=tree.id))
    assert read.origin == origin


async def test_a_copy_reads_on_after_the_source_is_archived(tree_stub):
    source = await new_tree(tree_stub)
    branch = await ask(tree_stub, source.id, "topic")
    reply = await answer(tree_stub, branch.id, "answer")
    moved = await transplant(tree_stub, branch.id)
    await tree_stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=branch.id,
            state=tree_pb2.ARCHIVED,
            expected_revision=1,
            changed_by="user-1",
        )
    )
    copies = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=moved.tree.id))
    assert [n.text for n in copies.nodes] == ["topic", "answer"]
    assert {n.branch_state for n in copies.nodes} == {tree_pb2.BRANCH_STATE_UNSPECIFIED}
    assert moved.origin.copies[reply.id] == copies.nodes[1].id


async def test_refused_transplants_write_nothing(tree_stub, db):
    source = await new_tree(tree_stub)
    root = await ask(tree_stub, source.id)
    reply = await answer(tree_stub, root.id)
    trees_before = await db.fetchval("SELECT count(*) FROM trees")
    bad = await failure_of(transplant(tree_stub, "", title="", transplanted_by=""))
    assert {v.field for v in bad.violations} == {"node_id", "title", "transplanted_by"}
    of_answer = await failure_of(transplant(tree_stub, reply.id))
    assert of_answer.code == grpc.StatusCode.FAILED_PRECONDITION
    missing = await failure_of(transplant(tree_stub, str(uuid.uuid4())))
    assert missing.code == grpc.StatusCode.NOT_FOUND
    assert await db.fetchval("SELECT count(*) FROM trees") == trees_before
    no_origin = await failure_of(
        tree_stub.GetTransplantOrigin(tree_pb2.GetTransplantOriginRequest(tree_id=source.id))
    )
    assert no_origin.code == grpc.StatusCode.NOT_FOUND


async def test_a_retried_transplant_makes_one_tree(tree_stub, db):
    source = await new_tree(tree_stub)
    root = await ask(tree_stub, source.id)
    key = unique("k")
    first = await transplant(tree_stub, root.id, idempotency_key=key)
    again = await transplant(tree_stub, root.id, idempotency_key=key)
    assert again.tree == first.tree and again.origin == first.origin
    count = await db.fetchval(
        "SELECT count(*) FROM transplants WHERE source_node_id = $1", uuid.UUID(root.id)
    )
    assert count == 1
