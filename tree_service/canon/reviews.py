"""Canonicalization invitations (T10) and canon candidate reviews (T22) on the primary."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from tree_service import canon_projection
from tree_service import rules as tree_rules
from tree_service.canon import queries
from tree_service.canon.rules import (
    CandidateReview,
    Invitation,
    InvitationState,
    becomes_long_term_memory,
    expect_invited_node_selected,
    expect_pending,
)
from tree_service.domain import CanonCandidate, CanonicalScope, NewPreference
from tree_service.errors import NotFound, PreconditionFailed, RevisionConflict
from tree_service.ingestion.store import IngestionStore
from tree_service.nodes.store import NodeStore


def invitation_from_row(row: asyncpg.Record) -> Invitation:
    values = dict(row)
    values.pop("position", None)
    values["state"] = InvitationState(values["state"])
    return Invitation(**values)


def candidate_from_row(row: asyncpg.Record) -> CanonCandidate:
    return CanonCandidate(**dict(row))


async def _locked_invitation(
    conn: asyncpg.Connection, invitation_id: str, field: str
) -> Invitation:
    row = await conn.fetchrow(queries.LOCK_INVITATION, tree_rules.parse_id(invitation_id, field))
    if row is None:
        raise NotFound("canon invitation", invitation_id)
    return invitation_from_row(row)


async def accept_invitation(
    conn: asyncpg.Connection,
    invitation_id: str,
    *,
    tree_id: str,
    node_ids: tuple[str, ...],
    version_id: uuid.UUID,
    user: str,
) -> None:
    """Settle the invitation a canonicalization accepts, in its transaction (or refuse it)."""
    invitation = await _locked_invitation(conn, invitation_id, "confirmation.invitation_id")
    if invitation.tree_id != tree_id:
        raise PreconditionFailed(
            f"invitation {invitation.id} belongs to another tree",
            {"field": "confirmation.invitation_id"},
        )
    expect_pending(invitation)
    expect_invited_node_selected(invitation, node_ids)
    await conn.execute(queries.ACCEPT_INVITATION, uuid.UUID(invitation.id), user, version_id)


class CanonReviewStore:
    """Invitations to canonicalize and the review of canon candidates."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def invite(
        conn: asyncpg.Connection, node_id: str, reason: str, proposed_by: str
    ) -> Invitation:
        node = await NodeStore.load(conn, node_id, "node_id")
        node_uuid = uuid.UUID(node.id)
        if await conn.fetchval(queries.NODE_CANONICALIZED, node_uuid) is not None:
            raise PreconditionFailed(
                f"node {node.id} is canonicalized already", {"node_id": node.id}
            )
        pending = await conn.fetchval(queries.PENDING_INVITATION_OF_NODE, node_uuid)
        if pending is not None:
            raise PreconditionFailed(
                f"node {node.id} has a pending invitation already: {pending}",
                {"node_id": node.id, "invitation_id": pending},
            )
        try:
            row = await conn.fetchrow(
                queries.INSERT_INVITATION,
                uuid.uuid4(),
                uuid.UUID(node.tree_id),
                node_uuid,
                reason,
                proposed_by,
            )
        except asyncpg.UniqueViolationError:  # a concurrent invitation of the node won
            raise PreconditionFailed(
                f"node {node.id} has a pending invitation already", {"node_id": node.id}
            ) from None
        return invitation_from_row(row)

    @staticmethod
    async def decline(
        conn: asyncpg.Connection, invitation_id: str, user: str, reason: str
    ) -> Invitation:
        invitation = await _locked_invitation(conn, invitation_id, "invitation_id")
        expect_pending(invitation)
        row = await conn.fetchrow(
            queries.DECLINE_INVITATION, uuid.UUID(invitation.id), user, reason
        )
        return invitation_from_row(row)

    async def list_invitations(
        self, tree_id: str, after: int, limit: int, states: Sequence[InvitationState]
    ) -> list[tuple[Invitation, int]]:
        """Invitations with their listing positions."""
        async with self._pool.acquire() as conn:
            tree_uuid = await NodeStore.expect_tree(conn, tree_id)
            rows = await conn.fetch(
                queries.LIST_INVITATIONS, tree_uuid, after, limit, [s.value for s in states]
            )
        return [(invitation_from_row(r), r["position"]) for r in rows]

    async def invitations(self, ids: list[str]) -> list[Invitation]:
        rows = await self._pool.fetch(queries.SELECT_INVITATIONS, [uuid.UUID(i) for i in ids])
        return [invitation_from_row(r) for r in rows]

    async def list_candidates(
        self, version_id: str, include_reviewed: bool
    ) -> list[CanonCandidate]:
        version_uuid = tree_rules.parse_id(version_id, "version_id")
        async with self._pool.acquire() as conn:
            if await conn.fetchval(queries.VERSION_EXISTS, version_uuid) is None:
                raise NotFound("main-line version", version_id)
            rows = await conn.fetch(queries.LIST_CANDIDATES, version_uuid, include_reviewed)
        return [candidate_from_row(r) for r in rows]

    @staticmethod
    async def review(conn: asyncpg.Connection, review: CandidateReview) -> CanonCandidate:
        """Accept or reject a pending candidate at its revision; accepting a long-term memory
        also writes the memory (_remember)."""
        candidate_uuid = tree_rules.parse_id(review.candidate_id, "candidate_id")
        row = await conn.fetchrow(queries.LOCK_CANDIDATE, candidate_uuid)
        if row is None:
            raise NotFound("canon candidate", review.candidate_id)
        candidate = candidate_from_row(row)
        if candidate.revision != review.expected_revision:
            raise RevisionConflict(
                "canon candidate", candidate.id, review.expected_revision, candidate.revision
            )
        if candidate.status != "pending":
            raise PreconditionFailed(
                f"canon candidate {candidate.id} was {candidate.status} already",
                {"candidate_id": candidate.id, "status": candidate.status},
            )
        memory_id = None
        if review.accept and becomes_long_term_memory(candidate):
            memory_id = await _remember(conn, candidate, review.reviewed_by)
        status = "accepted" if review.accept else "rejected"
        row = await conn.fetchrow(
            queries.REVIEW_CANDIDATE,
            candidate_uuid,
            status,
            review.reviewed_by,
            review.reason,
            memory_id,
        )
        return candidate_from_row(row)

    async def candidates(self, ids: list[str]) -> list[CanonCandidate]:
        rows = await self._pool.fetch(queries.SELECT_CANDIDATES, [uuid.UUID(i) for i in ids])
        return [candidate_from_row(r) for r in rows]


async def _remember(conn: asyncpg.Connection, candidate: CanonCandidate, user: str) -> str:
    """W5 from T22: an accepted long-term memory becomes a confirmed preference of the scope
    its version was projected into (the tree's project, Global without one, or the world's
    canon), about the version's decision event there, so that a purge retracting what rests on
    the version's nodes retracts the memory too. Its id derives from the candidate's and is
    reserved: no SetPreference may write or rewrite it."""
    version = await conn.fetchrow(queries.CANDIDATE_VERSION, uuid.UUID(candidate.version_id))
    scope = canon_projection.canon_scope(
        CanonicalScope(version["scope"]), version["world"], version["project_id"]
    )
    memory = NewPreference(
        preference_id=canon_projection.memory_id(candidate.id),
        scope=scope,
        subject=candidate.subject,
        text=candidate.text,
        about=({"type": "event", "id": canon_projection.event_id(version["version_id"])},),
        confirmed_by=user,
        expected_revision=0,
    )
    return (await IngestionStore.set_preference(conn, memory)).preference_id
