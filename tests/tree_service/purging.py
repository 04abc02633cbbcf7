"""Builders of purge tests (T16): a world whose branch was canonicalized, read by a review,
cited, merged and quoted in recorded contexts, and the calls and checks around a purge."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import common_pb2, purge_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.graph_service.story import ref
from tests.tree_service.helpers import answer, ask
from tests.tree_service.reviews import review, scope_of

ALL = purge_pb2.PurgeChoice(
    citations=True,
    canon_entries=True,
    graph_facts=True,
    merge_references=True,
    conclusions=True,
    transplant_origins=True,
)


def as_answered(impact: purge_pb2.PurgeImpact) -> purge_pb2.PurgeImpact:
    """A preview's impact as the purge answers it: retracted preferences named by id only."""
    answered = purge_pb2.PurgeImpact()
    answered.CopyFrom(impact)
    for preference in answered.preferences:
        preference.subject = ""
    return answered


@dataclass
class World:
    project: str
    tree_id: str
    root_id: str
    branch_id: str
    branch_answer_id: str
    secret: str
    citing_id: str
    merge_question_id: str
    version: tree_pb2.MainLineVersion


async def failure_of(call: Any) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return describe(caught.value)


def fields(failure: RpcFailure) -> list[str]:
    return [v.field for v in failure.violations]


async def set_state(stub, node_id: str, state: Any, revision: int) -> Any:
    response = await stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=node_id,
            state=state,
            expected_revision=revision,
            changed_by="user-1",
        )
    )
    return response.branch


def code_word(branch_id: str) -> str:
    """A word only the fact stated in the world's branch holds (none of its nodes' texts)."""
    return f"codeword-{branch_id}"


async def world(stub, archive: bool = True) -> World:
    """A tree whose branch, holding a stated fact, was canonicalized (so the story graph holds
    both, and the fact is in effect), is cited and merged from another tree, and (by default)
    archived."""
    project = unique("purge")
    secret = f"the secret plan {uuid.uuid4().hex}"
    tree = (await create_tree(stub, project, title="Trip plans")).tree
    root = await ask(stub, tree.id, "Where to go?")
    root_answer = await answer(stub, root.id, "Somewhere warm")
    branch = await ask(stub, tree.id, f"Q: {secret}", parent_id=root_answer.id)
    branch_answer = await answer(stub, branch.id, f"A: {secret}")
    # A fact stated in the branch, which the canonicalization below puts in effect: the story
    # graph holds it, and the recorded contexts below hold it as memory.
    await stub.RecordCommitment(
        tree_pb2.RecordCommitmentRequest(
            idempotency_key=unique("k"),
            node_id=branch_answer.id,
            kind=tree_pb2.STATED_FACT,
            statement=f"We settled on {secret}, code word {code_word(branch.id)}",
            stated_by="user-1",
        )
    )
    confirmed = await stub.Canonicalize(
        tree_pb2.CanonicalizeRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            leaf_node_id=branch_answer.id,
            confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="user-1"),
            candidates=[
                tree_pb2.CandidateProposal(kind="heart_trace", text=f"Relief at {secret}"),
                tree_pb2.CandidateProposal(
                    kind="memory_candidate",
                    tier="long_term",
                    subject=f"plans: {secret}",
                    text=f"The user chose {secret}",
                ),
            ],
        )
    )
    # The memory candidate accepted: a confirmed preference resting on the version.
    await stub.AcceptCanonCandidate(
        tree_pb2.ReviewCanonCandidateRequest(
            idempotency_key=unique("k"),
            candidate_id=confirmed.version.candidates[1].id,
            expected_revision=1,
            reviewed_by="user-1",
        )
    )
    other = (await create_tree(stub, project, title="Other")).tree
    citing = await ask(
        stub,
        other.id,
        "As said before",
        citations=[tree_pb2.Citation(node_id=branch_answer.id, note="keep")],
    )
    merged = await stub.MergeByReference(
        tree_pb2.MergeByReferenceRequest(
            idempotency_key=unique("k"),
            tree_id=other.id,
            text="How do these meet?",
            source_node_ids=[branch.id],
            merged_by="user-1",
        )
    )
    # A review that read the branch's answer as a message, a preference about its decision,
    # and recorded contexts that quote the branch.
    await stub.RecordReview(
        review(
            project,
            result_id=f"review-{branch.id}",
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id="msg",
                    source_type="message",
                    source_id=branch_answer.id,
                    fragment=f"A: {secret}",
                )
            ],
            events=[
                tree_pb2.EventInput(
                    id="plan",
                    kind=tree_pb2.DECISION,
                    title="Plan chosen",
                    source_reference_ids=["msg"],
                )
            ],
            leaf_facts=[
                tree_pb2.LeafFactInput(
                    id="said", text=f"The user said {secret}", source_reference_ids=["msg"]
                )
            ],
            summaries=[tree_pb2.SummaryInput(id="sum", title="Summary", text=f"On {secret}")],
        )
    )
    await stub.SetPreference(
        tree_pb2.SetPreferenceRequest(
            idempotency_key=unique("k"),
            preference_id=f"pref-{branch.id}",
            scope=scope_of(project),
            subject="travel",
            text="prefers warm places",
            about=[ref(common_pb2.EVENT, "plan")],
            confirmed_by="user-1",
        )
    )
    for node_id in (citing.id, branch_answer.id):
        await stub.AssembleContext(
            tree_pb2.AssembleContextRequest(
                idempotency_key=unique("k"), node_id=node_id, budget=100_000
            )
        )
    if archive:
        await set_state(stub, branch.id, tree_pb2.ARCHIVED, 1)
    return World(
        project,
        tree.id,
        root.id,
        branch.id,
        branch_answer.id,
        secret,
        citing.id,
        merged.question.id,
        confirmed.version,
    )


async def preview(stub, node_id: str, copies: bool = False) -> Any:
    return await stub.PreviewPurge(
        purge_pb2.PreviewPurgeRequest(node_id=node_id, include_transplant_copies=copies)
    )


def purge_request(w: World, token: str, **fields: Any) -> purge_pb2.PurgeRequest:
    return purge_pb2.PurgeRequest(
        idempotency_key=fields.pop("idempotency_key", unique("k")),
        tree_id=fields.pop("tree_id", w.tree_id),
        node_id=fields.pop("node_id", w.branch_id),
        preview_token=token,
        choice=fields.pop("choice", ALL),
        purged_by=fields.pop("purged_by", "user-1"),
        reason=fields.pop("reason", "I never want to see this again"),
        **fields,
    )


async def footprint(db, secret: str) -> list[str]:
    """Every table and column whose text still holds `secret`."""
    rows = await db.fetch(
        """SELECT table_name, column_name, data_type FROM information_schema.columns
           WHERE table_schema = 'public'
             AND data_type IN ('text', 'character varying', 'jsonb', 'bytea', 'ARRAY')"""
    )
    found = []
    for r in rows:
        column = f'"{r["table_name"]}"."{r["column_name"]}"'
        if r["data_type"] == "bytea":
            test = f"position(convert_to($1::text, 'UTF8') IN {column}) > 0"
        else:
            test = f"strpos({column}::text, $1::text) > 0"
        hit = await db.fetchval(f'SELECT count(*) FROM "{r["table_name"]}" WHERE {test}', secret)
        if hit:
            found.append(f"{r['table_name']}.{r['column_name']}")
    return sorted(found)


class Replayable:
    """Writes made with a key of their own, to be sent again after the words are forgotten."""

    def __init__(self, stub: Any) -> None:
        self.stub = stub
        self.sent: list[tuple[str, Any]] = []

    async def __call__(self, method: str, request: Any) -> Any:
        self.sent.append((method, request))
        return await getattr(self.stub, method)(request)

    async def leaks(self, words: str) -> list[str]:
        """The writes whose replayed response still holds `words`."""
        leaked = []
        for method, request in self.sent:
            replayed = await getattr(self.stub, method)(request)
            if words.encode() in replayed.SerializeToString():
                leaked.append(method)
        return leaked
