"""A retry after a purge answers what a read would show now (T12, T16): a branch is written
through every write RPC that can carry its words, each with its own idempotency key and a
unique marker in every kind of content; once the branch is purged, each write is sent again
with its key, and no replayed response, no conclusion of another branch, no transplanted
tree's origin and no column of the database holds the marker.

Every idempotent write of the TreeService is either replayed here or named in NO_BRANCH_WORDS
with why its response cannot hold a branch's words: a new write RPC fails the catalog test
until it is placed."""

from __future__ import annotations

import json
import uuid

from mirrortree.v1 import common_pb2, costs_pb2, purge_pb2, tasks_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import ref
from tests.tree_service.helpers import answer, ask, confirmation, new_tree
from tests.tree_service.purging import ALL, Replayable, footprint, preview, set_state
from tests.tree_service.reviews import review, scope_of
from tests.tree_service.tasking import CAPABILITIES, start_request

# Write RPCs whose responses hold no words of a branch, and why.
NO_BRANCH_WORDS = {
    "CreateTree": "the tree: its title is the tree's, not a branch's",
    "RecordReview": "the result's id, time, revision and count",
    "RecordSource": "a recorded source's revision: a source is not a branch",
    "SetAppEnabled": "an app's switch",
    "SetCapability": "a capability's assignments",
    "SetSessionStoryGraph": "a session's story-graph switch",
    "SaveSessionContext": "the host app's session state, a tree's and not a branch's",
    "CreateBinding": "a runtime binding's token and scope",
    "GrantCitationAuthorization": "a grant: who, to whom, the grantor's redaction terms",
    "RevokeCitationAuthorization": "the revoked grant and a count",
    "AcceptCanonCandidate": "a candidate: kind, ids and the reviewer's reason",
    "RejectCanonCandidate": "a candidate: kind, ids and the reviewer's reason",
    "EstimateRequest": "an estimate: amounts, ids, a model strategy",
    "ApproveEstimate": "an estimate and its approver's reason",
    "ChargeEstimate": "a charge: amounts and ids",
    "SettleCharge": "a charge: amounts and ids",
    "SetQuota": "a quota: amounts",
    "Purge": "the purge's own record: ids, counts and its reason",
    "ConfirmCommitment": "a commitment, refilled as RecordCommitment's (replayed here); a "
    "stated fact needs no confirmation, so the fixture has none to confirm",
}


def idempotent_writes() -> set[str]:
    service = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
    return {m.name for m in service.methods if "idempotency_key" in m.input_type.fields_by_name}


def test_every_write_is_replayed_after_a_purge_or_holds_no_branch_words():
    assert set(NO_BRANCH_WORDS) <= idempotent_writes()
    assert not set(NO_BRANCH_WORDS) & REPLAYED
    unplaced = idempotent_writes() - REPLAYED - set(NO_BRANCH_WORDS)
    assert not unplaced, f"replay these after a purge, or say why they hold no words: {unplaced}"


REPLAYED = {
    "AskQuestion",
    "EditQuestion",
    "AddAnswer",
    "AddContinuation",
    "AdoptAnswer",
    "CompareCandidates",
    "Canonicalize",
    "InviteCanonicalization",
    "DeclineCanonInvitation",
    "RecordArbiterRuling",
    "RecordRealAction",
    "RecordCommitment",
    "WithdrawCommitment",
    "RecordContextSummary",
    "AssembleContext",
    "SetPreference",
    "SetBranchState",
    "MergeByReference",
    "TransplantBranch",
    "StartTask",
    "ClaimTask",
    "HeartbeatTask",
    "ReportTaskProgress",
    "FailTask",
    "InstructTask",
    "CompleteTask",
    "AcceptObservation",
}


async def test_a_retry_after_a_purge_answers_no_purged_words(tree_stub, db):
    secret = f"the hidden itinerary {uuid.uuid4().hex}"
    project = unique("replays")
    send = Replayable(tree_stub)
    k = unique
    tree = (
        await tree_stub.CreateTree(
            tree_pb2.CreateTreeRequest(
                idempotency_key=k("k"), title="Trips", owner="user-1", project_id=project
            )
        )
    ).tree
    root = await ask(tree_stub, tree.id, "Where next?")
    root_answer = await answer(tree_stub, root.id, "Somewhere")

    # ---- the branch: its nodes, in the real realm so that it may act --------------------
    branch = (
        await send(
            "AskQuestion",
            tree_pb2.AskQuestionRequest(
                idempotency_key=k("k"),
                tree_id=tree.id,
                parent_id=root_answer.id,
                text=f"Q: {secret}",
                realm=tree_pb2.REAL,
            ),
        )
    ).node
    reply = (
        await send(
            "AddAnswer",
            tree_pb2.AddAnswerRequest(
                idempotency_key=k("k"), question_id=branch.id, text=f"A: {secret}"
            ),
        )
    ).node
    other = (
        await send(
            "AddAnswer",
            tree_pb2.AddAnswerRequest(
                idempotency_key=k("k"), question_id=branch.id, text=f"Or: {secret}"
            ),
        )
    ).node
    await send(
        "AddContinuation",
        tree_pb2.AddContinuationRequest(
            idempotency_key=k("k"),
            answer_id=reply.id,
            kind=tree_pb2.ELABORATION,
            text=f"And also {secret}",
        ),
    )
    question = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=branch.id))).node
    await send(
        "AdoptAnswer",
        tree_pb2.AdoptAnswerRequest(
            idempotency_key=k("k"),
            question_id=branch.id,
            answer_id=reply.id,
            expected_revision=question.revision,
        ),
    )
    await send(
        "CompareCandidates",
        costs_pb2.CompareCandidatesRequest(
            idempotency_key=k("k"),
            question_id=branch.id,
            answer_ids=[reply.id, other.id],
            criteria=[f"cost of {secret}"],
            verdict=f"prefer {secret}",
            preferred_answer_id=reply.id,
        ),
    )
    inner = await ask(tree_stub, tree.id, "Then?", parent_id=reply.id)
    await send(
        "EditQuestion",
        tree_pb2.EditQuestionRequest(
            idempotency_key=k("k"),
            question_id=inner.id,
            expected_revision=inner.revision,
            text=f"Then {secret}?",
        ),
    )

    # ---- canon, acts, commitments, contexts --------------------------------------------
    invited = (
        await send(
            "InviteCanonicalization",
            tree_pb2.InviteCanonicalizationRequest(
                idempotency_key=k("k"),
                node_id=other.id,
                reason=f"key: {secret}",
                proposed_by="system",
            ),
        )
    ).invitation
    await send(
        "DeclineCanonInvitation",
        tree_pb2.DeclineCanonInvitationRequest(
            idempotency_key=k("k"),
            invitation_id=invited.id,
            declined_by="user-1",
            reason=f"not {secret}",
        ),
    )
    await send(
        "Canonicalize",
        tree_pb2.CanonicalizeRequest(
            idempotency_key=k("k"),
            tree_id=tree.id,
            leaf_node_id=reply.id,
            confirmation=confirmation(),
        ),
    )
    ruling = (
        await send(
            "RecordArbiterRuling",
            tree_pb2.RecordArbiterRulingRequest(
                idempotency_key=k("k"),
                node_id=reply.id,
                arbiter="arbiter-1",
                action=f"book {secret}",
                allowed=True,
                reason=f"asked for {secret}",
            ),
        )
    ).ruling
    await send(
        "RecordRealAction",
        tree_pb2.RecordRealActionRequest(
            idempotency_key=k("k"),
            node_id=reply.id,
            ruling_id=ruling.id,
            tool="travel",
            action=f"book {secret}",
            parameters_json=json.dumps({"what": secret}),
            recorded_by="runtime-1",
        ),
    )
    stated = (
        await send(
            "RecordCommitment",
            tree_pb2.RecordCommitmentRequest(
                idempotency_key=k("k"),
                node_id=reply.id,
                kind=tree_pb2.STATED_FACT,
                statement=f"I will book {secret}",
                stated_by="user-1",
            ),
        )
    ).commitment
    await send(
        "WithdrawCommitment",
        tree_pb2.WithdrawCommitmentRequest(
            idempotency_key=k("k"), commitment_id=stated.id, withdrawn_by="user-1"
        ),
    )
    await send(
        "RecordContextSummary",
        tree_pb2.RecordContextSummaryRequest(
            idempotency_key=k("k"),
            subject=f"node:{reply.id}",
            text=f"In short: {secret}",
            written_by="user-1",
        ),
    )
    await send(
        "AssembleContext",
        tree_pb2.AssembleContextRequest(idempotency_key=k("k"), node_id=reply.id, budget=10_000),
    )

    # ---- memory: a review of the answer, and a preference about what it decided ----------
    await tree_stub.RecordReview(
        review(
            project,
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id="msg", source_type="message", source_id=reply.id, fragment=f"A: {secret}"
                )
            ],
            events=[
                tree_pb2.EventInput(
                    id="plan", kind=tree_pb2.DECISION, title="Plan", source_reference_ids=["msg"]
                )
            ],
        )
    )
    await send(
        "SetPreference",
        tree_pb2.SetPreferenceRequest(
            idempotency_key=k("k"),
            preference_id=unique("pref"),
            scope=scope_of(project),
            subject=f"trips like {secret}",
            text=f"prefers {secret}",
            about=[ref(common_pb2.EVENT, "plan")],
            confirmed_by="user-1",
        ),
    )

    # ---- delegated tasks on the branch: one completed and accepted, one failed, cancelled --
    for _ in range(2):
        await send(
            "StartTask",
            start_request(
                branch.id,
                idempotency_key=k("k"),
                goal=f"Find {secret}",
                stop_conditions=[f"{secret} is sold out"],
                max_consecutive_failures=1,
            ),
        )
    claimed = await send("ClaimTask", claim_request(tree.id))
    token, task = claimed.lease_token, claimed.task
    await send(
        "HeartbeatTask",
        tasks_pb2.HeartbeatTaskRequest(idempotency_key=k("k"), task_id=task.id, lease_token=token),
    )
    await send(
        "ReportTaskProgress",
        tasks_pb2.ReportTaskProgressRequest(
            idempotency_key=k("k"),
            task_id=task.id,
            lease_token=token,
            message=f"read about {secret}",
            spend=tasks_pb2.TaskSpend(tokens=1),
        ),
    )
    await send(
        "CompleteTask",
        tasks_pb2.CompleteTaskRequest(
            idempotency_key=k("k"), task_id=task.id, lease_token=token, result=f"Found {secret}"
        ),
    )
    await send(
        "AcceptObservation",
        tasks_pb2.AcceptObservationRequest(
            idempotency_key=k("k"), task_id=task.id, accepted_by="user-1"
        ),
    )
    claimed = await send("ClaimTask", claim_request(tree.id))
    failed = (
        await send(
            "FailTask",
            tasks_pb2.FailTaskRequest(
                idempotency_key=k("k"),
                task_id=claimed.task.id,
                lease_token=claimed.lease_token,
                message=f"could not reach {secret}",
            ),
        )
    ).task
    await send(
        "InstructTask",
        tasks_pb2.InstructTaskRequest(
            idempotency_key=k("k"),
            task_id=failed.id,
            expected_revision=failed.revision,
            instruction=tasks_pb2.TASK_CANCEL,
            instructed_by="user-1",
            note="enough",
        ),
    )

    # ---- copies elsewhere: a citation, a merge, a transplant, a sibling's conclusion -------
    elsewhere = await new_tree(tree_stub, owner="user-1")
    await send(
        "AskQuestion",
        tree_pb2.AskQuestionRequest(
            idempotency_key=k("k"),
            tree_id=elsewhere.id,
            text="As planned before",
            citations=[tree_pb2.Citation(node_id=reply.id)],
        ),
    )
    await send(
        "MergeByReference",
        tree_pb2.MergeByReferenceRequest(
            idempotency_key=k("k"),
            tree_id=elsewhere.id,
            text="How do these meet?",
            source_node_ids=[branch.id],
            merged_by="user-1",
        ),
    )
    below = await ask(tree_stub, tree.id, "And after?", parent_id=reply.id)
    moved = await send(
        "TransplantBranch",
        tree_pb2.TransplantBranchRequest(
            idempotency_key=k("k"), node_id=below.id, title="Later", transplanted_by="user-1"
        ),
    )
    sibling = await ask(tree_stub, tree.id, "Or stay?", parent_id=root_answer.id)
    await send(
        "SetBranchState",
        tree_pb2.SetBranchStateRequest(
            idempotency_key=k("k"),
            node_id=sibling.id,
            state=tree_pb2.CONCLUDED,
            expected_revision=1,
            changed_by="user-1",
            reason=f"beaten by {secret}",
            summary=f"We chose {secret}",
        ),
    )
    assert {method for method, _ in send.sent} == REPLAYED
    before = set(await send.leaks(secret))
    assert before >= REPLAYED - {"MergeByReference", "InstructTask"}, REPLAYED - before

    await set_state(tree_stub, branch.id, tree_pb2.ARCHIVED, 1)
    shown = await preview(tree_stub, branch.id)
    assert [t.branch_id for t in shown.impact.transitions if not t.inside] == [sibling.id]
    assert [o.tree_id for o in shown.impact.transplant_origins] == [moved.tree.id]
    assert {r.table for r in shown.impact.records} == {
        "arbiter_rulings",
        "canon_invitations",
        "commitments",
        "context_summaries",
        "effects",
        "tasks",
    }
    await tree_stub.Purge(
        purge_pb2.PurgeRequest(
            idempotency_key=k("k"),
            tree_id=tree.id,
            node_id=branch.id,
            preview_token=shown.preview_token,
            choice=ALL,
            purged_by="user-1",
            reason="forget it",
        )
    )

    assert await send.leaks(secret) == []
    assert await footprint(db, secret) == []
    concluded = (await tree_stub.GetBranch(tree_pb2.GetBranchRequest(node_id=sibling.id))).branch
    assert secret not in str(concluded)
    origin = await tree_stub.GetTransplantOrigin(
        tree_pb2.GetTransplantOriginRequest(tree_id=moved.tree.id)
    )
    assert secret not in str(origin)
    assert {n.id for n in origin.origin.ancestor_path} >= {branch.id, reply.id}


def claim_request(tree_id: str) -> tasks_pb2.ClaimTaskRequest:
    return tasks_pb2.ClaimTaskRequest(
        idempotency_key=unique("k"),
        worker_id="w1",
        capabilities=list(CAPABILITIES),
        tree_id=tree_id,
        lease_seconds=60,
    )
