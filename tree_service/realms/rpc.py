"""The RPCs of realms and effects: arbiter rulings, real-world actions and their ledger, and
the layered commitments stated inside branches."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service.realms import messages
from tree_service.realms.store import RealmStore
from tree_service.servicing import Ctx, ServicerBase


class RealmRpcs(ServicerBase):
    """TreeService RPCs of realms and effects (mixed into TreeServicer)."""

    realms: RealmStore

    async def RecordArbiterRuling(
        self, request: tree_pb2.RecordArbiterRulingRequest, context: Ctx
    ) -> tree_pb2.RecordArbiterRulingResponse:
        ruling = messages.ruling_request(request)

        async def action(conn: Any) -> tree_pb2.RecordArbiterRulingResponse:
            recorded = await self.realms.record_ruling(conn, ruling)
            return tree_pb2.RecordArbiterRulingResponse(ruling=messages.ruling_to_proto(recorded))

        return await self._write(
            "RecordArbiterRuling", request, tree_pb2.RecordArbiterRulingResponse, action
        )

    async def RecordRealAction(
        self, request: tree_pb2.RecordRealActionRequest, context: Ctx
    ) -> tree_pb2.RecordRealActionResponse:
        wanted = messages.action_request(request)

        async def action(conn: Any) -> tree_pb2.RecordRealActionResponse:
            effect = await self.realms.record_action(conn, wanted)
            return tree_pb2.RecordRealActionResponse(effect=messages.effect_to_proto(effect))

        return await self._write(
            "RecordRealAction", request, tree_pb2.RecordRealActionResponse, action
        )

    async def ListEffects(
        self, request: tree_pb2.ListEffectsRequest, context: Ctx
    ) -> tree_pb2.ListEffectsResponse:
        after, limit = messages.ledger_page(request.tree_id, request.page_size, request.page_token)
        effects = await self.realms.list_effects(request.tree_id, after, limit + 1)
        page = effects[:limit]
        return tree_pb2.ListEffectsResponse(
            effects=[messages.effect_to_proto(e) for e in page],
            next_page_token=str(after + len(page)) if len(effects) > limit else "",
        )

    async def RecordCommitment(
        self, request: tree_pb2.RecordCommitmentRequest, context: Ctx
    ) -> tree_pb2.CommitmentResponse:
        node_id, kind, statement, by = messages.commitment_request(request)

        async def action(conn: Any) -> tree_pb2.CommitmentResponse:
            stored = await self.realms.record_commitment(conn, node_id, kind, statement, by)
            return tree_pb2.CommitmentResponse(commitment=messages.commitment_to_proto(stored))

        return await self._write("RecordCommitment", request, tree_pb2.CommitmentResponse, action)

    async def ConfirmCommitment(
        self, request: tree_pb2.ConfirmCommitmentRequest, context: Ctx
    ) -> tree_pb2.CommitmentResponse:
        commitment_id, user = messages.confirm_request(request)

        async def action(conn: Any) -> tree_pb2.CommitmentResponse:
            stored = await self.realms.confirm(conn, commitment_id, user)
            return tree_pb2.CommitmentResponse(commitment=messages.commitment_to_proto(stored))

        return await self._write("ConfirmCommitment", request, tree_pb2.CommitmentResponse, action)

    async def WithdrawCommitment(
        self, request: tree_pb2.WithdrawCommitmentRequest, context: Ctx
    ) -> tree_pb2.CommitmentResponse:
        commitment_id, user = messages.withdraw_request(request)

        async def action(conn: Any) -> tree_pb2.CommitmentResponse:
            stored = await self.realms.withdraw(conn, commitment_id, user)
            return tree_pb2.CommitmentResponse(commitment=messages.commitment_to_proto(stored))

        return await self._write("WithdrawCommitment", request, tree_pb2.CommitmentResponse, action)

    async def ListCommitments(
        self, request: tree_pb2.ListCommitmentsRequest, context: Ctx
    ) -> tree_pb2.ListCommitmentsResponse:
        after, limit = messages.ledger_page(request.tree_id, request.page_size, request.page_token)
        found = await self.realms.list_commitments(request.tree_id, after, limit + 1)
        page = found[:limit]
        return tree_pb2.ListCommitmentsResponse(
            commitments=[messages.commitment_to_proto(c) for c in page],
            next_page_token=str(after + len(page)) if len(found) > limit else "",
        )
