"""Invitations to canonicalize (T10) and the user's review of canon candidates (T22)."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, canonicalize, confirmation, new_tree, proposals
from tests.tree_service.racing import held


async def invite(stub, node_id: str, reason: str = "a key answer") -> tree_pb2.CanonInvitation:
    response = await stub.InviteCanonicalization(
        tree_pb2.InviteCanonicalizationRequest(
            idempotency_key=unique("k"), node_id=node_id, reason=reason, proposed_by="system"
        )
    )
    invitation: tree_pb2.CanonInvitation = response.invitation
    return invitation


async def accept(stub, tree_id: str, leaf: str, invitation_id: str, expected: int = 0):
    request = tree_pb2.CanonicalizeRequest(
        idempotency_key=unique("k"),
        tree_id=tree_id,
        leaf_node_id=leaf,
        confirmation=confirmation(),
        expected_version=expected,
    )
    request.confirmation.invitation_id = invitation_id
    return (await stub.Canonicalize(request)).version


async def invitations(stub, tree_id: str, **fields) -> list[tree_pb2.CanonInvitation]:
    found: list[tree_pb2.CanonInvitation] = []
    token = ""
    while True:
        page = await stub.ListCanonInvitations(
            tree_pb2.ListCanonInvitationsRequest(
                tree_id=tree_id, page_size=1, page_token=token, **fields
            )
        )
        found.extend(page.invitations)
        token = page.next_page_token
        if not token:
            return found


async def failure_of(call) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return describe(caught.value)


async def versions(stub, tree_id: str) -> list[tree_pb2.MainLineVersion]:
    listed = await stub.ListMainLineVersions(tree_pb2.ListMainLineVersionsRequest(tree_id=tree_id))
    return list(listed.versions)


async def test_accepting_an_invitation_canonicalizes_and_the_version_names_it(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    reply = await answer(tree_stub, question.id)
    other = await answer(tree_stub, question.id, "other")
    invited = await invite(tree_stub, reply.id)
    declined = await invite(tree_stub, other.id, "maybe this one")
    assert invited.state == tree_pb2.INVITATION_PENDING and invited.tree_id == tree.id
    assert (invited.reason, invited.proposed_by) == ("a key answer", "system")
    assert await versions(tree_stub, tree.id) == []  # an invitation canonicalizes nothing
    version = await accept(tree_stub, tree.id, reply.id, invited.id)
    assert version.invitation_id == invited.id
    assert [v.invitation_id for v in await versions(tree_stub, tree.id)] == [invited.id]
    await tree_stub.DeclineCanonInvitation(
        tree_pb2.DeclineCanonInvitationRequest(
            idempotency_key=unique("k"),
            invitation_id=declined.id,
            declined_by="user-1",
            reason="not now",
        )
    )
    listed = await invitations(tree_stub, tree.id)
    assert [(i.id, i.state) for i in listed] == [
        (invited.id, tree_pb2.INVITATION_ACCEPTED),
        (declined.id, tree_pb2.INVITATION_DECLINED),
    ]
    assert (listed[0].version_id, listed[0].decided_by) == (version.id, "user-1")
    assert (listed[1].decided_by, listed[1].decision_reason) == ("user-1", "not now")
    assert listed[1].version_id == "" and listed[1].decided_at
    pending_only = await invitations(tree_stub, tree.id, states=[tree_pb2.INVITATION_PENDING])
    assert pending_only == []
    # A version canonicalized without an invitation names none.
    follow = await answer(tree_stub, (await ask(tree_stub, tree.id, "q2", reply.id)).id)
    plain = await canonicalize(tree_stub, tree.id, leaf=follow.id, expected=1)
    assert plain.invitation_id == ""


async def test_an_invitation_that_does_not_fit_refuses_the_canonicalization(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    reply = await answer(tree_stub, question.id)
    sibling = await answer(tree_stub, question.id, "sibling")
    elsewhere = await new_tree(tree_stub)
    foreign = await invite(tree_stub, (await ask(tree_stub, elsewhere.id)).id)
    off_path = await invite(tree_stub, sibling.id)
    cases = [
        (off_path.id, grpc.StatusCode.FAILED_PRECONDITION),  # its node is not selected
        (foreign.id, grpc.StatusCode.FAILED_PRECONDITION),  # another tree's
        (str(uuid.uuid4()), grpc.StatusCode.NOT_FOUND),
        ("not-an-id", grpc.StatusCode.INVALID_ARGUMENT),
    ]
    for invitation_id, code in cases:
        failure = await failure_of(accept(tree_stub, tree.id, reply.id, invitation_id))
        assert failure.code == code, (invitation_id, failure)
    bad = await failure_of(accept(tree_stub, tree.id, reply.id, "not-an-id"))
    assert [v.field for v in bad.violations] == ["confirmation.invitation_id"]
    assert await versions(tree_stub, tree.id) == []
    assert {i.state for i in await invitations(tree_stub, tree.id)} == {tree_pb2.INVITATION_PENDING}
    # A decided invitation cannot be accepted (or declined) again.
    accepted = await invite(tree_stub, reply.id)
    await accept(tree_stub, tree.id, reply.id, accepted.id)
    again = await failure_of(accept(tree_stub, tree.id, reply.id, accepted.id, expected=1))
    assert again.code == grpc.StatusCode.FAILED_PRECONDITION
    redecline = await failure_of(
        tree_stub.DeclineCanonInvitation(
            tree_pb2.DeclineCanonInvitationRequest(
                idempotency_key=unique("k"), invitation_id=accepted.id, declined_by="user-1"
            )
        )
    )
    assert redecline.code == grpc.StatusCode.FAILED_PRECONDITION
    assert len(await versions(tree_stub, tree.id)) == 1


async def test_invitations_are_refused_when_they_would_repeat_or_are_malformed(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    reply = await answer(tree_stub, question.id)
    await invite(tree_stub, reply.id)
    twice = await failure_of(invite(tree_stub, reply.id))
    assert twice.code == grpc.StatusCode.FAILED_PRECONDITION
    await canonicalize(tree_stub, tree.id, leaf=reply.id)
    done = await failure_of(invite(tree_stub, question.id))
    assert done.code == grpc.StatusCode.FAILED_PRECONDITION
    bad = await failure_of(
        tree_stub.InviteCanonicalization(
            tree_pb2.InviteCanonicalizationRequest(idempotency_key=unique("k"))
        )
    )
    assert bad.code == grpc.StatusCode.INVALID_ARGUMENT
    assert {v.field for v in bad.violations} == {"node_id", "reason", "proposed_by"}
    missing = await failure_of(invite(tree_stub, str(uuid.uuid4())))
    assert missing.code == grpc.StatusCode.NOT_FOUND
    assert len(await invitations(tree_stub, tree.id)) == 1


async def test_candidates_are_reviewed_one_by_one_at_their_revision(tree_stub, db):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    reply = await answer(tree_stub, question.id)
    version = await canonicalize(
        tree_stub, tree.id, leaf=reply.id, candidates=proposals(tree_pb2.REAL_EXPERIENCE)
    )
    assert len(version.candidates) >= 2
    # Canonicalize answers each pending candidate at revision 1, as ListCanonCandidates does.
    assert {(c.status, c.revision, c.version_id) for c in version.candidates} == {
        ("pending", 1, version.id)
    }

    async def pending(**fields) -> list[tree_pb2.CanonCandidate]:
        listed = await tree_stub.ListCanonCandidates(
            tree_pb2.ListCanonCandidatesRequest(version_id=version.id, **fields)
        )
        return list(listed.candidates)

    listed = await pending()
    assert {c.id for c in listed} == {c.id for c in version.candidates}
    assert {(c.status, c.revision, c.version_id) for c in listed} == {("pending", 1, version.id)}
    first, second = listed[0], listed[1]

    def review(
        candidate_id: str, revision: int = 1, **fields
    ) -> tree_pb2.ReviewCanonCandidateRequest:
        return tree_pb2.ReviewCanonCandidateRequest(
            idempotency_key=unique("k"),
            candidate_id=candidate_id,
            expected_revision=revision,
            reviewed_by=fields.pop("reviewed_by", "user-1"),
            **fields,
        )

    assert first.kind == "real_record"
    counts = "SELECT (SELECT count(*) FROM graph_objects), (SELECT count(*) FROM preferences)"
    before = await db.fetchrow(counts)
    accepted = (await tree_stub.AcceptCanonCandidate(review(first.id, reason="yes"))).candidate
    assert (accepted.status, accepted.revision) == ("accepted", 2)
    assert (accepted.reviewed_by, accepted.review_reason) == ("user-1", "yes")
    assert accepted.reviewed_at
    # Accepting a candidate that is no long-term memory writes nothing but its own review.
    assert accepted.memory_id == ""
    assert await db.fetchrow(counts) == before
    stale = await failure_of(tree_stub.RejectCanonCandidate(review(second.id, revision=2)))
    assert stale.code == grpc.StatusCode.ABORTED and stale.metadata["current_revision"] == "1"
    rejected = (await tree_stub.RejectCanonCandidate(review(second.id, reason="no"))).candidate
    assert (rejected.status, rejected.revision) == ("rejected", 2)
    decided = await failure_of(tree_stub.RejectCanonCandidate(review(first.id, revision=2)))
    assert decided.code == grpc.StatusCode.FAILED_PRECONDITION
    assert {c.id for c in await pending()} == {c.id for c in listed[2:]}
    everything = {c.id: c.status for c in await pending(include_reviewed=True)}
    assert (everything[first.id], everything[second.id]) == ("accepted", "rejected")
    again = (await versions(tree_stub, tree.id))[0]
    shown = {c.id: c for c in again.candidates}
    assert (shown[first.id].status, shown[first.id].revision) == ("accepted", 2)
    assert (shown[first.id].reviewed_by, shown[first.id].reviewed_at) == (
        "user-1",
        accepted.reviewed_at,
    )
    assert {c.revision for c in again.candidates if c.status == "pending"} <= {1}


async def test_refused_reviews_write_nothing(tree_stub, db):
    tree = await new_tree(tree_stub)
    reply = await answer(tree_stub, (await ask(tree_stub, tree.id)).id)
    version = await canonicalize(
        tree_stub, tree.id, leaf=reply.id, candidates=proposals(tree_pb2.REAL_EXPERIENCE)
    )
    bad = await failure_of(
        tree_stub.AcceptCanonCandidate(
            tree_pb2.ReviewCanonCandidateRequest(idempotency_key=unique("k"), reason="x" * 2001)
        )
    )
    assert {v.field for v in bad.violations} == {
        "candidate_id",
        "expected_revision",
        "reviewed_by",
        "reason",
    }
    missing = await failure_of(
        tree_stub.AcceptCanonCandidate(
            tree_pb2.ReviewCanonCandidateRequest(
                idempotency_key=unique("k"),
                candidate_id=str(uuid.uuid4()),
                expected_revision=1,
                reviewed_by="u",
            )
        )
    )
    assert missing.code == grpc.StatusCode.NOT_FOUND
    unknown = await failure_of(
        tree_stub.ListCanonCandidates(
            tree_pb2.ListCanonCandidatesRequest(version_id=str(uuid.uuid4()))
        )
    )
    assert unknown.code == grpc.StatusCode.NOT_FOUND
    statuses = await db.fetch(
        "SELECT status FROM canon_candidates WHERE version_id = $1", uuid.UUID(version.id)
    )
    assert {r["status"] for r in statuses} == {"pending"}


async def test_an_accept_and_a_decline_racing_on_one_invitation_settle_it_once(cluster, tree_stub):
    tree = await new_tree(tree_stub)
    reply = await answer(tree_stub, (await ask(tree_stub, tree.id)).id)
    invited = await invite(tree_stub, reply.id)

    async def decline():
        return await tree_stub.DeclineCanonInvitation(
            tree_pb2.DeclineCanonInvitationRequest(
                idempotency_key=unique("k"), invitation_id=invited.id, declined_by="user-1"
            )
        )

    lock = "SELECT 1 FROM canon_invitations WHERE id = $1 FOR UPDATE"
    async with held(cluster.primary_dsn, lock, uuid.UUID(invited.id)) as gate:
        writers = [
            asyncio.ensure_future(accept(tree_stub, tree.id, reply.id, invited.id)),
            asyncio.ensure_future(decline()),
        ]
        await gate.until_waiting(writers)
    results = await asyncio.gather(*writers, return_exceptions=True)
    losses = [describe(r) for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(losses) == 1 and losses[0].code == grpc.StatusCode.FAILED_PRECONDITION
    [settled] = await invitations(tree_stub, tree.id)
    won_accept = not isinstance(results[0], BaseException)
    assert settled.state == (
        tree_pb2.INVITATION_ACCEPTED if won_accept else tree_pb2.INVITATION_DECLINED
    )
    assert len(await versions(tree_stub, tree.id)) == (1 if won_accept else 0)
