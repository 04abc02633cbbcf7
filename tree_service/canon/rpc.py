"""The RPCs of canonicalization (T9), main-line versions and their snapshots, invitations to
canonicalize (T10) and canon candidate reviews (T22)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.canon import messages
from tree_service.canon.main_line import ListedVersion, MainLineStore
from tree_service.canon.reviews import CanonReviewStore
from tree_service.domain import CanonicalScope, MainLineVersion
from tree_service.errors import InvalidInput
from tree_service.paging import (
    DEFAULT_PATH_PAGE,
    DEFAULT_VERSION_PAGE,
    MAX_PAGE_BYTES,
    MAX_PATH_PAGE,
    MAX_VERSION_PAGE,
    byte_prefix,
    offset_page,
)
from tree_service.servicing import Ctx, ServicerBase

DEFAULT_PAGE = 50
MAX_PAGE = 500


def version_within(version: MainLineVersion, budget: int) -> tree_pb2.MainLineVersion:
    """A version with its snapshot when that fits in `budget` bytes, else without it
    (`snapshot_omitted`: GetMainLineSnapshot pages through it)."""
    message = messages.version_to_proto(version)
    if message.ByteSize() > budget:
        message.ClearField("snapshot")
        message.snapshot_omitted = True
    return message


async def version_page(
    main_lines: MainLineStore, listed: list[ListedVersion]
) -> list[tree_pb2.MainLineVersion]:
    """The longest prefix of `listed` within MAX_PAGE_BYTES (never empty if `listed` is not).
    A version whose snapshot would overflow a page of its own comes without it; one that would
    fit alone starts the next page instead.

    Snapshots are read a batch at a time, each batch about a page by the size they are stored
    in, and no further once the page is full: a page of large versions reads about a page of
    snapshots, not all of the versions listed. Stored sizes may be compressed, so a batch can
    hold a few pages of JSON text; never the whole list's."""
    converted: list[tree_pb2.MainLineVersion] = []
    start = 0
    while start < len(listed):
        end, stored = start + 1, listed[start].snapshot_stored_bytes
        while end < len(listed) and stored + listed[end].snapshot_stored_bytes <= MAX_PAGE_BYTES:
            stored += listed[end].snapshot_stored_bytes
            end += 1
        batch = await main_lines.with_snapshots([v.version for v in listed[start:end]])
        converted.extend(version_within(version, MAX_PAGE_BYTES) for version in batch)
        page = byte_prefix(converted, lambda message: message)
        if len(page) < len(converted):
            return page
        start = end
    return converted


class CanonRpcs(ServicerBase):
    """TreeService RPCs of main lines, invitations and candidate reviews (mixed into
    TreeServicer)."""

    canon_reviews: CanonReviewStore
    main_lines: MainLineStore

    async def InviteCanonicalization(
        self, request: tree_pb2.InviteCanonicalizationRequest, context: Ctx
    ) -> tree_pb2.CanonInvitationResponse:
        node_id, reason, proposed_by = messages.invitation(request)

        async def action(conn: Any) -> tree_pb2.CanonInvitationResponse:
            found = await self.canon_reviews.invite(conn, node_id, reason, proposed_by)
            return tree_pb2.CanonInvitationResponse(invitation=messages.invitation_to_proto(found))

        return await self._write(
            "InviteCanonicalization", request, tree_pb2.CanonInvitationResponse, action
        )

    async def DeclineCanonInvitation(
        self, request: tree_pb2.DeclineCanonInvitationRequest, context: Ctx
    ) -> tree_pb2.CanonInvitationResponse:
        invitation_id, user, reason = messages.decline(request)

        async def action(conn: Any) -> tree_pb2.CanonInvitationResponse:
            found = await self.canon_reviews.decline(conn, invitation_id, user, reason)
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
        found = await self.canon_reviews.list_invitations(request.tree_id, after, limit + 1, states)
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
        found = await self.canon_reviews.list_candidates(
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
            candidate = await self.canon_reviews.review(conn, review)
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

    async def Canonicalize(
        self, request: tree_pb2.CanonicalizeRequest, context: Ctx
    ) -> tree_pb2.CanonicalizeResponse:
        canonicalization = messages.canonicalization(request)

        async def action(conn: Any) -> tree_pb2.CanonicalizeResponse:
            version = await self.main_lines.canonicalize(conn, canonicalization)
            # The version is saved whatever its size: a response that could not be sent
            # would report a failure, and a retry would replay the same oversized answer.
            return tree_pb2.CanonicalizeResponse(version=version_within(version, MAX_PAGE_BYTES))

        return await self._write("Canonicalize", request, tree_pb2.CanonicalizeResponse, action)

    async def ListMainLineVersions(
        self, request: tree_pb2.ListMainLineVersionsRequest, context: Ctx
    ) -> tree_pb2.ListMainLineVersionsResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        check.identifier("world", request.world, required=False)
        limit = check.page_size(request.page_size, DEFAULT_VERSION_PAGE, MAX_VERSION_PAGE)
        check.identifier("page_token", request.page_token, required=False)
        check.done()
        scope = messages.scope_filter(request.scope)
        if request.world:
            # Only world canon has worlds, so a world alone selects that scope and a world
            # with another scope (which could match nothing) is refused.
            if scope is None:
                scope = CanonicalScope.WORLD_CANON
            elif scope is not CanonicalScope.WORLD_CANON:
                raise InvalidInput.one("world", "is only allowed with scope WORLD_CANON")
        versions = await self.main_lines.list_versions(
            request.tree_id, scope, request.world, request.page_token or None, limit + 1
        )
        page = await version_page(self.main_lines, versions[:limit])
        return tree_pb2.ListMainLineVersionsResponse(
            versions=page,
            next_page_token=page[-1].id if len(versions) > len(page) else "",
        )

    async def GetMainLineSnapshot(
        self, request: tree_pb2.GetMainLineSnapshotRequest, context: Ctx
    ) -> tree_pb2.GetMainLineSnapshotResponse:
        check = convert.Checker()
        check.identifier("version_id", request.version_id)
        limit = check.page_size(request.page_size, DEFAULT_PATH_PAGE, MAX_PATH_PAGE)
        offset = convert.page_token(check, request.page_token)
        check.done()
        nodes, length = await self.main_lines.snapshot(request.version_id, offset, limit)
        page, token = offset_page(nodes, offset, length)
        return tree_pb2.GetMainLineSnapshotResponse(
            nodes=page, next_page_token=token, snapshot_length=length
        )
