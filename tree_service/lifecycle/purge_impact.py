"""What purging a branch touches (T16): the impact a preview lists and a purge carries out.

The impact is built as its proto message so that the preview token is the digest of exactly
what the caller was shown, and the purge can answer what it did in the same form. Each list in
it is one category of copy a purge may reach (tree_service/user_content.py says what holds the
words of a branch): the branch's own nodes and records, citations into it, main-line entries,
story-graph facts and preferences resting on it, merge references, transplanted copies and the
origins of transplanted trees, recorded contexts, and branch transitions holding its words.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from mirrortree.v1 import common_pb2, purge_pb2
from tree_service.citations.anchors import citation_subject
from tree_service.context_assembly.layers import memory_subject
from tree_service.domain import Node
from tree_service.errors import PreconditionFailed
from tree_service.lifecycle import purge_queries as q
from tree_service.lifecycle.purge_rules import MIN_QUOTE, Quotes

TOMBSTONE = purge_pb2.GRAPH_TOMBSTONE
RETRACT = purge_pb2.GRAPH_RETRACT


def _object_type(name: str) -> int:
    return common_pb2.ObjectType.Value(name.upper())


@dataclass
class Scope:
    """The purged nodes: id → (tree id, text, whether a transplanted copy); which branch root
    each copy root stands for; and the roots of the branches purged (the branch and those
    inside it)."""

    nodes: dict[str, tuple[str, str, bool]]
    copy_roots: dict[str, str]  # copy root node id → its tree id
    branch_roots: list[str]

    @property
    def ids(self) -> list[uuid.UUID]:
        return [uuid.UUID(n) for n in self.nodes]

    @property
    def texts(self) -> list[str]:
        return sorted({t for _, t, _ in self.nodes.values() if len(t.strip()) >= MIN_QUOTE})

    @property
    def trees(self) -> list[uuid.UUID]:
        return sorted({uuid.UUID(t) for t, _, _ in self.nodes.values()})


async def _scope(
    conn: asyncpg.Connection, branch: Node, include_copies: bool, impact: purge_pb2.PurgeImpact
) -> Scope:
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
    branch_roots = [branch.id, *impact.sub_branch_ids]
    return Scope(nodes, roots if include_copies else {}, branch_roots)


async def impact_of(
    conn: asyncpg.Connection, branch: Node, revision: int, include_copies: bool
) -> tuple[purge_pb2.PurgeImpact, Scope]:
    """Everything a purge of `branch` touches, each list in a stable order."""
    impact = purge_pb2.PurgeImpact(
        branch_id=branch.id, tree_id=branch.tree_id, branch_revision=revision
    )
    scope = await _scope(conn, branch, include_copies, impact)
    ids, id_strings = scope.ids, list(scope.nodes)
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
    for r in await conn.fetch(q.BRANCH_RECORDS, ids):
        impact.records.append(purge_pb2.RecordImpact(table=r["table_name"], id=r["id"]))
    citing: set[str] = set()
    subjects = []
    for r in await conn.fetch(q.CITATIONS_IN, ids, id_strings):
        impact.citations.append(purge_pb2.InboundCitation(**dict(r)))
        citing.add(r["citing_node_id"])
        subjects.append(citation_subject(r["citing_node_id"], r["position"]))
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
    subjects += [memory_subject(p.preference_id) for p in impact.preferences]
    for r in await conn.fetch(q.CONTEXT_COPIES, id_strings, subjects):
        impact.context_copies.append(purge_pb2.ContextCopyImpact(**dict(r)))
    await _transitions(conn, scope, impact)
    for r in await conn.fetch(q.ORIGINS_HOLDING, id_strings):
        impact.transplant_origins.append(purge_pb2.TransplantOriginImpact(**dict(r)))
    return impact, scope


async def _graph(conn: asyncpg.Connection, scope: Scope, impact: purge_pb2.PurgeImpact) -> None:
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


async def _transitions(
    conn: asyncpg.Connection, scope: Scope, impact: purge_pb2.PurgeImpact
) -> None:
    """The purged branches' own history, and other branches' transitions quoting it."""
    roots = [uuid.UUID(r) for r in scope.branch_roots]
    for r in await conn.fetch(q.TRANSITIONS_INSIDE, roots):
        impact.transitions.append(purge_pb2.TransitionImpact(**dict(r), inside=True))
    quotes = Quotes(scope.texts)
    for r in await conn.fetch(q.TRANSITIONS_AROUND, roots, scope.trees):
        if quotes(r["summary"], r["reason"]):
            impact.transitions.append(
                purge_pb2.TransitionImpact(
                    branch_id=r["branch_id"], revision=r["revision"], conclusion=r["conclusion"]
                )
            )
