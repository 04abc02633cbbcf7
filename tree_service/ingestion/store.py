"""Story-graph ingestion: review results with their objects and links, the hubs they feed,
message sources (W2), and the sources and preferences results may name."""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

import asyncpg

from mirrortree import neighbourhoods
from mirrortree.scopes import ScopeValue
from mirrortree.violations import FieldViolation
from tree_service import rules
from tree_service.domain import (
    NewPreference,
    NewSourceRevision,
    Node,
    NodeKind,
    PreferenceRecord,
    RecordedReview,
    ReviewResult,
    SourceRecord,
    StoryObject,
)
from tree_service.errors import (
    IdempotencyKeyReused,
    InvalidInput,
    PreconditionFailed,
    RevisionConflict,
)
from tree_service.ingestion import queries
from tree_service.leaves import store as leaf_store
from tree_service.nodes.store import NodeStore
from tree_service.primary import Primary


class IngestionStore:
    """Writes of the story graph on the primary; `hub_links` is the hub threshold."""

    def __init__(self, primary: Primary, hub_links: int = neighbourhoods.DEFAULT_HUB_LINKS) -> None:
        self._primary = primary
        self.hub_links = hub_links

    @staticmethod
    async def record_message(
        conn: asyncpg.Connection,
        node: Node,
        project_id: str | None,
        lineage_id: uuid.UUID | None = None,
    ) -> None:
        """W2: every node is a message source; a question edit is a new revision of its
        lineage's source, anything else is revision 1 of its own."""
        is_question = node.kind is NodeKind.QUESTION
        source_id = lineage_id if is_question and lineage_id else uuid.UUID(node.id)
        await conn.execute(
            queries.INSERT_SOURCE_REVISION,
            source_id,
            node.version if is_question else 1,
            uuid.UUID(node.id),
            "user" if is_question else "assistant",
            node.text,
            project_id,
            uuid.UUID(node.tree_id),
            node.ordinal,
        )

    @staticmethod
    async def has_object(
        conn: asyncpg.Connection, scope_key: str, object_type: str, object_id: str
    ) -> bool:
        return bool(await conn.fetchval(queries.OBJECT_IN_SCOPE, scope_key, object_type, object_id))

    async def record_review(
        self, conn: asyncpg.Connection, review: ReviewResult, request_hash: bytes
    ) -> RecordedReview:
        """Insert a review result and all its objects, or return the identical earlier one."""
        existing = await conn.fetchval(queries.SELECT_REVIEW_HASH, review.result_id)
        if existing is not None:
            if bytes(existing) != request_hash:
                raise IdempotencyKeyReused(review.result_id, "RecordReview (result_id)")
            row = await conn.fetchrow(queries.SELECT_REVIEW_RESULT, review.result_id)
            return RecordedReview(
                review.result_id, row["recorded_at"], row["graph_revision"], row["object_count"]
            )
        # Everything checked against earlier results is checked under the scope's lock, so a
        # result committing concurrently in the same scope is either seen or waits.
        await conn.execute(queries.LOCK_SCOPE_REVISIONS, review.scope.key)
        pinned, missing = await self._resolve_external(conn, review)
        refused = missing + await self._source_reference_conflicts(conn, review)
        if refused:
            raise InvalidInput(refused)
        await self._expect_no_purged_message(conn, review)
        shared = None
        if review.leaf_extraction is not None:
            shared = await leaf_store.prepare(conn, review, review.leaf_extraction)
            # A leaf matching a stored one is linked to it, not stored again.
            linked = leaf_store.linked_objects(review, shared)
            written = dataclasses.replace(
                review,
                objects=tuple(
                    o for o in review.objects if (o.object_type.value, o.object_id) not in linked
                ),
            )
        else:
            written = review
        try:
            head = await conn.fetchrow(
                queries.INSERT_REVIEW_RESULT,
                review.result_id,
                review.scope.key,
                list(review.scope.projects),
                review.phase,
                review.covered_from,
                review.covered_to,
                review.review_generated_at,
                list(review.excluded_source_types),
                request_hash,
                list(review.coverage_gaps),
                len(review.objects),
                review.coverage_basis,
                json.dumps([{"what": w, "count": n} for w, n in review.coverage_counts]),
            )
        except asyncpg.UniqueViolationError:
            # A concurrent ingestion of the same result id committed first.
            raise PreconditionFailed(
                f"result {review.result_id!r} is being recorded concurrently; retry",
                {"field": "result_id"},
            ) from None
        recorded_at = head["recorded_at"]
        # Merged once, not per object: a result's objects would copy it once each.
        ends = {
            (o.object_type.value, o.object_id): {
                "recorded_in": review.result_id,
                "object_revision": o.object_revision,
            }
            for o in review.objects
        } | pinned
        records: list[tuple[Any, ...]] = [
            (
                review.result_id,
                obj.object_type.value,
                obj.object_id,
                obj.object_type.rank,
                review.scope.key,
                obj.title,
                obj.body,
                obj.kind,
                obj.object_revision,
                obj.confirmation_state,
                obj.event_time.start,
                obj.event_time.end,
                obj.event_time.precision or None,
                obj.event_time.basis or None,
                review.review_generated_at,
                recorded_at,
                json.dumps(rules.pin_ends(obj.details, ends), ensure_ascii=False),
                sorted({to_id for link, _, to_id in obj.links if link == "cites"}),
            )
            for obj in written.objects
        ]
        await conn.copy_records_to_table(
            "graph_objects", records=records, columns=queries.GRAPH_OBJECT_COLUMNS
        )
        links = {
            (review.scope.key, review.result_id, o.object_type.value, o.object_id, *link)
            for o in written.objects
            for link in o.links
        }
        if links:
            await conn.copy_records_to_table(
                "graph_links", records=sorted(links), columns=queries.GRAPH_LINK_COLUMNS
            )
        await self._keep_hubs(conn, written, links)
        if shared is not None:
            await leaf_store.finish(conn, review, shared, recorded_at)
        return RecordedReview(
            review.result_id, recorded_at, head["graph_revision"], len(review.objects)
        )

    async def _keep_hubs(
        self,
        conn: asyncpg.Connection,
        review: ReviewResult,
        links: set[tuple[str, str, str, str, str, str, str]],
    ) -> None:
        """Add what a result just written brings to the hubs' stored members, then make hubs of
        the objects its links bring to the threshold (mirrortree.neighbourhoods). `links` are
        its graph_links rows (scope, result, from type, from id, link, to type, to id)."""
        scope_key, result_id = review.scope.key, review.result_id
        # Planned for these arrays' sizes every time, never as a generic plan (see
        # MAINTAIN_HUB_MEMBERS); the setting ends with the transaction.
        await conn.execute(queries.FORCE_CUSTOM_PLANS)
        await conn.execute(
            neighbourhoods.MAINTAIN_HUB_MEMBERS,
            scope_key,
            result_id,
            [link[2] for link in links],
            [link[3] for link in links],
            [link[5] for link in links],
            [link[6] for link in links],
            [o.object_type.value for o in review.objects],
            [o.object_id for o in review.objects],
        )
        # Planned for a scope of average size: for its own scope, which the statistics may not
        # know yet (a new project), PostgreSQL estimates a single row, and may then count each
        # end's links by filtering the whole scope (seconds per result at a million objects).
        await conn.execute(queries.FORCE_GENERIC_PLANS)
        new_hubs = await conn.fetch(neighbourhoods.NEW_HUBS, scope_key, result_id, self.hub_links)
        await conn.execute(queries.FORCE_CUSTOM_PLANS)
        for row in new_hubs:
            await conn.execute(neighbourhoods.FILL_HUB_MEMBERS, scope_key, row["t"], row["id"])

    async def apply_hub_threshold(self) -> int:
        """Make hubs of every object with `hub_links` links or more that is not one yet, when
        no lower threshold was applied before; returns how many were made. Each hub is filled
        in its own transaction under its scope's lock, so ingestions are not held for long."""
        pool = self._primary.pool
        applied = await pool.fetchval(queries.HUB_THRESHOLD_APPLIED)
        if applied is not None and applied <= self.hub_links:
            return 0
        made = 0
        for row in await pool.fetch(neighbourhoods.OBJECTS_OVER_THRESHOLD, self.hub_links):
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute(queries.LOCK_SCOPE_REVISIONS, row["scope_key"])
                await conn.execute(
                    neighbourhoods.FILL_HUB_MEMBERS, row["scope_key"], row["t"], row["id"]
                )
            made += 1
        await pool.execute(queries.RECORD_HUB_THRESHOLD, self.hub_links)
        return made

    @staticmethod
    async def _resolve_external(
        conn: asyncpg.Connection, review: ReviewResult
    ) -> tuple[dict[tuple[str, str], dict[str, Any]], list[FieldViolation]]:
        """Find every end this result names outside itself, in earlier results of the same
        scope (or, for preferences, among the preferences that apply to the scope). Found ones
        are returned with the version that was recorded, so relation ends are pinned to a
        version; each field naming a missing one is a violation that refuses the result."""
        # Many fields may name one object (every event of a result involving one entity):
        # each object is looked up once.
        wanted = {(r.object_type, r.object_id) for r in review.external_references}
        graph_refs = sorted(key for key in wanted if key[0] != "preference")
        preference_ids = sorted(object_id for kind, object_id in wanted if kind == "preference")
        found: dict[tuple[str, str], dict[str, Any]] = {}
        if graph_refs:
            for row in await conn.fetch(
                queries.NEWEST_COPIES_IN_SCOPE,
                review.scope.key,
                [object_type for object_type, _ in graph_refs],
                [object_id for _, object_id in graph_refs],
            ):
                found[(row["object_type"], row["object_id"])] = {
                    "recorded_in": row["result_id"],
                    "object_revision": row["object_revision"],
                }
        # Leaf facts the scope linked to a stored leaf have no copy of their own.
        unfound = [i for t, i in graph_refs if t == "leaf_fact" and ("leaf_fact", i) not in found]
        for object_id, result_id in (
            await leaf_store.linked_in_scope(conn, review.scope.key, unfound)
        ).items():
            found[("leaf_fact", object_id)] = {"recorded_in": result_id, "object_revision": None}
        if preference_ids:
            for row in await conn.fetch(queries.SELECT_PREFERENCES_BY_ID, preference_ids):
                if rules.preference_applies(review.scope, row["scope_key"]):
                    found[("preference", row["id"])] = {"preference_revision": str(row["revision"])}
        return found, rules.missing_ends(review, set(found))

    @staticmethod
    async def _expect_no_purged_message(conn: asyncpg.Connection, review: ReviewResult) -> None:
        """Refuse a source reference to a purged message: its words were forgotten, and a
        review must not bring them back as a fragment."""
        messages: dict[uuid.UUID, StoryObject] = {}
        for o in rules.source_references(review):
            if o.details.get("source_type") == "message":
                try:
                    messages[uuid.UUID(str(o.details.get("source_id")))] = o
                except ValueError:
                    continue  # not a node of a tree: nothing of it can have been purged
        purged = await NodeStore.purged_among(conn, sorted(messages))
        for node_id, o in sorted(messages.items()):
            if str(node_id) in purged:
                field = review.fields.get((o.object_type.value, o.object_id), o.object_id)
                raise PreconditionFailed(
                    f"{field}.source_id names message {node_id}, which was purged: only its "
                    "tombstone remains (GetPurgeTombstone); a review cannot cite it",
                    {"field": f"{field}.source_id", "node_id": str(node_id), "state": "purged"},
                )

    @staticmethod
    async def _source_reference_conflicts(
        conn: asyncpg.Connection, review: ReviewResult
    ) -> list[FieldViolation]:
        """Source reference ids that an earlier result of the same scope recorded with other
        content (citing one again with the same content is fine)."""
        references = rules.source_references(review)
        if not references:
            return []
        mine = {o.object_id: o for o in references}
        rows = await conn.fetch(
            queries.SOURCE_REFERENCE_CONFLICTS,
            review.scope.key,
            [o.object_id for o in references],
            [o.body for o in references],
            [json.dumps(o.details, ensure_ascii=False) for o in references],
        )
        return [
            rules.reference_conflict(
                review,
                mine[row["object_id"]],
                row["result_id"],
                row["body"],
                json.loads(row["details"]),
            )
            for row in rows
        ]

    # ---- sources and preferences --------------------------------------------------------

    @staticmethod
    async def record_source(conn: asyncpg.Connection, new: NewSourceRevision) -> SourceRecord:
        """Create (expected revision 0) or replace a source's current text; older text is
        not kept, so references to an older revision read as unavailable."""
        current = await conn.fetchrow(queries.SELECT_SOURCE_FOR_UPDATE, new.source_id)
        rules.expect_source_write(
            new.source_id,
            new.source_type,
            new.expected_revision,
            None if current is None else (current["source_type"], current["revision"]),
        )
        if current is None:
            row = await conn.fetchrow(
                queries.INSERT_SOURCE,
                new.source_id,
                new.source_type,
                new.project_id,
                new.title,
                new.text,
            )
            if row is None:  # a concurrent create of the same id won
                raise RevisionConflict("source", new.source_id, 0, 1)
        else:
            row = await conn.fetchrow(
                queries.UPDATE_SOURCE, new.source_id, new.project_id, new.title, new.text
            )
        return SourceRecord(new.source_id, row["revision"], row["updated_at"])

    async def preferences(self, ids: list[str]) -> list[PreferenceRecord]:
        rows = await self._primary.pool.fetch(queries.SELECT_PREFERENCES, ids)
        return [
            PreferenceRecord(
                r["id"],
                ScopeValue.from_key(r["scope_key"]),
                r["subject"],
                r["text"],
                tuple(json.loads(r["about"])),
                r["confirmed_by"],
                r["revision"],
                r["updated_at"],
            )
            for r in rows
        ]

    @staticmethod
    async def set_preference(conn: asyncpg.Connection, new: NewPreference) -> PreferenceRecord:
        about = json.dumps(list(new.about))
        args = (new.scope.key, new.subject, new.text, about, new.confirmed_by)
        current = await conn.fetchval(queries.SELECT_PREFERENCE_FOR_UPDATE, new.preference_id)
        rules.expect_preference_write(new.preference_id, new.expected_revision, current)
        if current is None:
            row = await conn.fetchrow(queries.INSERT_PREFERENCE, new.preference_id, *args)
            if row is None:  # a concurrent create of the same id won
                raise RevisionConflict("preference", new.preference_id, 0, 1)
        else:
            row = await conn.fetchrow(queries.UPDATE_PREFERENCE, new.preference_id, *args)
        return PreferenceRecord(
            new.preference_id,
            new.scope,
            new.subject,
            new.text,
            new.about,
            new.confirmed_by,
            row["revision"],
            row["updated_at"],
        )
