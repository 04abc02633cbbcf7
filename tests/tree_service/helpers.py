"""Small builders for mirror-tree tests (every write through TreeService's API)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tests.conftest import create_tree, unique


async def new_tree(stub, **fields: Any) -> tree_pb2.Tree:
    if fields:
        response = await stub.CreateTree(
            tree_pb2.CreateTreeRequest(
                idempotency_key=unique("k"),
                title="t",
                owner=fields.pop("owner", "tester"),
                **fields,
            )
        )
        tree: tree_pb2.Tree = response.tree
        return tree
    created: tree_pb2.Tree = (await create_tree(stub)).tree
    return created


async def ask(stub, tree_id: str, text: str = "q", parent_id: str = "", **fields: Any):
    response = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=unique("k"), tree_id=tree_id, parent_id=parent_id, text=text, **fields
        )
    )
    return response.node


async def answer(stub, question_id: str, text: str = "a", **fields: Any):
    response = await stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=unique("k"), question_id=question_id, text=text, **fields
        )
    )
    return response.node


async def adopt(stub, question_id: str, answer_id: str, expected_revision: int):
    response = await stub.AdoptAnswer(
        tree_pb2.AdoptAnswerRequest(
            idempotency_key=unique("k"),
            question_id=question_id,
            answer_id=answer_id,
            expected_revision=expected_revision,
        )
    )
    return response.question


def confirmation(user: str = "user-1") -> tree_pb2.UserConfirmation:
    return tree_pb2.UserConfirmation(confirmed=True, user_id=user)


# A candidate of every kind each scope allows, with its content (the caller writes them).
CANDIDATE_KINDS: dict[int, list[tuple[str, str]]] = {
    tree_pb2.REAL_EXPERIENCE: [
        ("real_record", ""),
        ("heart_trace", ""),
        ("memory_candidate", "short_term"),
        ("memory_candidate", "long_term"),
        ("memory_candidate", "core"),
    ],
    tree_pb2.WORLD_CANON: [
        ("world_record", ""),
        ("world_memory", ""),
        ("world_relationship_meaning", ""),
    ],
    tree_pb2.REHEARSAL_RECORD: [("rehearsal_record", "")],
}


def proposals(scope: int) -> list[tree_pb2.CandidateProposal]:
    return [
        tree_pb2.CandidateProposal(
            kind=kind,
            tier=tier,
            subject=f"{kind} {tier} subject"
            if kind in ("memory_candidate", "world_memory")
            else "",
            text=f"{kind} {tier} text",
        )
        for kind, tier in CANDIDATE_KINDS[scope]
    ]


async def canonicalize(
    stub, tree_id: str, leaf: str = "", nodes=(), expected: int = 0, *, candidates=()
):
    request = tree_pb2.CanonicalizeRequest(
        idempotency_key=unique("k"),
        tree_id=tree_id,
        confirmation=confirmation(),
        expected_version=expected,
        candidates=list(candidates),
    )
    if leaf:
        request.leaf_node_id = leaf
    else:
        request.nodes.node_ids.extend(nodes)
    return (await stub.Canonicalize(request)).version


async def commit(stub, node_id: str, kind: Any, statement: str = "s") -> tree_pb2.Commitment:
    """A commitment or fact stated at the node by user-1."""
    response = await stub.RecordCommitment(
        tree_pb2.RecordCommitmentRequest(
            idempotency_key=unique("k"),
            node_id=node_id,
            kind=kind,
            statement=statement,
            stated_by="user-1",
        )
    )
    stated: tree_pb2.Commitment = response.commitment
    return stated


async def withdraw(stub, commitment_id: str) -> None:
    await stub.WithdrawCommitment(
        tree_pb2.WithdrawCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=commitment_id, withdrawn_by="user-1"
        )
    )
