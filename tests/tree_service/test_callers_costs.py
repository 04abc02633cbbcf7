"""The cost RPCs with callers configured: only the owner's own confirmation sets a quota or
approves an estimate, and a host app limited to some owners reaches neither the quotas nor the
estimates of others."""

from __future__ import annotations

import grpc

from mirrortree.v1 import costs_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service import test_callers
from tests.tree_service.test_callers import HOST, SHOP, bearer, refused, with_grant

# The guarded service of the caller tests, started once for this module too.
guarded_service = test_callers.guarded_service
guarded_channel = test_callers.guarded_channel
guarded = test_callers.guarded

DENIED = grpc.StatusCode.PERMISSION_DENIED


def quota_request(owner: str, limit: str = "10") -> costs_pb2.SetQuotaRequest:
    return costs_pb2.SetQuotaRequest(
        idempotency_key=unique("k"), owner=owner, currency="USD", limit=limit
    )


async def owned_estimate(stub, owner: str, token: str) -> tuple[str, costs_pb2.Estimate]:
    meta = bearer(token)
    tree = (
        await stub.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner=owner),
            metadata=meta,
        )
    ).tree
    question = (
        await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="q"),
            metadata=meta,
        )
    ).node
    made = await stub.EstimateRequest(
        costs_pb2.EstimateRequestRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            operation=costs_pb2.REGENERATE,
            target_id=question.id,
            model_strategy="m",
            resources=costs_pb2.ExpectedResources(input_tokens=1_000_000),
            pricing=costs_pb2.Pricing(
                currency="USD", input_price_per_million="5", output_price_per_million="0"
            ),
            requested_by="desk",
        ),
        metadata=meta,
    )
    return tree.id, made.estimate


async def test_only_the_owners_grant_sets_their_quota(guarded):
    owner = unique("dora")
    wanted = quota_request(owner)
    for meta in (
        bearer(HOST),
        with_grant(HOST, "set_quota", f"owner:{owner}", "someone-else"),
        with_grant(HOST, "set_quota", f"owner:{unique('other')}", owner),
        with_grant(HOST, "approve_estimate", f"owner:{owner}", owner),
    ):
        await refused(guarded.SetQuota(wanted, metadata=meta), DENIED, "confirmation_required")
    await refused(
        guarded.GetQuota(costs_pb2.GetQuotaRequest(owner=owner), metadata=bearer(HOST)),
        grpc.StatusCode.NOT_FOUND,
        "not_found",
    )
    done = await guarded.SetQuota(
        wanted, metadata=with_grant(HOST, "set_quota", f"owner:{owner}", owner)
    )
    assert done.quota.limit == "10"


async def test_only_the_owners_grant_approves_an_estimate(guarded):
    owner = unique("erin")
    tree_id, made = await owned_estimate(guarded, owner, HOST)
    approval = costs_pb2.ApproveEstimateRequest(
        idempotency_key=unique("k"), estimate_id=made.id, approved_by=owner
    )
    for meta in (
        bearer(HOST),
        with_grant(HOST, "approve_estimate", tree_id, "someone-else"),
        with_grant(HOST, "canonicalize", tree_id, owner),
    ):
        await refused(
            guarded.ApproveEstimate(approval, metadata=meta), DENIED, "confirmation_required"
        )
    approved = await guarded.ApproveEstimate(
        approval, metadata=with_grant(HOST, "approve_estimate", tree_id, owner)
    )
    assert approved.estimate.approval.approved_by == owner


async def test_a_host_app_limited_to_owners_reaches_only_their_quotas_and_estimates(guarded):
    shop = bearer(SHOP)
    _, theirs = await owned_estimate(guarded, "bob", HOST)
    _, mine = await owned_estimate(guarded, "alice", SHOP)
    await guarded.GetEstimate(costs_pb2.GetEstimateRequest(estimate_id=mine.id), metadata=shop)
    for call in (
        guarded.GetEstimate(costs_pb2.GetEstimateRequest(estimate_id=theirs.id), metadata=shop),
        guarded.ChargeEstimate(
            costs_pb2.ChargeEstimateRequest(idempotency_key=unique("k"), estimate_id=theirs.id),
            metadata=shop,
        ),
        guarded.GetQuota(costs_pb2.GetQuotaRequest(owner="bob"), metadata=shop),
        guarded.SetQuota(
            quota_request("bob"),
            metadata=with_grant(SHOP, "set_quota", "owner:bob", "bob"),
        ),
    ):
        await refused(call, DENIED, "permission_denied")
    unchanged = await guarded.GetEstimate(
        costs_pb2.GetEstimateRequest(estimate_id=theirs.id), metadata=bearer(HOST)
    )
    assert unchanged.estimate.charge_state == costs_pb2.NOT_CHARGED
