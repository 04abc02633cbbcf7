"""W3: a user-confirmed canonicalization, projected into the story graph deterministically.

Each main-line version becomes one review result of its *canon scope* (`canon_scope`): a
real-experience version goes to the tree's project (Global when the tree has none); a world's
canon and a rehearsal record go to a scope of their own, named by a reserved project id
(`canon:world-canon:…`, `canon:rehearsal-record:…`), so a read of the project never takes them
for real decisions and a read that names that scope sees them labelled with it. The result holds:

- a confirmed `decision` event whose evidence is a source reference to every node of the
  version (the node text at the revision that was confirmed);
- the main line itself as an entity, at the version's number as its revision;
- for version n > 1, an evidenced `replaces` relation from this event to version n-1's event;
- each fact, relationship or experience stated at the version's nodes that this version put in
  effect (T18, T24: the first version holding its node in the scope its realm needs), as a
  confirmed `leaf_fact` holding the statement, `about` the decision event and citing the
  source reference of the node it was stated at. Nothing else stated there is recorded as
  holding: not a rehearsal statement, not one withdrawn before, not one an earlier version put
  in effect already (that version's projection holds it), not an authorization (confirmed on
  its own, never through a canonicalization).

Ids derive from the version id (the entity's from the tree, scope and world; a fact's from the
version and the commitment), so the projection of one version is always the same objects.
Apart from the entity's, each id is a short prefix and at most two UUIDs, far within the id
limit.
Every id (result and objects) starts with `PREFIX`, which reviews may not record (main-line
versions are immutable: a review may refer to these objects, never rewrite them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from urllib.parse import quote

from mirrortree.scopes import MAX_PROJECT_ID, ScopeValue
from mirrortree.validation import MAX_ID
from tree_service.commitments import KIND_LABELS, StoredCommitment, put_in_effect_by
from tree_service.domain import (
    CanonicalScope,
    EventTimeValue,
    MainLineVersion,
    Node,
    NodeKind,
    ObjectType,
    ReviewResult,
    StoryObject,
)

PHASE = "canonicalization"
SCOPE_LABELS = {
    CanonicalScope.REAL_EXPERIENCE: "real-experience",
    CanonicalScope.WORLD_CANON: "world-canon",
    CanonicalScope.REHEARSAL: "rehearsal-record",
}
SUMMARY_CHARS = 400
PREFIX = "mainline-"
# Project ids starting with this name canon scopes; trees, reviews and preferences may not use it.
CANON_SCOPE_PREFIX = "canon:"
# A rehearsal record is a record that the rehearsal happened, never a decision.
EVENT_KINDS = {
    CanonicalScope.REAL_EXPERIENCE: "decision",
    CanonicalScope.WORLD_CANON: "decision",
    CanonicalScope.REHEARSAL: "milestone",
}


def canon_scope_project(scope: CanonicalScope, world: str, project_id: str | None) -> str | None:
    """The project id of the story-graph scope a main line of `scope` is projected into: None
    for real experience (the tree's own project, or Global), else a reserved id naming the
    canon scope, the tree's project and the world, each percent-encoded so that no two
    (project, world) pairs share one; too long, a SHA-256 of the pair stands for them."""
    if scope is CanonicalScope.REAL_EXPERIENCE:
        return None
    label = SCOPE_LABELS[scope]
    project = quote(project_id, safe="") if project_id else "(global)"
    named = f"{CANON_SCOPE_PREFIX}{label}:{project}"
    if scope is CanonicalScope.WORLD_CANON:
        named = f"{named}:{quote(world, safe='')}"
    if len(named) <= MAX_PROJECT_ID:
        return named
    pair = json.dumps([project_id, world], ensure_ascii=False).encode()
    return f"{CANON_SCOPE_PREFIX}{label}@sha256:{hashlib.sha256(pair).hexdigest()}"


def canon_scope(scope: CanonicalScope, world: str, project_id: str | None) -> ScopeValue:
    """The story-graph scope a main-line version of `scope` is projected into."""
    own = canon_scope_project(scope, world, project_id)
    if own is not None:
        return ScopeValue.of_projects([own])
    return ScopeValue.of_projects([project_id]) if project_id else ScopeValue.global_scope()


RESERVED_PROJECT_ADVICE = (
    f"project ids starting with {CANON_SCOPE_PREFIX!r} are reserved for the canon scopes of "
    "world canon and rehearsal records"
)


def is_reserved_project(project_id: str) -> bool:
    return project_id.startswith(CANON_SCOPE_PREFIX)


def last_entry(snapshot: tuple[Node, ...]) -> str:
    """The text of a snapshot's last node; when that node extends the frozen answers before
    it, the whole answer they make together."""
    if not snapshot:
        return ""
    end = len(snapshot) - 1
    start = end
    while start > 0 and snapshot[start].extends_answer_id == snapshot[start - 1].id:
        start -= 1
    return "".join(node.text for node in snapshot[start : end + 1])


def result_id(version_id: str) -> str:
    return f"{PREFIX}{version_id}"


def memory_id(candidate_id: str) -> str:
    """The confirmed preference an accepted memory candidate becomes (reserved: see PREFIX)."""
    return f"{PREFIX}memory-{candidate_id}"


def event_id(version_id: str) -> str:
    return f"{PREFIX}version-{version_id}"


def line_entity_id(version: MainLineVersion) -> str:
    """The main line's entity: one per (tree, scope, world), within the id limit readers
    enforce. The id names the world when it fits (the ids main lines have always had); a
    longer world name is replaced by its SHA-256, after `@` where a named id has `-`, so a
    digest id never equals the id of a world actually named like a digest."""
    line = f"{PREFIX}{version.tree_id}-{version.scope.value}"
    if not version.world:
        return line
    named = f"{line}-{version.world}"
    if len(named) <= MAX_ID:
        return named
    return f"{line}@sha256:{hashlib.sha256(version.world.encode()).hexdigest()}"


def projection(
    version: MainLineVersion,
    tree_title: str,
    project_id: str | None,
    previous_version_id: str | None,
    stated: Sequence[StoredCommitment] = (),
) -> ReviewResult:
    """The review result of one main-line version. `previous_version_id` is the version it
    replaces when that version's event is in the same scope (else no relation is claimed);
    `stated` are the commitments stated at its nodes, as the version's transaction reads them
    (those it put in effect are recorded as holding)."""
    label = SCOPE_LABELS[version.scope]
    world = f" of world {version.world!r}" if version.world else ""
    line_id = line_entity_id(version)
    refs = [
        StoryObject(
            ObjectType.SOURCE_REFERENCE,
            reference_id(version.id, node.id),
            title=f"message {node.id}",
            body=node.text,
            object_revision=str(node.version if node.kind is NodeKind.QUESTION else 1),
            details={
                "source_type": "message",
                "source_id": node.id,
                "source_version": str(node.version if node.kind is NodeKind.QUESTION else 1),
                "fragment_start": 0,
                "fragment_end": len(node.text),
                "locator": {
                    "project_id": project_id or "",
                    "session_id": version.tree_id,
                    "message_id": node.id,
                    "order": node.ordinal,
                    "role": "user" if node.kind is NodeKind.QUESTION else "assistant",
                    "known": True,
                },
            },
        )
        for node in version.snapshot
    ]
    ref_ids = [r.object_id for r in refs]
    cites = tuple(("cites", ObjectType.SOURCE_REFERENCE.value, r) for r in ref_ids)
    last = last_entry(version.snapshot)
    shown = last if len(last) <= SUMMARY_CHARS else last[:SUMMARY_CHARS] + "…"
    at = EventTimeValue(version.created_at, None, "instant", "canonicalized_at")
    event = StoryObject(
        ObjectType.EVENT,
        event_id(version.id),
        title=f"Confirmed {label} main line v{version.version}{world}: {tree_title}",
        body=(
            f"{version.confirmed_by} confirmed {len(version.snapshot)} node(s) of "
            f"{tree_title!r} as version {version.version} of its {label} main line{world}. "
            f"Last node: {shown}"
        ),
        kind=EVENT_KINDS[version.scope],
        confirmation_state="confirmed",
        event_time=at,
        details={
            "entity_ids": [line_id],
            "source_reference_ids": ref_ids,
            "main_line_version_id": version.id,
            "tree_id": version.tree_id,
            "canonical_scope": version.scope.value,
            "canon_scope_label": label,
            "project_id": project_id or "",
            "world": version.world,
            "version": version.version,
            "node_ids": list(version.node_ids),
            "confirmed_by": version.confirmed_by,
        },
        links=(("involves", ObjectType.ENTITY.value, line_id), *cites),
    )
    line = StoryObject(
        ObjectType.ENTITY,
        line_id,
        title=f"{label} main line{world} of {tree_title}",
        body=f"Version {version.version}, confirmed by {version.confirmed_by}. Last node: {shown}",
        object_revision=str(version.version),
        confirmation_state="confirmed",
        details={"source_reference_ids": ref_ids},
        links=cites,
    )
    objects = [*refs, event, line]
    if previous_version_id is not None:
        old = event_id(previous_version_id)
        objects.append(
            StoryObject(
                ObjectType.RELATION,
                f"{PREFIX}replaces-{version.id}",
                title=f"event {event.object_id} replaces event {old}",
                body=(
                    f"The user confirmed version {version.version} of this main line, which "
                    f"replaces version {version.version - 1}."
                ),
                kind="replaces",
                confirmation_state="confirmed",
                event_time=EventTimeValue(version.created_at, None, "instant", "effective_at"),
                details={
                    "relation_kind": "replaces",
                    "from": {"type": "event", "id": event.object_id, "revision": None},
                    "to": {"type": "event", "id": old, "revision": None},
                    "reason": f"user-confirmed main-line version {version.version}",
                    "source_reference_ids": ref_ids,
                    "evidenced": True,
                },
                links=(
                    ("replaces.from", "event", event.object_id),
                    ("replaces.to", "event", old),
                    *cites,
                ),
            )
        )
    objects += held_facts(version, stated, event.object_id, line.title)
    nodes_at = [n.created_at for n in version.snapshot]
    return ReviewResult(
        result_id=result_id(version.id),
        scope=canon_scope(version.scope, version.world, project_id),
        phase=PHASE,
        covered_from=min(nodes_at) if nodes_at else None,
        covered_to=max(nodes_at) if nodes_at else None,
        review_generated_at=version.created_at,
        objects=tuple(objects),
        excluded_source_types=(),
        coverage_gaps=(),
    )


def reference_id(version_id: str, node_id: str) -> str:
    """The source reference of a version's node (the message at the revision confirmed)."""
    return f"{PREFIX}{version_id}-{node_id}"


def fact_id(version_id: str, commitment_id: str) -> str:
    return f"{PREFIX}{version_id}-fact-{commitment_id}"


def held_facts(
    version: MainLineVersion,
    stated: Sequence[StoredCommitment],
    decision_id: str,
    line_title: str,
) -> list[StoryObject]:
    """The statements at the version's nodes that this version put in effect, in the order
    they were stated, each a confirmed leaf fact about the decision and citing its node. The
    statement is the fact's text alone: a purge retracts a fact citing a purged message by
    replacing its text, so no title or detail repeats the user's words."""
    held = {node.id for node in version.snapshot}
    facts = []
    for c in stated:
        effect = put_in_effect_by(c, version.id)
        if effect is None or c.node_id not in held:
            continue
        ref_id = reference_id(version.id, c.node_id)
        facts.append(
            StoryObject(
                ObjectType.LEAF_FACT,
                fact_id(version.id, c.id),
                title=f"{KIND_LABELS[c.kind]} in effect through the {line_title}",
                body=c.statement,
                kind=c.kind.value,
                confirmation_state="confirmed",
                details={
                    "about": [{"type": ObjectType.EVENT.value, "id": decision_id}],
                    "source_reference_ids": [ref_id],
                    "commitment_id": c.id,
                    "commitment_kind": c.kind.value,
                    "effective_scope": effect.scope,
                    "main_line_version_id": version.id,
                    "node_id": c.node_id,
                    "stated_by": c.stated_by,
                },
                links=(
                    ("about", ObjectType.EVENT.value, decision_id),
                    ("cites", ObjectType.SOURCE_REFERENCE.value, ref_id),
                ),
            )
        )
    return facts
