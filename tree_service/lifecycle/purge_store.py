"""Purging an archived branch (T16): the impact preview, and the purge that does exactly what
the preview listed, leaving tombstones where content was.

The impact is built as its proto message so that the preview token is the digest of exactly
what the caller was shown, and the purge can answer what it did in the same form.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import asyncpg
from google.protobuf import message_factory

from mirrortree.v1 import common_pb2, purge_pb2, tree_pb2
from tree_service import rules as tree_rules
from tree_service.domain import BranchState, Node
from tree_service.errors import InvalidInput, NotFound, PreconditionFailed
from tree_service.lifecycle import purge_queries as q
from tree_service.lifecycle import queries as lifecycle_queries
from tree_service.lifecycle.purge_rules import (
    MIN_QUOTE,
    PurgePreviewStale,
    Quotes,
    Tombstone,
    expect_chosen,
    expect_token_for,
    parse_token,
    purged_citation,
    purged_entry,
    purged_item,
    scrubbed,
    token_of,
)
from tree_service.nodes.store import NodeStore

TOMBSTONE = purge_pb2.GRAPH_TOMBSTONE
RETRACT = purge_pb2.GRAPH_RETRACT


@dataclass(frozen=True)
class PurgeOrder:
    tree_id: str
    node_id: str
    preview_token: str
    choice: purge_pb2.PurgeChoice
    purged_by: str
    reason: str


def _object_type(name: str) -> int:
    return common_pb2.ObjectType.Value(name.upper())


def _tombstone(row: asyncpg.Record) -> Tombstone:
    return Tombstone(
        row["id"], row["branch_id"], row["tree_id"], row["purged_by"], row["reason"],
        row["purged_at"],
    )  # fmt: skip


@dataclass
class _Scope:
    """The purged nodes: id → (tree id, text, whether a transplanted copy), and which branch
    root each copy root stands for."""

    nodes: dict[str, tuple[str, str, bool]]
    copy_roots: dict[str, str]  # copy root node id → its tree id

    @property
    def ids(self) -> list[uuid.UUID]:
        return [uuid.UUID(n) for n in self.nodes]

    @property
    def texts(self) -> list[str]:
        return sorted({t for _, t, _ in self.nodes.values() if len(t.strip()) >= MIN_QUOTE})


async def _scope(
    conn: asyncpg.Connection, branch: Node, include_copies: bool, impact: purge_pb2.PurgeImpact
) -> _Scope:
    rows = await conn.fetch(q.SUBTREE, uuid.UUID(branch.id))
    nodes = {r["id"]: (r["tree_id"], r["text"], False) for r in rows}
    sub = await conn.fetch(q.SUB_BRANCHES, [uuid.UUID(n) for n in nodes], uuid.UUID(branch.id))
    impact.sub_branch_ids.extend(r["node_id"] for r in sub)
    copies = await conn.fetch(q.COPIES, list(nodes))
    roots: dict[str, str] = {}
    for c in copies:
        impact.transplant_copies.append(
            purge_pb2.TransplantCopyImpact(
                tree_id=c["tree_id"],
                source_node_id=c["source_node_id"],
                copy_node_id=c["copy_node_id"],
                purged=include_copies,
            )
        )
        # The copy of the branch root, or of the transplanted node when it lies inside.
        root = c["transplanted"] if c["transplanted"] in nodes else branch.id
        if c["source_node_id"] == root:
            roots[c["copy_node_id"]] = c["tree_id"]
    if include_copies and copies:
        ids = [uuid.UUID(c["copy_node_id"]) for c in copies]
        for r in await conn.fetch(q.NODES_TEXT, ids):
            nodes[r["id"]] = (r["tree_id"], r["text"], True)
    impact.nodes.extend(
        purge_pb2.PurgedNodeImpact(node_id=n, tree_id=t, transplant_copy=c)
        for n, (t, _, c) in sorted(nodes.items())
    )
    return _Scope(nodes, roots if include_copies else {})


async def _impact(
    conn: asyncpg.Connection, branch: Node, revision: int, include_copies: bool
) -> tuple[purge_pb2.PurgeImpact, _Scope]:
    """Everything a purge of `branch` touches, each list in a stable order."""
    impact = purge_pb2.PurgeImpact(
        branch_id=branch.id, tree_id=branch.tree_id, branch_revision=revision
    )
    scope = await _scope(conn, branch, include_copies, impact)
    ids, texts = scope.ids, list(scope.nodes)
    streaming = await conn.fetchval(q.STREAMING, ids)
    if streaming is not None:
        raise PreconditionFailed(
            f"answer {streaming} in branch {branch.id} still streams: end it, then purge",
            {"branch_id": branch.id, "node_id": streaming},
        )
    task = await conn.fetchrow(q.ACTIVE_TASK, ids)
    if task is not None:
        raise PreconditionFailed(
            f"delegated task {task['id']} in branch {branch.id} is {task['state']}: cancel it "
            "(InstructTask with TASK_CANCEL), then purge",
            {"branch_id": branch.id, "task_id": task["id"]},
        )
    citing: set[str] = set()
    subjects = []
    for r in await conn.fetch(q.CITATIONS_IN, ids, texts):
        impact.citations.append(purge_pb2.InboundCitation(**dict(r)))
        citing.add(r["citing_node_id"])
        subjects.append(f"citation:{r['citing_node_id']}:{r['position']}")
    held = ids + [uuid.UUID(c) for c in citing]
    for r in await conn.fetch(q.CANON_VERSIONS, held):
        impact.canon_entries.append(
            purge_pb2.CanonEntryImpact(
                version_id=r["id"],
                tree_id=r["tree_id"],
                version=r["version"],
                node_ids=sorted(n for n in r["node_ids"] if n in scope.nodes),
                citing_node_ids=sorted(n for n in r["node_ids"] if n in citing),
            )
        )
    await _graph(conn, scope, impact)
    for r in await conn.fetch(q.MERGE_REFERENCES, ids):
        impact.merge_references.append(purge_pb2.MergeReferenceImpact(**dict(r)))
    for r in await conn.fetch(q.CONTEXT_COPIES, texts, subjects):
        impact.context_copies.append(purge_pb2.ContextCopyImpact(**dict(r)))
    return impact, scope


async def _graph(conn: asyncpg.Connection, scope: _Scope, impact: purge_pb2.PurgeImpact) -> None:
    """Story-graph objects resting on the content: references to it are tombstoned; facts
    citing those references, or quoting the content in their results, are retracted."""
    refs = await conn.fetch(q.GRAPH_REFERENCES, list(scope.nodes))
    found: dict[tuple[str, str, str], int] = {
        (r["result_id"], r["object_type"], r["object_id"]): TOMBSTONE for r in refs
    }
    results = [r["result_id"] for r in refs]
    for r in await conn.fetch(q.GRAPH_CITING, results, [r["object_id"] for r in refs]):
        found.setdefault((r["result_id"], r["object_type"], r["object_id"]), RETRACT)
    quotes = Quotes(scope.texts)
    for r in await conn.fetch(q.GRAPH_RESULT_OBJECTS, sorted(set(results))):
        if quotes(r["title"], r["body"]):
            found.setdefault((r["result_id"], r["object_type"], r["object_id"]), RETRACT)
    for (result_id, object_type, object_id), action in sorted(found.items()):
        impact.graph_objects.append(
            purge_pb2.GraphObjectImpact(
                result_id=result_id,
                object_type=_object_type(object_type),  # type: ignore[arg-type]
                object_id=object_id,
                action=action,  # type: ignore[arg-type]
            )
        )
    objects = sorted(found)
    for r in await conn.fetch(
        q.PREFERENCES_ABOUT,
        [o[0] for o in objects],
        [o[1] for o in objects],
        [o[2] for o in objects],
    ):
        impact.preferences.append(
            purge_pb2.PreferenceImpact(preference_id=r["id"], subject=r["subject"])
        )


class PurgeStore:
    """Purge previews, purges, and the tombstones they leave."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @staticmethod
    async def _archived(conn: asyncpg.Connection, node: Node, state: str) -> None:
        if state == BranchState.PURGED.value:
            row = await conn.fetchrow(q.SELECT_PURGE, uuid.UUID(node.id))
            done = _tombstone(row) if row is not None else None
            raise PreconditionFailed(
                f"branch {node.id} is purged already" + (f" (by {done.purged_by})" if done else ""),
                {"branch_id": node.id, "state": state},
            )
        if state != BranchState.ARCHIVED.value:
            raise PreconditionFailed(
                f"branch {node.id} is {state}: only an archived branch can be purged; archive "
                "it first (SetBranchState ARCHIVED)",
                {"branch_id": node.id, "state": state},
            )

    async def preview(
        self, node_id: str, include_copies: bool
    ) -> tuple[purge_pb2.PurgeImpact, str]:
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            node = await NodeStore.load(conn, node_id, "node_id")
            row = await conn.fetchrow(lifecycle_queries.SELECT_BRANCH, uuid.UUID(node.id))
            state, revision = (row["state"], row["revision"]) if row else ("active", 1)
            await self._archived(conn, node, state)
            impact, _ = await _impact(conn, node, revision, include_copies)
        return impact, token_of(impact, include_copies)

    async def purge(self, conn: asyncpg.Connection, order: PurgeOrder) -> purge_pb2.PurgeResponse:
        """Purge as previewed, or refuse and write nothing; the same preview purged again
        answers the first purge's response."""
        token = parse_token(order.preview_token)
        assert token is not None  # checked with the request
        node = await NodeStore.load(conn, order.node_id, "node_id")
        if node.tree_id != order.tree_id:
            raise InvalidInput.one(
                "tree_id", f"node {node.id} is in tree {node.tree_id}, not in {order.tree_id}"
            )
        expect_token_for(token, node.id, order.choice.transplant_copies)
        node_uuid = uuid.UUID(node.id)
        await conn.execute(lifecycle_queries.OPEN_BRANCH, node_uuid, uuid.UUID(node.tree_id))
        locked = await conn.fetchrow(lifecycle_queries.LOCK_BRANCH, node_uuid)
        if locked["state"] == BranchState.PURGED.value:
            done = await conn.fetchrow(q.SELECT_PURGE, node_uuid)
            if done is not None and done["preview_token"] == order.preview_token:
                return purge_pb2.PurgeResponse.FromString(done["response"])
        await self._archived(conn, node, locked["state"])
        # Appends to the tree wait for this lock, so that what is read next is what is purged.
        await conn.execute(q.LOCK_TREES, [uuid.UUID(node.tree_id)])
        impact, scope = await _impact(conn, node, locked["revision"], token.include_copies)
        trees = sorted({uuid.UUID(t) for t, _, _ in scope.nodes.values()})
        if token_of(impact, token.include_copies) != order.preview_token:
            raise PurgePreviewStale(node.id, locked["revision"])
        expect_chosen(impact, order.choice)
        purge_id = str(uuid.uuid4())
        response = purge_pb2.PurgeResponse(impact=impact)
        purged_at = await conn.fetchval(
            q.INSERT_PURGE,
            uuid.UUID(purge_id),
            node_uuid,
            uuid.UUID(node.tree_id),
            order.preview_token,
            order.purged_by,
            order.reason,
            b"",
        )
        done_stone = Tombstone(
            purge_id, node.id, node.tree_id, order.purged_by, order.reason, purged_at
        )
        await _apply(conn, impact, scope, done_stone, trees)
        response.tombstone.CopyFrom(done_stone.to_proto())
        await conn.execute(
            q.SET_PURGE_RESPONSE,
            uuid.UUID(purge_id),
            response.SerializeToString(deterministic=True),
        )
        return response

    async def tombstone(self, node_id: str) -> purge_pb2.PurgeTombstone:
        node_uuid = tree_rules.parse_id(node_id, "node_id")
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(q.TOMBSTONE_OF, node_uuid)
            if row is None:
                if not await NodeStore.exists(conn, node_uuid):
                    raise NotFound("node", node_id)
                raise NotFound("purge tombstone", node_id)
        return _tombstone(row).to_proto(str(node_uuid))


async def _apply(
    conn: asyncpg.Connection,
    impact: purge_pb2.PurgeImpact,
    scope: _Scope,
    stone: Tombstone,
    trees: list[uuid.UUID],
) -> None:
    """Do what `impact` lists; the caller checked that every listed impact was chosen."""
    ids = scope.ids
    await conn.execute(q.NAME_PURGE, stone.purge_id)
    await conn.execute(q.INSERT_PURGED_NODES, ids, uuid.UUID(stone.purge_id))
    contents = sorted({r["s"] for r in await conn.fetch(q.CONTENT_STRINGS, ids)})
    for statement in (
        q.CLEAR_NODES,
        q.CLEAR_CHUNKS,
        q.CLEAR_TASK_REPORTS,
        q.CLEAR_TASKS,
        q.CLEAR_SOURCE_REVISIONS,
        q.CLEAR_SUMMARIES,
        q.CLEAR_COMMITMENTS,
    ):
        await conn.execute(statement, ids)
    cited: dict[str, set[int]] = {}
    for c in impact.citations:
        cited.setdefault(c.citing_node_id, set()).add(c.position)
    rewritten: dict[str, list[dict[str, object]]] = {}
    for citing, positions in sorted(cited.items()):
        stored = json.loads(await conn.fetchval(q.SELECT_CITATIONS, uuid.UUID(citing)))
        rewritten[citing] = [
            purged_citation(c, stone) if i in positions else c for i, c in enumerate(stored)
        ]
        await conn.execute(q.REWRITE_CITATIONS, uuid.UUID(citing), json.dumps(rewritten[citing]))
    owner = {n: stone.branch_id for n in scope.nodes}
    for entry in impact.canon_entries:
        snapshot = json.loads(await conn.fetchval(q.SELECT_SNAPSHOT, uuid.UUID(entry.version_id)))
        for i, node in enumerate(snapshot):
            if node["id"] in scope.nodes:
                snapshot[i] = purged_entry(node, owner[node["id"]])
            elif node["id"] in rewritten:
                snapshot[i] = {**node, "citations": rewritten[node["id"]]}
        await conn.execute(q.REWRITE_SNAPSHOT, uuid.UUID(entry.version_id), json.dumps(snapshot))
    await _apply_graph(conn, impact, stone)
    await _scrub_responses(conn, scope, contents)
    items: dict[str, set[str]] = {}
    for copy in impact.context_copies:
        items.setdefault(copy.context_version_id, set()).add(copy.subject)
    for version_id, subjects in sorted(items.items()):
        stored = json.loads(await conn.fetchval(q.SELECT_CONTEXT_ITEMS, uuid.UUID(version_id)))
        stored = [purged_item(i) if i.get("subject") in subjects else i for i in stored]
        await conn.execute(q.REWRITE_CONTEXT_ITEMS, uuid.UUID(version_id), json.dumps(stored))
    roots = [(stone.branch_id, stone.tree_id)]
    roots += [(b, stone.tree_id) for b in impact.sub_branch_ids]
    roots += sorted(scope.copy_roots.items())
    for root, tree in roots:
        await _move_to_purged(conn, root, tree, stone)
    for tree_uuid in trees:
        await conn.execute(q.BUMP_TREE, tree_uuid)


async def _scrub_responses(conn: asyncpg.Connection, scope: _Scope, texts: list[str]) -> None:
    """Stored write responses keep no purged content (`texts`): a retry replays the frame."""
    methods = tree_pb2.DESCRIPTOR.services_by_name["TreeService"].methods_by_name
    for row in await conn.fetch(q.STORED_RESPONSES, list(scope.nodes)):
        method = methods.get(row["method"])
        if method is None:
            continue
        response = message_factory.GetMessageClass(method.output_type)()
        response.ParseFromString(row["response"])
        if scrubbed(response, texts):
            await conn.execute(
                q.REWRITE_RESPONSE, row["key"], response.SerializeToString(deterministic=True)
            )


async def _apply_graph(
    conn: asyncpg.Connection, impact: purge_pb2.PurgeImpact, stone: Tombstone
) -> None:
    record = json.dumps(stone.record())
    for g in impact.graph_objects:
        type_name = common_pb2.ObjectType.Name(g.object_type).lower()
        if g.action == TOMBSTONE:
            await conn.execute(q.TOMBSTONE_REFERENCE, g.result_id, g.object_id, record)
        else:
            await conn.execute(
                q.RETRACT_OBJECT, g.result_id, type_name, g.object_id, stone.retraction(), record
            )
            if type_name == "leaf_fact":
                await conn.execute(q.RETRACT_LEAF, g.result_id, g.object_id, stone.retraction())
    for p in impact.preferences:
        await conn.execute(q.RETRACT_PREFERENCE, p.preference_id, stone.retraction())


async def _move_to_purged(conn: asyncpg.Connection, root: str, tree: str, stone: Tombstone) -> None:
    root_uuid = uuid.UUID(root)
    await conn.execute(q.OPEN_PURGED_BRANCH, root_uuid, uuid.UUID(tree))
    current = await conn.fetchrow(lifecycle_queries.LOCK_BRANCH, root_uuid)
    revision = await conn.fetchval(q.PURGE_BRANCH, root_uuid)
    await conn.execute(
        lifecycle_queries.INSERT_TRANSITION,
        root_uuid,
        revision,
        current["state"],
        BranchState.PURGED.value,
        stone.purged_by,
        stone.reason,
        None,
        None,
        None,
    )
