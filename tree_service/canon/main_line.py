"""Main lines: canonicalizing a line of the conversation into a numbered version of its scope,
projecting that version into the story graph, and reading versions and their snapshots."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from tree_service import canon_projection, rules
from tree_service.canon import queries
from tree_service.canon.reviews import accept_invitation
from tree_service.canon.rules import expect_candidates_allowed
from tree_service.citations.grants import without_revoked
from tree_service.conversation.store import ConversationStore
from tree_service.domain import (
    CanonCandidate,
    Canonicalization,
    CanonicalScope,
    MainLineVersion,
    Node,
    NodeKind,
    Tree,
)
from tree_service.errors import InvalidInput, NotFound, RevisionConflict
from tree_service.ingestion.store import IngestionStore
from tree_service.nodes.rows import node_from_json, node_to_json
from tree_service.nodes.store import NodeStore
from tree_service.realms.store import RealmStore


async def _adopting(conn: asyncpg.Connection, nodes: list[Node]) -> list[Node]:
    """`nodes` with each selected answer adopted by its question (seed 001 §3: an answer is a
    candidate, then adopted, then canonicalized), in the canonicalization's transaction; a
    question that adopted another answer now adopts the one the user confirmed."""
    adopted: dict[str, Node] = {}
    for node in nodes:
        if node.kind is not NodeKind.ANSWER or node.parent_id is None:
            continue
        question = adopted.get(node.parent_id) or await NodeStore.load(
            conn, node.parent_id, "selected node"
        )
        if question.adopted_answer_id != node.id:
            adopted[question.id] = await ConversationStore.adopt(
                conn, question.id, node.id, question.revision
            )
    return [adopted.get(n.id, n) for n in nodes]


def _candidate(data: dict[str, Any]) -> CanonCandidate:
    """A candidate as a version's listing carries it (JSON: its time is text)."""
    reviewed_at = data.pop("reviewed_at", None)
    return CanonCandidate(
        **data, reviewed_at=datetime.fromisoformat(reviewed_at) if reviewed_at else None
    )


@dataclass(frozen=True)
class ListedVersion:
    """A main-line version as listed: without its snapshot (MainLineVersion.snapshot is
    empty until MainLineStore.with_snapshots reads it), and the size that snapshot is stored in."""

    version: MainLineVersion
    snapshot_stored_bytes: int


def listed_version(row: asyncpg.Record, project_id: str | None) -> ListedVersion:
    scope = CanonicalScope(row["scope"])
    version = MainLineVersion(
        id=row["id"],
        tree_id=row["tree_id"],
        scope=scope,
        world=row["world"],
        version=row["version"],
        node_ids=tuple(row["node_ids"]),
        snapshot=(),
        confirmed_by=row["confirmed_by"],
        created_at=row["created_at"],
        candidates=tuple(_candidate(c) for c in json.loads(row["candidates"])),
        replaces_version_id=row["replaces_version_id"],
        graph_scope=canon_projection.canon_scope(scope, row["world"], project_id),
        invitation_id=row["invitation_id"],
    )
    return ListedVersion(version, row["snapshot_stored_bytes"])


class MainLineStore:
    """Main-line versions of a tree's scopes on the primary."""

    def __init__(self, pool: asyncpg.Pool, ingestion: IngestionStore) -> None:
        self._pool = pool
        self._ingestion = ingestion

    async def canonicalize(
        self, conn: asyncpg.Connection, request: Canonicalization
    ) -> MainLineVersion:
        """Append a main-line version for the selection's scope; nothing earlier changes."""
        tree = await NodeStore.tree(conn, request.tree_id, held=True)
        tree_uuid = uuid.UUID(tree.id)
        selected, extended = await self._selection(conn, request)
        for node in selected:
            if node.id not in extended:
                extended[node.id] = await self._extended_parts(conn, node)
        nodes, parts = rules.with_extended_parts(selected, extended)
        for node in nodes:
            await NodeStore.expect_not_purged(conn, node.id, "selected node")
        scope, world = rules.canonical_scope(nodes, parts)
        expect_candidates_allowed(scope, request.candidates)
        key = (tree_uuid, scope.value, world)
        if request.expected_version == 0:
            version = await conn.fetchval(queries.START_MAIN_LINE, *key)
        else:
            version = await conn.fetchval(queries.ADVANCE_MAIN_LINE, *key, request.expected_version)
        if version is None:
            current = await conn.fetchval(queries.MAIN_LINE_HEAD, *key) or 0
            raise RevisionConflict(
                f"main line {scope.value}{'/' + world if world else ''}",
                request.tree_id,
                request.expected_version,
                current,
            )
        # After the version is claimed: a concurrent canonicalization of the same main line is
        # turned away by its version, never by the adoption below.
        nodes = await _adopting(conn, nodes)
        invitation_id = None
        if request.invitation_id is not None:
            invitation_id = rules.parse_id(request.invitation_id, "confirmation.invitation_id")
        previous = await conn.fetchval(queries.MAIN_LINE_VERSION_ID, *key, version - 1)
        version_id = uuid.uuid4()
        created_at = await conn.fetchval(
            queries.INSERT_MAIN_LINE_VERSION,
            version_id,
            tree_uuid,
            scope.value,
            world,
            version,
            [uuid.UUID(n.id) for n in nodes],
            json.dumps([node_to_json(n) for n in nodes], ensure_ascii=False),
            request.confirmed_by,
            str(invitation_id) if invitation_id else None,
            previous,
        )
        if invitation_id is not None:
            await accept_invitation(
                conn,
                str(invitation_id),
                tree_id=str(tree_uuid),
                node_ids=tuple(n.id for n in nodes),
                version_id=version_id,
                user=request.confirmed_by,
            )
        candidates = []
        for position, proposal in enumerate(request.candidates):
            candidate = CanonCandidate(
                str(uuid.uuid4()),
                proposal.kind,
                proposal.tier,
                "pending",
                subject=proposal.subject,
                text=proposal.text,
            )
            await conn.execute(
                queries.INSERT_CANDIDATE,
                uuid.UUID(candidate.id),
                version_id,
                position,
                candidate.kind,
                candidate.detail,
                candidate.subject,
                candidate.text,
            )
            candidates.append(candidate)
        created = MainLineVersion(
            id=str(version_id),
            tree_id=request.tree_id,
            scope=scope,
            world=world,
            version=version,
            node_ids=tuple(n.id for n in nodes),
            snapshot=tuple(nodes),
            confirmed_by=request.confirmed_by,
            created_at=created_at,
            candidates=tuple(candidates),
            replaces_version_id=str(previous) if previous else None,
            graph_scope=canon_projection.canon_scope(scope, world, tree.project_id),
            invitation_id=str(invitation_id) if invitation_id else None,
        )
        await self._project(conn, created, tree)
        return created

    async def _selection(
        self, conn: asyncpg.Connection, request: Canonicalization
    ) -> tuple[list[Node], dict[str, list[Node]]]:
        """The nodes a request selects, in tree order: the path to its leaf, or its chosen
        nodes without the frozen parts of a chosen extension (they join through it); and the
        frozen parts of each node read on the way."""
        if request.leaf_node_id is not None:
            leaf = await NodeStore.load(conn, request.leaf_node_id, "leaf_node_id")
            rules.expect_same_tree(leaf, request.tree_id, "leaf_node_id")
            limit = rules.MAX_CANON_NODES + 1
            path, _ = await NodeStore.path(conn, uuid.UUID(leaf.id), 0, limit)
            rules.expect_path_within_limit(leaf, len(path))
            return path, {}
        ids = [rules.parse_id(n, f"nodes.node_ids[{i}]") for i, n in enumerate(request.node_ids)]
        found = await NodeStore.load_many(conn, ids)
        for i, node_id in enumerate(request.node_ids):
            if str(uuid.UUID(node_id)) not in found:
                raise NotFound("node", node_id)
            rules.expect_same_tree(
                found[str(uuid.UUID(node_id))], request.tree_id, f"nodes.node_ids[{i}]"
            )
        extended = {node.id: await self._extended_parts(conn, node) for node in found.values()}
        selected_parts = {p.id for chain in extended.values() for p in chain}
        nodes = sorted(
            (n for n in found.values() if n.id not in selected_parts), key=lambda n: n.ordinal
        )
        # A parent is always older, so the last in tree order is the deepest.
        leaf = nodes[-1]
        on_path = selected_parts | await NodeStore.on_path_to(conn, uuid.UUID(leaf.id), ids)
        rules.expect_on_one_path(request.node_ids, on_path, leaf)
        return nodes, extended

    @staticmethod
    async def _extended_parts(conn: asyncpg.Connection, node: Node) -> list[Node]:
        """The frozen answers `node` continues, oldest first (empty unless it extends one)."""
        parts: list[Node] = []
        while node.extends_answer_id is not None:
            node = await NodeStore.load(conn, node.extends_answer_id, "extends_answer_id")
            parts.insert(0, node)
        return parts

    async def _project(
        self, conn: asyncpg.Connection, version: MainLineVersion, tree: Tree
    ) -> None:
        """W3, in the canonicalization's own transaction: the version appears in the story
        graph of its canon scope (the project only for real experience) as a confirmed record,
        replacing the previous version's record when that one is in the same scope (a tree
        that changed project, or a version older than the projection, gets a coverage gap
        instead of an unevidenced link)."""
        project_id = tree.project_id
        scope_key = canon_projection.canon_scope(version.scope, version.world, project_id).key
        previous_in_scope = None
        gaps: tuple[str, ...] = ()
        if version.replaces_version_id:
            previous_event = canon_projection.event_id(version.replaces_version_id)
            if await IngestionStore.has_object(conn, scope_key, "event", previous_event):
                previous_in_scope = version.replaces_version_id
            else:
                gaps = (
                    f"version {version.version - 1} of this main line has no decision event in "
                    "this scope, so no replaces relation is recorded for it",
                )
        stated = await RealmStore.stated_at(conn, version.node_ids)
        review = canon_projection.projection(
            version, tree.title, project_id, previous_in_scope, stated
        )
        review = dataclasses.replace(review, coverage_gaps=gaps)
        request_hash = hashlib.sha256(review.result_id.encode()).digest()
        await self._ingestion.record_review(conn, review, request_hash)

    # ---- reads ----------------------------------------------------------------------------

    async def list_versions(
        self,
        tree_id: str,
        scope: CanonicalScope | None,
        world: str,
        after_version_id: str | None,
        limit: int,
    ) -> list[ListedVersion]:
        """Versions newest first, those after `after_version_id` (a page token: the last
        version of the previous page), at most `limit`; without their snapshots."""
        tree_uuid = rules.parse_id(tree_id, "tree_id")
        foreign = InvalidInput.one(
            "page_token", "is not a page token of this tree's main-line versions"
        )
        try:
            after = uuid.UUID(after_version_id) if after_version_id else None
        except ValueError:
            raise foreign from None
        async with self._pool.acquire() as conn:
            tree = await NodeStore.tree(conn, tree_id)
            if after is not None and not await conn.fetchval(
                queries.MAIN_LINE_VERSION_OF_TREE, after, tree_uuid
            ):
                raise foreign
            rows = await conn.fetch(
                queries.LIST_MAIN_LINE_VERSIONS,
                tree_uuid,
                scope.value if scope else None,
                world,
                after,
                limit,
            )
        return [listed_version(r, tree.project_id) for r in rows]

    async def with_snapshots(self, versions: list[MainLineVersion]) -> list[MainLineVersion]:
        """The versions, in their order, with their snapshots read."""
        rows = await self._pool.fetch(queries.MAIN_LINE_SNAPSHOTS, [v.id for v in versions])
        snapshots = {r["id"]: json.loads(r["snapshot"]) for r in rows}
        read = []
        for v in versions:
            nodes = await without_revoked(self._pool, [node_from_json(n) for n in snapshots[v.id]])
            read.append(dataclasses.replace(v, snapshot=tuple(nodes)))
        return read

    async def snapshot(self, version_id: str, offset: int, limit: int) -> tuple[list[Node], int]:
        """One page of a version's snapshot from zero-based `offset`, and its length."""
        version_uuid = rules.parse_id(version_id, "version_id")
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(queries.MAIN_LINE_SNAPSHOT_PAGE, version_uuid, offset, limit)
            if not rows:  # past the end, or no such version
                length = await conn.fetchval(queries.MAIN_LINE_SNAPSHOT_LENGTH, version_uuid)
                if length is None:
                    raise NotFound("main-line version", version_id)
                return [], length
        # A snapshot is immutable; a citation whose grant was revoked since reads as a tombstone.
        nodes = await without_revoked(
            self._pool, [node_from_json(json.loads(r["node"])) for r in rows]
        )
        return nodes, rows[0]["snapshot_length"]
