"""Answer lifecycle as readable state (T22) and branch states (T13): every transition
revisioned, conclusions kept on record, archive only hiding."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, canonicalize, new_tree
from tests.tree_service.racing import held

LOCK_BRANCH = "SELECT 1 FROM branches WHERE node_id = $1 FOR UPDATE"


async def lifecycle(stub, node_id: str) -> int:
    node = (await stub.GetNode(tree_pb2.GetNodeRequest(node_id=node_id))).node
    return int(node.lifecycle)


async def listed(stub, tree_id: str, **fields) -> list[tree_pb2.Node]:
    nodes: list[tree_pb2.Node] = []
    token = ""
    while True:
        page = await stub.ListNodes(
            tree_pb2.ListNodesRequest(tree_id=tree_id, page_size=2, page_token=token, **fields)
        )
        nodes.extend(page.nodes)
        token = page.next_page_token
        if not token:
            return nodes


async def move(stub, node_id: str, state: Any, revision: int, **fields: Any) -> tree_pb2.Branch:
    response = await stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=node_id,
            state=state,
            expected_revision=revision,
            changed_by=fields.pop("changed_by", "user-1"),
            **fields,
        )
    )
    branch: tree_pb2.Branch = response.branch
    return branch


async def branch_of(stub, node_id: str) -> tree_pb2.Branch:
    branch: tree_pb2.Branch = (
        await stub.GetBranch(tree_pb2.GetBranchRequest(node_id=node_id))
    ).branch
    return branch


async def test_an_answer_goes_from_candidate_to_canonicalized(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    first = await answer(tree_stub, question.id, "a1")
    second = await answer(tree_stub, question.id, "a2")
    assert await lifecycle(tree_stub, first.id) == tree_pb2.CANDIDATE
    assert first.lifecycle == tree_pb2.CANDIDATE  # the write's own response says so too
    adopted = await adopt(tree_stub, question.id, first.id, question.revision)
    assert await lifecycle(tree_stub, first.id) == tree_pb2.ADOPTED
    assert await lifecycle(tree_stub, second.id) == tree_pb2.CANDIDATE
    assert await lifecycle(tree_stub, question.id) == tree_pb2.ANSWER_LIFECYCLE_UNSPECIFIED
    follow_up = await ask(tree_stub, tree.id, "more?", parent_id=first.id)
    assert await lifecycle(tree_stub, first.id) == tree_pb2.IN_EXPLORATION
    await canonicalize(tree_stub, tree.id, leaf=first.id)
    assert await lifecycle(tree_stub, first.id) == tree_pb2.CANONICALIZED
    # Adopting another candidate does not undo what was canonicalized.
    await adopt(tree_stub, question.id, second.id, adopted.revision)
    assert await lifecycle(tree_stub, first.id) == tree_pb2.CANONICALIZED
    assert await lifecycle(tree_stub, second.id) == tree_pb2.ADOPTED
    by_state = {
        n.id: n.lifecycle for n in await listed(tree_stub, tree.id) if n.kind == tree_pb2.ANSWER
    }
    assert by_state == {first.id: tree_pb2.CANONICALIZED, second.id: tree_pb2.ADOPTED}
    assert follow_up.lifecycle == tree_pb2.ANSWER_LIFECYCLE_UNSPECIFIED


async def test_list_nodes_filters_by_lifecycle(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    answers = [await answer(tree_stub, question.id, f"a{i}") for i in range(3)]
    await adopt(tree_stub, question.id, answers[1].id, question.revision)
    candidates = await listed(tree_stub, tree.id, lifecycles=[tree_pb2.CANDIDATE])
    assert [n.id for n in candidates] == [answers[0].id, answers[2].id]
    both = await listed(tree_stub, tree.id, lifecycles=[tree_pb2.ADOPTED, tree_pb2.CANDIDATE])
    assert [n.id for n in both] == [a.id for a in answers]
    assert await listed(tree_stub, tree.id, lifecycles=[tree_pb2.CANONICALIZED]) == []
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await listed(tree_stub, tree.id, lifecycles=[tree_pb2.CANDIDATE, 99])
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["lifecycles[1]"]


async def test_conclude_records_the_summary_and_open_ends_and_reopen_keeps_it(tree_stub):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id)
    adopted = await answer(tree_stub, root.id, "a1")
    spare = await answer(tree_stub, root.id, "a2")
    await adopt(tree_stub, root.id, adopted.id, root.revision)
    open_question = await ask(tree_stub, tree.id, "still open", parent_id=adopted.id)
    concluded = await move(
        tree_stub, root.id, tree_pb2.CONCLUDED, 1, summary="settled on a1", reason="done"
    )
    assert concluded.state == tree_pb2.CONCLUDED and concluded.revision == 2
    conclusion = concluded.last_conclusion
    assert conclusion.summary == "settled on a1" and conclusion.revision == 2
    assert list(conclusion.open_question_ids) == [open_question.id]
    assert list(conclusion.candidate_answer_ids) == [spare.id]
    reopened = await move(tree_stub, root.id, tree_pb2.ACTIVE, 2, reason="new evidence")
    assert reopened.state == tree_pb2.ACTIVE and reopened.revision == 3
    assert reopened.last_conclusion == conclusion
    assert [(t.from_state, t.to_state) for t in reopened.transitions] == [
        (tree_pb2.ACTIVE, tree_pb2.CONCLUDED),
        (tree_pb2.CONCLUDED, tree_pb2.ACTIVE),
    ]
    assert await branch_of(tree_stub, root.id) == reopened
    # A reopened branch can be concluded again, and the newer conclusion is the last one.
    again = await move(tree_stub, root.id, tree_pb2.CONCLUDED, 3, summary="second look")
    assert again.last_conclusion.summary == "second look"


async def test_archive_only_hides_and_differs_from_conclude_in_every_read(tree_stub):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id)
    concluded_q = await ask(tree_stub, tree.id, "concluded branch")
    archived_q = await ask(tree_stub, tree.id, "archived branch")
    archived_a = await answer(tree_stub, archived_q.id, "under the archive")
    await move(tree_stub, concluded_q.id, tree_pb2.CONCLUDED, 1, summary="s")
    await move(tree_stub, archived_q.id, tree_pb2.ARCHIVED, 1)

    async def placed(node_id: str) -> tuple[int, str]:
        node = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=node_id))).node
        return node.branch_state, node.branch_id

    assert await placed(root.id) == (tree_pb2.BRANCH_STATE_UNSPECIFIED, "")
    assert await placed(concluded_q.id) == (tree_pb2.CONCLUDED, concluded_q.id)
    assert await placed(archived_q.id) == (tree_pb2.ARCHIVED, archived_q.id)
    assert await placed(archived_a.id) == (tree_pb2.ARCHIVED, archived_q.id)
    path = await tree_stub.GetPath(tree_pb2.GetPathRequest(node_id=archived_a.id))
    assert [n.branch_state for n in path.nodes] == [tree_pb2.ARCHIVED, tree_pb2.ARCHIVED]
    # A write's response does not place its node.
    assert archived_a.branch_state == tree_pb2.BRANCH_STATE_UNSPECIFIED
    # A node outside every moved branch reads exactly as it was written.
    assert (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=root.id))).node == root
    visible = {n.id: n.branch_state for n in await listed(tree_stub, tree.id)}
    assert visible == {
        root.id: tree_pb2.BRANCH_STATE_UNSPECIFIED,
        concluded_q.id: tree_pb2.CONCLUDED,
    }
    everything = {
        n.id: n.branch_state for n in await listed(tree_stub, tree.id, include_archived=True)
    }
    assert everything == {
        **visible,
        archived_q.id: tree_pb2.ARCHIVED,
        archived_a.id: tree_pb2.ARCHIVED,
    }

    async def branches(**fields) -> dict[str, int]:
        found = await tree_stub.ListBranches(
            tree_pb2.ListBranchesRequest(tree_id=tree.id, **fields)
        )
        return {b.node_id: b.state for b in found.branches}

    assert await branches() == {concluded_q.id: tree_pb2.CONCLUDED}
    assert await branches(include_archived=True) == {
        concluded_q.id: tree_pb2.CONCLUDED,
        archived_q.id: tree_pb2.ARCHIVED,
    }
    assert await branches(include_archived=True, states=[tree_pb2.ARCHIVED]) == {
        archived_q.id: tree_pb2.ARCHIVED
    }
    archived = await branch_of(tree_stub, archived_q.id)
    assert not archived.HasField("last_conclusion")  # archiving concluded nothing
    # Restoring shows the nodes again, unchanged.
    await move(tree_stub, archived_q.id, tree_pb2.ACTIVE, 2)
    assert archived_a.id in {n.id for n in await listed(tree_stub, tree.id)}


async def test_an_archived_branch_hides_the_moved_branches_inside_it(tree_stub):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id)
    inner = await ask(tree_stub, tree.id, "inner", parent_id=(await answer(tree_stub, root.id)).id)
    await move(tree_stub, inner.id, tree_pb2.PAUSED, 1)
    await move(tree_stub, root.id, tree_pb2.ARCHIVED, 1)
    assert await listed(tree_stub, tree.id) == []
    node = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=inner.id))).node
    assert (node.branch_state, node.branch_id) == (tree_pb2.ARCHIVED, root.id)
    assert (await branch_of(tree_stub, inner.id)).state == tree_pb2.PAUSED


async def test_refused_transitions_write_nothing(tree_stub, db):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id)

    async def refused(**fields):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await move(tree_stub, **fields)
        return describe(caught.value)

    bad = await refused(node_id="", state=0, revision=0, changed_by="", summary="x")
    assert bad.code == grpc.StatusCode.INVALID_ARGUMENT
    assert {v.field for v in bad.violations} == {
        "node_id",
        "state",
        "expected_revision",
        "changed_by",
        "summary",
    }
    no_summary = await refused(node_id=root.id, state=tree_pb2.CONCLUDED, revision=1)
    assert [v.field for v in no_summary.violations] == ["summary"]
    malformed = await refused(node_id="nope", state=tree_pb2.PAUSED, revision=1)
    assert [v.field for v in malformed.violations] == ["node_id"]
    missing = await refused(node_id=str(uuid.uuid4()), state=tree_pb2.PAUSED, revision=1)
    assert missing.code == grpc.StatusCode.NOT_FOUND
    same = await refused(node_id=root.id, state=tree_pb2.ACTIVE, revision=1)
    assert same.code == grpc.StatusCode.FAILED_PRECONDITION
    stale = await refused(node_id=root.id, state=tree_pb2.PAUSED, revision=2)
    assert stale.code == grpc.StatusCode.ABORTED and stale.reason == "revision_conflict"
    assert (
        await db.fetchval(
            "SELECT count(*) FROM branch_transitions JOIN branches USING (node_id)"
            " WHERE tree_id = $1",
            uuid.UUID(tree.id),
        )
        == 0
    )
    assert await db.fetchval(
        "SELECT revision FROM branches WHERE node_id = $1", uuid.UUID(root.id)
    ) in (None, 1)
    await move(tree_stub, root.id, tree_pb2.CONCLUDED, 1, summary="s")
    paused = await refused(node_id=root.id, state=tree_pb2.PAUSED, revision=2)
    assert paused.code == grpc.StatusCode.FAILED_PRECONDITION  # reopen first
    assert (await branch_of(tree_stub, root.id)).revision == 2


async def test_a_retried_transition_applies_once(tree_stub):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id)
    request = tree_pb2.SetBranchStateRequest(
        idempotency_key=unique("k"),
        node_id=root.id,
        state=tree_pb2.PAUSED,
        expected_revision=1,
        changed_by="user-1",
    )
    first = await tree_stub.SetBranchState(request)
    again = await tree_stub.SetBranchState(request)
    assert again.branch == first.branch
    assert len((await branch_of(tree_stub, root.id)).transitions) == 1


async def test_concurrent_transitions_of_one_revision_have_exactly_one_winner(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    root = await ask(tree_stub, tree.id)
    await move(tree_stub, root.id, tree_pb2.PAUSED, 1)
    wanted: list[dict[str, Any]] = [
        {"state": tree_pb2.ACTIVE},
        {"state": tree_pb2.CONCLUDED, "summary": "s"},
        {"state": tree_pb2.ARCHIVED},
        {"state": tree_pb2.ACTIVE, "changed_by": "user-2"},
    ]
    async with held(cluster.primary_dsn, LOCK_BRANCH, uuid.UUID(root.id)) as gate:
        writers = [asyncio.ensure_future(move(tree_stub, root.id, revision=2, **w)) for w in wanted]
        await gate.until_waiting(writers)
    results = await asyncio.gather(*writers, return_exceptions=True)
    wins = [r for r in results if not isinstance(r, BaseException)]
    losses = [describe(r) for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(wins) == 1 and len(losses) == len(wanted) - 1
    assert {f.reason for f in losses} == {"revision_conflict"}
    assert {f.metadata["current_revision"] for f in losses} == {"3"}
    final = await branch_of(tree_stub, root.id)
    assert final == wins[0] and final.revision == 3 and len(final.transitions) == 2
