"""The RPCs of citations: cross-person grants, their revocation and a node's citations."""

from __future__ import annotations

from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.citations.store import CitationStore, NewGrant, StoredGrant
from tree_service.convert import Checker
from tree_service.servicing import Ctx, ServicerBase

MAX_NAME = 200
MAX_REDACTIONS = 100


def grant_to_proto(grant: StoredGrant) -> tree_pb2.CitationAuthorization:
    return tree_pb2.CitationAuthorization(
        id=grant.id,
        tree_id=grant.tree_id,
        grantor=grant.grantor,
        grantee=grant.grantee,
        redactions=list(grant.redactions),
        created_at=format_utc(grant.created_at),
        revoked_at=format_utc(grant.revoked_at) if grant.revoked_at else "",
        revoked_by=grant.revoked_by or "",
    )


class CitationRpcs(ServicerBase):
    """TreeService RPCs of citations (mixed into TreeServicer)."""

    citations: CitationStore

    async def GrantCitationAuthorization(
        self, request: tree_pb2.GrantCitationAuthorizationRequest, context: Ctx
    ) -> tree_pb2.CitationAuthorizationResponse:
        check = Checker()
        check.idempotency_key(request.idempotency_key)
        check.identifier("tree_id", request.tree_id)
        check.text("grantor", request.grantor, MAX_NAME)
        check.text("grantee", request.grantee, MAX_NAME)
        if request.grantee == request.grantor:
            check.fail("grantee", "is the grantor: one's own trees need no authorization")
        if len(request.redactions) > MAX_REDACTIONS:
            check.fail("redactions", f"holds at most {MAX_REDACTIONS} terms")
        for i, term in enumerate(request.redactions):
            check.text(f"redactions[{i}]", term, MAX_NAME)
        check.done()
        new = NewGrant(request.tree_id, request.grantor, request.grantee, tuple(request.redactions))

        async def action(conn: Any) -> tree_pb2.CitationAuthorizationResponse:
            grant = await self.citations.grant(conn, new)
            return tree_pb2.CitationAuthorizationResponse(authorization=grant_to_proto(grant))

        return await self._write(
            "GrantCitationAuthorization", request, tree_pb2.CitationAuthorizationResponse, action
        )

    async def RevokeCitationAuthorization(
        self, request: tree_pb2.RevokeCitationAuthorizationRequest, context: Ctx
    ) -> tree_pb2.CitationAuthorizationResponse:
        check = Checker()
        check.idempotency_key(request.idempotency_key)
        check.identifier("authorization_id", request.authorization_id)
        check.text("revoked_by", request.revoked_by, MAX_NAME)
        check.done()

        async def action(conn: Any) -> tree_pb2.CitationAuthorizationResponse:
            grant, tombstoned = await self.citations.revoke(
                conn, request.authorization_id, request.revoked_by
            )
            return tree_pb2.CitationAuthorizationResponse(
                authorization=grant_to_proto(grant), tombstoned_citations=tombstoned
            )

        return await self._write(
            "RevokeCitationAuthorization", request, tree_pb2.CitationAuthorizationResponse, action
        )

    async def ListCitations(
        self, request: tree_pb2.ListCitationsRequest, context: Ctx
    ) -> tree_pb2.ListCitationsResponse:
        check = Checker()
        check.identifier("node_id", request.node_id)
        check.done()
        read = await self.citations.citations_of(request.node_id)
        return tree_pb2.ListCitationsResponse(
            citations=[
                tree_pb2.CitationRead(
                    citation=convert.citation_to_proto(citation),
                    position=position,
                    superseded_by=successor,
                )
                for position, (citation, successor) in enumerate(read)
            ]
        )
