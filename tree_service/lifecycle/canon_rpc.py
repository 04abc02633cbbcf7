"""The RPCs of canonicalization invitations (T10) and canon candidate reviews (T22)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.lifecycle import canon_messages as messages
from tree_service.servicing import Ctx, ServicerBase

DEFAULT_PAGE = 50
MAX_PAGE = 500


class CanonReviewRpcs(ServicerBase):
    """TreeService RPCs of invitations and candidate reviews (mixed into TreeServicer)."""

    async def InviteCanonicalization(
        self, request: tree_pb2.InviteCanonicalizationRequest, context: Ctx
    ) -> tree_pb2.CanonInvitationResponse:
        node_id, reason, proposed_by = messages.invitation(request)

        async def action(conn: Any) -> tree_pb2.CanonInvitationResponse:
            found = await self._stores.canon_reviews.invite(conn, node_id, reason, proposed_by)
            return tree_pb2.CanonInvitationResponse(invitation=messages.invitation_to_proto(found))

        return await self._write(
            "InviteCanonicalization", request, tree_pb2.CanonInvitationResponse, action
        )

    async def DeclineCanonInvitation(
        self, request: tree_pb2.DeclineCanonInvitationRequest, context: Ctx
    ) -> tree_pb2.CanonInvitationResponse:
        invitation_id, user, reason = messages.decline(request)

        async def action(conn: Any) -> tree_pb2.CanonInvitationResponse:
            found = await self._stores.canon_reviews.decline(conn, invitation_id, user, reason)
            return tree_pb2.CanonInvitationResponse(invitation=messages.invitation_to_proto(found))

        return await self._write(
            "DeclineCanonInvitation", request, tree_pb2.CanonInvitationResponse, action
        )

    async def ListCanonInvitations(
        self, request: tree_pb2.ListCanonInvitationsRequest, context: Ctx
    ) -> tree_pb2.ListCanonInvitationsResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        limit = check.page_size(request.page_size, DEFAULT_PAGE, MAX_PAGE)
        after = convert.page_token(check, request.page_token)
        states = messages.invitation_states(check, list(request.states))
        check.done()
        found = await self._stores.canon_reviews.list_invitations(
            request.tree_id, after, limit + 1, states
        )
        page = found[:limit]
        return tree_pb2.ListCanonInvitationsResponse(
            invitations=[messages.invitation_to_proto(i) for i, _ in page],
            next_page_token=str(page[-1][1]) if len(found) > limit else "",
        )

    async def ListCanonCandidates(
        self, request: tree_pb2.ListCanonCandidatesRequest, context: Ctx
    ) -> tree_pb2.ListCanonCandidatesResponse:
        check = convert.Checker()
        check.identifier("version_id", request.version_id)
        check.done()
        found = await self._stores.canon_reviews.list_candidates(
            request.version_id, request.include_reviewed
        )
        return tree_pb2.ListCanonCandidatesResponse(
            candidates=[messages.candidate_to_proto(c) for c in found]
        )

    async def _review(
        self, method: str, request: tree_pb2.ReviewCanonCandidateRequest, *, accept: bool
    ) -> tree_pb2.CanonCandidateResponse:
        review = messages.review(request, accept=accept)

        async def action(conn: Any) -> tree_pb2.CanonCandidateResponse:
            candidate = await self._stores.canon_reviews.review(conn, review)
            return tree_pb2.CanonCandidateResponse(candidate=messages.candidate_to_proto(candidate))

        return await self._write(method, request, tree_pb2.CanonCandidateResponse, action)

    async def AcceptCanonCandidate(
        self, request: tree_pb2.ReviewCanonCandidateRequest, context: Ctx
    ) -> tree_pb2.CanonCandidateResponse:
        return await self._review("AcceptCanonCandidate", request, accept=True)

    async def RejectCanonCandidate(
        self, request: tree_pb2.ReviewCanonCandidateRequest, context: Ctx
    ) -> tree_pb2.CanonCandidateResponse:
        return await self._review("RejectCanonCandidate", request, accept=False)
