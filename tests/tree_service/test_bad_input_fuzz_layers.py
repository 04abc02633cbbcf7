"""Fuzzed realm, commitment, context and citation requests are answered OK or with a documented,
named refusal that writes nothing (see `fuzzing`; the rows of these aggregates are counted
here as well)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mirrortree.v1 import tree_pb2
from tests.tree_service.fuzzing import (
    APPEND,
    FUZZ,
    JSONISH,
    KEYS,
    READ,
    Code,
    answered,
    enums,
    ids,
    ints,
    page_tokens,
    strings,
    unary,
)

LAYER_ROWS = """
SELECT (SELECT count(*) FROM arbiter_rulings), (SELECT count(*) FROM effects),
       (SELECT count(*) FROM commitments),
       (SELECT count(*) FROM commitments WHERE confirmed_by IS NOT NULL),
       (SELECT count(*) FROM commitments WHERE withdrawn_by IS NOT NULL),
       (SELECT count(*) FROM context_summaries), (SELECT count(*) FROM context_versions),
       (SELECT count(*) FROM citation_authorizations),
       (SELECT count(*) FROM citation_authorizations WHERE revoked_at IS NOT NULL)
"""


async def held(db, server_errors, call, allowed: set[Code]) -> Code:
    """`answered`, and a refusal leaves none of these aggregates' rows behind either."""
    before = tuple(await db.fetchrow(LAYER_ROWS))
    code = await answered(db, server_errors, call, allowed, writes=True)
    if code != Code.OK:
        assert tuple(await db.fetchrow(LAYER_ROWS)) == before
    return code


@FUZZ
@given(data=st.data())
async def test_rulings_actions_and_commitments(tree_stub, conversation, db, server_errors, data):
    node = data.draw(ids(conversation))
    ruling = tree_pb2.RecordArbiterRulingRequest(
        idempotency_key=data.draw(KEYS),
        node_id=node,
        arbiter=data.draw(strings()),
        action=data.draw(strings()),
        allowed=data.draw(st.booleans()),
        reason=data.draw(strings()),
    )
    await held(db, server_errors, unary(tree_stub.RecordArbiterRuling, ruling), APPEND)
    action = tree_pb2.RecordRealActionRequest(
        idempotency_key=data.draw(KEYS),
        node_id=node,
        ruling_id=data.draw(ids(conversation)),
        tool=data.draw(strings()),
        action=data.draw(strings()),
        parameters_json=data.draw(st.one_of(JSONISH, strings())),
        recorded_by=data.draw(strings()),
    )
    await held(db, server_errors, unary(tree_stub.RecordRealAction, action), APPEND)
    commitment = tree_pb2.RecordCommitmentRequest(
        idempotency_key=data.draw(KEYS),
        node_id=node,
        kind=data.draw(enums([1, 2, 3, 4, 5])),
        statement=data.draw(strings()),
        stated_by=data.draw(strings()),
    )
    await held(db, server_errors, unary(tree_stub.RecordCommitment, commitment), APPEND)
    confirm = tree_pb2.ConfirmCommitmentRequest(
        idempotency_key=data.draw(KEYS),
        commitment_id=data.draw(ids(conversation)),
        confirmation=tree_pb2.UserConfirmation(
            confirmed=data.draw(st.booleans()), user_id=data.draw(strings())
        ),
    )
    await held(db, server_errors, unary(tree_stub.ConfirmCommitment, confirm), APPEND)
    withdraw = tree_pb2.WithdrawCommitmentRequest(
        idempotency_key=data.draw(KEYS),
        commitment_id=data.draw(ids(conversation)),
        withdrawn_by=data.draw(strings()),
    )
    await held(db, server_errors, unary(tree_stub.WithdrawCommitment, withdraw), APPEND)
    for method, request_type in (
        (tree_stub.ListEffects, tree_pb2.ListEffectsRequest),
        (tree_stub.ListCommitments, tree_pb2.ListCommitmentsRequest),
    ):
        listing: Any = request_type(
            tree_id=data.draw(ids(conversation)),
            page_size=data.draw(ints(32)),
            page_token=data.draw(page_tokens(conversation)),
        )
        await answered(db, server_errors, unary(method, listing), READ, writes=False)


@FUZZ
@given(data=st.data())
async def test_context_requests(tree_stub, conversation, db, server_errors, data):
    node = data.draw(ids(conversation))
    summary = tree_pb2.RecordContextSummaryRequest(
        idempotency_key=data.draw(KEYS),
        subject=data.draw(
            st.one_of(
                strings(),
                st.builds(lambda n, k: f"{k}:{n}", ids(conversation), st.sampled_from(["node"])),
                st.builds(
                    lambda n, k, i: f"{k}:{n}:{i}",
                    ids(conversation),
                    st.sampled_from(["tool", "citation"]),
                    st.integers(-1, 3),
                ),
            )
        ),
        text=data.draw(strings()),
        expected_version=data.draw(st.one_of(st.integers(-1, 2), ints())),
        written_by=data.draw(strings()),
        token_estimate=data.draw(st.one_of(st.integers(-1, 10), ints())),
    )
    await held(
        db, server_errors, unary(tree_stub.RecordContextSummary, summary), {*APPEND, Code.ABORTED}
    )
    assemble = tree_pb2.AssembleContextRequest(
        idempotency_key=data.draw(KEYS),
        node_id=node,
        budget=data.draw(st.one_of(st.integers(-1, 50), st.just(100_000), ints())),
        token_budget=data.draw(st.one_of(st.integers(-1, 50), ints())),
        boundaries=data.draw(st.lists(strings(), max_size=2)),
        token_estimates=data.draw(st.dictionaries(strings(), ints(), max_size=2)),
        fragments=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.AttachmentFragment,
                    node_id=ids(conversation),
                    attachment_id=strings(),
                    start=st.one_of(st.integers(-1, 3), ints()),
                    end=st.one_of(st.integers(-1, 3), ints()),
                    text=strings(),
                ),
                max_size=2,
            )
        ),
        parent_chain=data.draw(ints(32)),
    )
    code = await held(db, server_errors, unary(tree_stub.AssembleContext, assemble), APPEND)
    version = data.draw(ids(conversation))
    if code == Code.OK:
        version = (await tree_stub.AssembleContext(assemble)).context_version_id
    read = tree_pb2.GetContextVersionRequest(context_version_id=version)
    await answered(db, server_errors, unary(tree_stub.GetContextVersion, read), READ, writes=False)


@FUZZ
@given(data=st.data())
async def test_citation_grants(tree_stub, conversation, db, server_errors, data):
    grant = tree_pb2.GrantCitationAuthorizationRequest(
        idempotency_key=data.draw(KEYS),
        tree_id=data.draw(ids(conversation)),
        grantor=data.draw(st.one_of(st.just("tester"), strings())),
        grantee=data.draw(st.one_of(st.just("someone-else"), strings())),
        redactions=data.draw(st.lists(strings(), max_size=2)),
    )
    await held(db, server_errors, unary(tree_stub.GrantCitationAuthorization, grant), APPEND)
    revoke = tree_pb2.RevokeCitationAuthorizationRequest(
        idempotency_key=data.draw(KEYS),
        authorization_id=data.draw(ids(conversation)),
        revoked_by=data.draw(strings()),
    )
    await held(db, server_errors, unary(tree_stub.RevokeCitationAuthorization, revoke), APPEND)
    listing = tree_pb2.ListCitationsRequest(node_id=data.draw(ids(conversation)))
    await answered(db, server_errors, unary(tree_stub.ListCitations, listing), READ, writes=False)
