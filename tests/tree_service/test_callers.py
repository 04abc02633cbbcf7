"""TreeService with callers configured: every call names its caller by token, each role is
refused what it may not do, and only a user-confirmation grant canonicalizes, whatever the
request itself claims."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from devtools.pgcluster import roles
from mirrortree import callers
from mirrortree.rpcstatus import describe
from mirrortree.v1 import purge_pb2, tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, confirmation, proposals
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

SECRET = b"test-confirmation-secret-0123456789abcdef"
HOST = "host-app-token-0123456789"
OPERATOR = "operator-token-0123456789"
GATEWAY = "gateway-token-01234567890"
SHOP = "shop-app-token-0123456789"  # a host app serving alice's trees only
VIEWER = "viewer-token-012345678901"
CALLERS = (
    f"desk:host_app:{HOST},ops:operator:{OPERATOR},gw:gateway:{GATEWAY},"
    f"shop:host_app:{SHOP}:alice|carol,web:viewer:{VIEWER}"
)


@pytest_asyncio.fixture(scope="module")
async def guarded_service(cluster, tree_service) -> AsyncIterator[tree_app.TreeService]:
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),
            migrate=False,  # the session's tree_service has migrated
            listen="127.0.0.1:0",
            callers=callers.parse_callers(CALLERS),
            confirmation_secret=SECRET,
        )
    )
    yield service
    await service.stop()


@pytest_asyncio.fixture(scope="module")
async def guarded_channel(guarded_service) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{guarded_service.port}") as channel:
        yield channel


@pytest.fixture
def guarded(guarded_channel) -> tree_pb2_grpc.TreeServiceStub:
    return tree_pb2_grpc.TreeServiceStub(guarded_channel)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def refused(call, code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (code, reason), failure
    assert failure.message


def create_request() -> tree_pb2.CreateTreeRequest:
    return tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="alice")


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        bearer("not-a-caller-token-000"),
        (("authorization", "Basic " + HOST),),
        bearer(HOST + "x"),
        bearer("x" * 5000),
    ],
    ids=["none", "unknown", "not_bearer", "altered", "oversized"],
)
async def test_a_call_without_a_known_caller_token_is_unauthenticated(guarded, metadata):
    unauthenticated = grpc.StatusCode.UNAUTHENTICATED
    await refused(
        guarded.GetSettings(tree_pb2.GetSettingsRequest(), metadata=metadata),
        unauthenticated,
        "unauthenticated",
    )
    await refused(
        guarded.CreateTree(create_request(), metadata=metadata), unauthenticated, "unauthenticated"
    )


async def test_health_checks_need_no_caller_token(guarded_channel):
    # Probes and load balancers carry no credentials.
    health = health_pb2_grpc.HealthStub(guarded_channel)
    answer_ = await health.Check(health_pb2.HealthCheckRequest())
    assert answer_.status == health_pb2.HealthCheckResponse.SERVING


async def test_the_gateway_role_may_call_nothing_on_tree_service(guarded):
    denied = grpc.StatusCode.PERMISSION_DENIED
    meta = bearer(GATEWAY)
    await refused(
        guarded.GetSettings(tree_pb2.GetSettingsRequest(), metadata=meta),
        denied,
        "permission_denied",
    )
    await refused(guarded.CreateTree(create_request(), metadata=meta), denied, "permission_denied")
    await refused(
        guarded.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=unique("k"), session_id=unique("s"), runtime="Model"
            ),
            metadata=meta,
        ),
        denied,
        "permission_denied",
    )


async def test_a_viewer_reads_trees_and_writes_nothing(guarded):
    created = await guarded.CreateTree(create_request(), metadata=bearer(HOST))
    meta = bearer(VIEWER)
    read = await guarded.GetTree(tree_pb2.GetTreeRequest(tree_id=created.tree.id), metadata=meta)
    assert read.tree.id == created.tree.id
    await guarded.ListNodes(tree_pb2.ListNodesRequest(tree_id=created.tree.id), metadata=meta)
    denied = grpc.StatusCode.PERMISSION_DENIED
    await refused(guarded.CreateTree(create_request(), metadata=meta), denied, "permission_denied")
    await refused(
        guarded.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"), tree_id=created.tree.id, text="may I?"
            ),
            metadata=meta,
        ),
        denied,
        "permission_denied",
    )
    await refused(
        guarded.AssembleContext(
            tree_pb2.AssembleContextRequest(
                idempotency_key=unique("k"), node_id=created.tree.id, budget=10
            ),
            metadata=meta,
        ),
        denied,
        "permission_denied",
    )


async def test_a_host_app_writes_trees_but_may_not_switch_the_app(guarded):
    meta = bearer(HOST)
    created = await guarded.CreateTree(create_request(), metadata=meta)
    assert created.tree.id
    settings = await guarded.GetSettings(tree_pb2.GetSettingsRequest(), metadata=meta)
    for call in (
        guarded.SetAppEnabled(
            tree_pb2.SetAppEnabledRequest(
                idempotency_key=unique("k"),
                enabled=settings.heartbeat_enabled,
                expected_revision=settings.app_revision,
            ),
            metadata=meta,
        ),
        guarded.SetCapability(
            tree_pb2.SetCapabilityRequest(
                idempotency_key=unique("k"),
                capability_id="story-graph",
                enabled=settings.story_graph.enabled,
                assignments=list(settings.story_graph.assignments),
                expected_revision=settings.story_graph.revision,
            ),
            metadata=meta,
        ),
    ):
        await refused(call, grpc.StatusCode.PERMISSION_DENIED, "permission_denied")
    after = await guarded.GetSettings(tree_pb2.GetSettingsRequest(), metadata=meta)
    assert (after.app_revision, after.story_graph.revision) == (
        settings.app_revision,
        settings.story_graph.revision,
    )


async def test_an_operator_passes_to_the_app_switch(guarded):
    # A stale revision: the call gets past authorization and is refused for the revision.
    await refused(
        guarded.SetAppEnabled(
            tree_pb2.SetAppEnabledRequest(
                idempotency_key=unique("k"), enabled=True, expected_revision=10**12
            ),
            metadata=bearer(OPERATOR),
        ),
        grpc.StatusCode.ABORTED,
        "revision_conflict",
    )


async def answered_tree(stub) -> tuple[str, str]:
    meta = bearer(HOST)
    tree = (await stub.CreateTree(create_request(), metadata=meta)).tree
    question = await ask(_Authed(stub, meta), tree.id, "Which plan?")
    reply = await answer(_Authed(stub, meta), question.id, "Plan A")
    return tree.id, reply.id


class _Authed:
    """The stub with the host app's token on every call (for the shared helpers)."""

    def __init__(self, stub, metadata) -> None:
        self._stub, self._metadata = stub, metadata

    def __getattr__(self, name: str):
        method = getattr(self._stub, name)
        return lambda request, **kw: method(request, metadata=self._metadata, **kw)


def canonicalize_request(tree_id: str, leaf: str, user: str = "user-1"):
    return tree_pb2.CanonicalizeRequest(
        idempotency_key=unique("k"),
        tree_id=tree_id,
        leaf_node_id=leaf,
        confirmation=confirmation(user),
    )


async def test_only_a_matching_user_confirmation_grant_canonicalizes(guarded):
    tree_id, leaf = await answered_tree(guarded)
    other_tree, _ = await answered_tree(guarded)
    forged = callers.issue_grant(
        b"another-secret-0123456789abcdefghij", "canonicalize", tree_id, "user-1"
    )
    expired = callers.issue_grant(SECRET, "canonicalize", tree_id, "user-1", ttl_s=-1)
    too_long = callers.issue_grant(SECRET, "canonicalize", tree_id, "user-1", ttl_s=10**6)
    wrong = [
        "",  # the request's own "confirmed: true" is not enough
        forged,
        expired,
        too_long,
        callers.issue_grant(SECRET, "canonicalize", other_tree, "user-1"),
        callers.issue_grant(SECRET, "canonicalize", tree_id, "user-2"),
        callers.issue_grant(SECRET, "purge", tree_id, "user-1"),
        "not.a.grant",
    ]
    for caller in (HOST, OPERATOR):
        for grant in wrong:
            meta = (*bearer(caller), (callers.CONFIRMATION_HEADER, grant))
            await refused(
                guarded.Canonicalize(canonicalize_request(tree_id, leaf), metadata=meta),
                grpc.StatusCode.PERMISSION_DENIED,
                "confirmation_required",
            )
    versions = await guarded.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=tree_id), metadata=bearer(HOST)
    )
    assert list(versions.versions) == []
    grant = callers.issue_grant(SECRET, "canonicalize", tree_id, "user-1")
    meta = (*bearer(HOST), (callers.CONFIRMATION_HEADER, grant))
    done = await guarded.Canonicalize(canonicalize_request(tree_id, leaf), metadata=meta)
    assert done.version.confirmed_by == "user-1"


async def test_a_host_app_cannot_rule_for_itself_only_the_arbiters_grant_rules(guarded):
    tree_id, reply = await answered_tree(guarded)

    def rule(grant: str):
        return guarded.RecordArbiterRuling(
            tree_pb2.RecordArbiterRulingRequest(
                idempotency_key=unique("k"),
                node_id=reply,
                arbiter="arbiter-1",
                action="send the email",
                allowed=True,
                reason="asked for",
            ),
            metadata=(*bearer(HOST), (callers.CONFIRMATION_HEADER, grant)),
        )

    for grant in (
        "",
        callers.issue_grant(SECRET, "rule_on_action", tree_id, "someone-else"),
        callers.issue_grant(SECRET, "canonicalize", tree_id, "arbiter-1"),
    ):
        await refused(rule(grant), grpc.StatusCode.PERMISSION_DENIED, "confirmation_required")
    ruled = await rule(callers.issue_grant(SECRET, "rule_on_action", tree_id, "arbiter-1"))
    assert ruled.ruling.allowed


def test_a_grant_lives_minutes_at_most_and_names_what_it_confirms():
    grant = callers.issue_grant(SECRET, "canonicalize", "t1", "u1", ttl_s=60)
    assert callers.grant_problem(SECRET, grant, "canonicalize", "t1", "u1") is None
    assert callers.grant_problem(SECRET, grant, "canonicalize", "t1", "u2") is not None
    assert callers.grant_problem(SECRET + b"x", grant, "canonicalize", "t1", "u1") is not None
    late = callers.issue_grant(SECRET, "canonicalize", "t1", "u1", ttl_s=-1)
    assert "expired" in str(callers.grant_problem(SECRET, late, "canonicalize", "t1", "u1"))
    assert time.time() < 2**62  # the expiry is an integer number of seconds


@pytest.mark.parametrize(
    "text",
    [
        "desk",
        "desk:admin:" + "x" * 20,
        "desk:host_app:short",
        f"a:host_app:{HOST},b:operator:{HOST}",
    ],
)
def test_a_bad_caller_list_fails_at_start(text):
    with pytest.raises(ValueError):
        callers.parse_callers(text)


async def test_a_client_channel_sends_the_caller_token_from_the_environment(guarded_service):
    interceptors = callers.client_interceptors({callers.CALLER_TOKEN_ENV: HOST})
    target = f"127.0.0.1:{guarded_service.port}"
    async with grpc.aio.insecure_channel(target, interceptors=interceptors) as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        assert (await stub.GetSettings(tree_pb2.GetSettingsRequest())).app_revision >= 1
    assert callers.client_interceptors({}) == []


async def test_a_host_app_limited_to_owners_reaches_only_their_trees(guarded):
    shop, desk = bearer(SHOP), bearer(HOST)
    denied = grpc.StatusCode.PERMISSION_DENIED
    mine = (await guarded.CreateTree(create_request(), metadata=shop)).tree  # alice's
    await refused(
        guarded.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="bob"),
            metadata=shop,
        ),
        denied,
        "permission_denied",
    )
    theirs = (
        await guarded.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="bob"),
            metadata=desk,
        )
    ).tree
    their_question = await ask(_Authed(guarded, desk), theirs.id, "Bob's question")
    await ask(_Authed(guarded, shop), mine.id, "Alice's question")
    await refused(
        guarded.GetTree(tree_pb2.GetTreeRequest(tree_id=theirs.id), metadata=shop),
        denied,
        "permission_denied",
    )
    await refused(
        guarded.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=unique("k"), tree_id=theirs.id, text="Mine now?"
            ),
            metadata=shop,
        ),
        denied,
        "permission_denied",
    )
    # Through a node of bob's tree, and on a stream.
    stream = guarded.StreamAnswer(metadata=shop, timeout=30)
    await stream.write(
        tree_pb2.StreamAnswerRequest(
            open=tree_pb2.StreamAnswerRequest.Open(
                idempotency_key=unique("k"), question_id=their_question.id
            )
        )
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.read()
    assert describe(caught.value).reason == "permission_denied"
    nodes = await guarded.ListNodes(tree_pb2.ListNodesRequest(tree_id=theirs.id), metadata=desk)
    assert len(nodes.nodes) == 1  # nothing was added by the refused calls


def with_grant(token: str, action: str, tree_id: str, user: str) -> tuple[tuple[str, str], ...]:
    grant = callers.issue_grant(SECRET, action, tree_id, user)
    return (*bearer(token), (callers.CONFIRMATION_HEADER, grant))


async def test_only_the_users_grant_confirms_an_authorization(guarded):
    tree_id, leaf = await answered_tree(guarded)
    stated = await guarded.RecordCommitment(
        tree_pb2.RecordCommitmentRequest(
            idempotency_key=unique("k"),
            node_id=leaf,
            kind=tree_pb2.AUTHORIZATION,
            statement="you may pay 10 EUR",
            stated_by="user-1",
        ),
        metadata=bearer(HOST),
    )
    commitment_id = stated.commitment.id

    def confirm() -> tree_pb2.ConfirmCommitmentRequest:
        return tree_pb2.ConfirmCommitmentRequest(
            idempotency_key=unique("k"), commitment_id=commitment_id, confirmation=confirmation()
        )

    for meta in (
        bearer(HOST),  # the request's own "confirmed: true" is not enough
        with_grant(HOST, "canonicalize", tree_id, "user-1"),
        with_grant(HOST, "confirm_commitment", tree_id, "user-2"),
    ):
        await refused(
            guarded.ConfirmCommitment(confirm(), metadata=meta),
            grpc.StatusCode.PERMISSION_DENIED,
            "confirmation_required",
        )
    listed = await guarded.ListCommitments(
        tree_pb2.ListCommitmentsRequest(tree_id=tree_id), metadata=bearer(HOST)
    )
    assert [c.state for c in listed.commitments] == [tree_pb2.AWAITING_CONFIRMATION]
    meta = with_grant(HOST, "confirm_commitment", tree_id, "user-1")
    done = await guarded.ConfirmCommitment(confirm(), metadata=meta)
    assert done.commitment.state == tree_pb2.IN_EFFECT


async def test_only_the_owners_grant_lets_others_cite_a_tree_or_revokes_it(guarded):
    tree_id, _ = await answered_tree(guarded)  # alice's

    def share() -> tree_pb2.GrantCitationAuthorizationRequest:
        return tree_pb2.GrantCitationAuthorizationRequest(
            idempotency_key=unique("k"), tree_id=tree_id, grantor="alice", grantee="bob"
        )

    for meta in (bearer(HOST), with_grant(HOST, "grant_citation", tree_id, "mallory")):
        await refused(
            guarded.GrantCitationAuthorization(share(), metadata=meta),
            grpc.StatusCode.PERMISSION_DENIED,
            "confirmation_required",
        )
    shared = await guarded.GrantCitationAuthorization(
        share(), metadata=with_grant(HOST, "grant_citation", tree_id, "alice")
    )
    revoke = tree_pb2.RevokeCitationAuthorizationRequest(
        idempotency_key=unique("k"), authorization_id=shared.authorization.id, revoked_by="alice"
    )
    await refused(
        guarded.RevokeCitationAuthorization(revoke, metadata=bearer(HOST)),
        grpc.StatusCode.PERMISSION_DENIED,
        "confirmation_required",
    )
    await guarded.RevokeCitationAuthorization(
        revoke, metadata=with_grant(HOST, "revoke_citation", tree_id, "alice")
    )


async def test_a_host_app_limited_to_owners_cannot_reach_their_records_by_id(guarded):
    desk, shop = bearer(HOST), bearer(SHOP)
    theirs = (
        await guarded.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="bob"),
            metadata=desk,
        )
    ).tree
    question = await ask(_Authed(guarded, desk), theirs.id, "Bob's question")
    stop = await guarded.RecordCommitment(
        tree_pb2.RecordCommitmentRequest(
            idempotency_key=unique("k"),
            node_id=question.id,
            kind=tree_pb2.SAFETY_STOP,
            statement="stop",
            stated_by="bob",
        ),
        metadata=desk,
    )
    await refused(
        guarded.WithdrawCommitment(
            tree_pb2.WithdrawCommitmentRequest(
                idempotency_key=unique("k"), commitment_id=stop.commitment.id, withdrawn_by="x"
            ),
            metadata=shop,
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "permission_denied",
    )
    listed = await guarded.ListCommitments(
        tree_pb2.ListCommitmentsRequest(tree_id=theirs.id), metadata=desk
    )
    assert [c.state for c in listed.commitments] == [tree_pb2.IN_EFFECT]


async def test_only_the_users_grant_declines_an_invitation_or_accepts_a_candidate(guarded):
    desk = bearer(HOST)
    tree_id, leaf = await answered_tree(guarded)
    invited = await guarded.InviteCanonicalization(
        tree_pb2.InviteCanonicalizationRequest(
            idempotency_key=unique("k"), node_id=leaf, reason="key answer", proposed_by="system"
        ),
        metadata=desk,
    )
    decline = tree_pb2.DeclineCanonInvitationRequest(
        idempotency_key=unique("k"), invitation_id=invited.invitation.id, declined_by="user-1"
    )
    for meta in (
        desk,
        with_grant(HOST, "canonicalize", tree_id, "user-1"),
        with_grant(HOST, "decline_invitation", tree_id, "user-2"),
    ):
        await refused(
            guarded.DeclineCanonInvitation(decline, metadata=meta),
            grpc.StatusCode.PERMISSION_DENIED,
            "confirmation_required",
        )
    declined = await guarded.DeclineCanonInvitation(
        decline, metadata=with_grant(HOST, "decline_invitation", tree_id, "user-1")
    )
    assert declined.invitation.state == tree_pb2.INVITATION_DECLINED

    version = (
        await guarded.Canonicalize(
            tree_pb2.CanonicalizeRequest(
                idempotency_key=unique("k"),
                tree_id=tree_id,
                leaf_node_id=leaf,
                confirmation=confirmation(),
                candidates=proposals(tree_pb2.REAL_EXPERIENCE),
            ),
            metadata=with_grant(HOST, "canonicalize", tree_id, "user-1"),
        )
    ).version
    first, second = version.candidates[0], version.candidates[1]

    def review(candidate_id: str) -> tree_pb2.ReviewCanonCandidateRequest:
        return tree_pb2.ReviewCanonCandidateRequest(
            idempotency_key=unique("k"),
            candidate_id=candidate_id,
            expected_revision=1,
            reviewed_by="user-1",
        )

    for meta in (desk, with_grant(HOST, "accept_candidate", tree_id, "user-2")):
        await refused(
            guarded.AcceptCanonCandidate(review(first.id), metadata=meta),
            grpc.StatusCode.PERMISSION_DENIED,
            "confirmation_required",
        )
    pending = await guarded.ListCanonCandidates(
        tree_pb2.ListCanonCandidatesRequest(version_id=version.id), metadata=desk
    )
    assert len(pending.candidates) == len(version.candidates)  # nothing was reviewed
    accepted = await guarded.AcceptCanonCandidate(
        review(first.id), metadata=with_grant(HOST, "accept_candidate", tree_id, "user-1")
    )
    assert accepted.candidate.status == "accepted"
    rejected = await guarded.RejectCanonCandidate(review(second.id), metadata=desk)
    assert rejected.candidate.status == "rejected"


async def test_a_host_app_limited_to_owners_cannot_decide_their_invitations(guarded):
    desk, shop = bearer(HOST), bearer(SHOP)
    theirs = (
        await guarded.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="bob"),
            metadata=desk,
        )
    ).tree
    question = await ask(_Authed(guarded, desk), theirs.id, "Bob's question")
    invited = await guarded.InviteCanonicalization(
        tree_pb2.InviteCanonicalizationRequest(
            idempotency_key=unique("k"), node_id=question.id, reason="r", proposed_by="system"
        ),
        metadata=desk,
    )
    await refused(
        guarded.DeclineCanonInvitation(
            tree_pb2.DeclineCanonInvitationRequest(
                idempotency_key=unique("k"),
                invitation_id=invited.invitation.id,
                declined_by="bob",
            ),
            metadata=(
                *shop,
                (
                    callers.CONFIRMATION_HEADER,
                    callers.issue_grant(SECRET, "decline_invitation", theirs.id, "bob"),
                ),
            ),
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "permission_denied",
    )
    listed = await guarded.ListCanonInvitations(
        tree_pb2.ListCanonInvitationsRequest(tree_id=theirs.id), metadata=desk
    )
    assert [i.state for i in listed.invitations] == [tree_pb2.INVITATION_PENDING]


async def test_only_the_users_grant_purges_and_a_host_app_previews(guarded):
    tree_id, leaf = await answered_tree(guarded)
    question = (
        await guarded.GetNode(tree_pb2.GetNodeRequest(node_id=leaf), metadata=bearer(HOST))
    ).node.parent_id
    await guarded.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=unique("k"),
            node_id=question,
            state=tree_pb2.ARCHIVED,
            expected_revision=1,
            changed_by="user-1",
        ),
        metadata=bearer(HOST),
    )
    for caller in (HOST, OPERATOR):
        shown = await guarded.PreviewPurge(
            purge_pb2.PreviewPurgeRequest(node_id=question), metadata=bearer(caller)
        )

    def purge() -> purge_pb2.PurgeRequest:
        return purge_pb2.PurgeRequest(
            idempotency_key=unique("k"),
            tree_id=tree_id,
            node_id=question,
            preview_token=shown.preview_token,
            purged_by="user-1",
            reason="gone",
        )

    for meta in (
        bearer(HOST),  # no confirmation at all
        with_grant(HOST, "canonicalize", tree_id, "user-1"),
        with_grant(HOST, "purge", tree_id, "user-2"),
    ):
        await refused(
            guarded.Purge(purge(), metadata=meta),
            grpc.StatusCode.PERMISSION_DENIED,
            "confirmation_required",
        )
    await refused(
        guarded.PreviewPurge(
            purge_pb2.PreviewPurgeRequest(node_id=question), metadata=bearer(GATEWAY)
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "permission_denied",
    )
    got = await guarded.GetNode(tree_pb2.GetNodeRequest(node_id=leaf), metadata=bearer(HOST))
    assert (got.node.text, got.node.branch_state) == ("Plan A", tree_pb2.ARCHIVED)
    done = await guarded.Purge(purge(), metadata=with_grant(HOST, "purge", tree_id, "user-1"))
    assert done.tombstone.purged_by == "user-1"
    got = await guarded.GetNode(tree_pb2.GetNodeRequest(node_id=leaf), metadata=bearer(HOST))
    assert (got.node.text, got.node.branch_state) == ("", tree_pb2.PURGED)
