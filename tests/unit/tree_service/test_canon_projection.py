"""The ids a main-line version is projected under: reserved, stable, within the id limit, and
one main-line entity per (tree, scope, world)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from mirrortree.validation import MAX_ID
from tree_service import canon_projection
from tree_service.domain import CanonicalScope, MainLineVersion, Node, NodeKind, Realm

TREE = str(uuid.uuid4())
AT = datetime(2026, 10, 1, tzinfo=UTC)
# The longest world name that still fits in a named id (`mainline-<tree>-world_canon-<world>`).
LONGEST_NAMED = MAX_ID - len(f"mainline-{TREE}-world_canon-")


def version(world: str = "", scope: CanonicalScope = CanonicalScope.WORLD_CANON, n: int = 2):
    nodes = tuple(
        Node(
            id=str(uuid.uuid4()),
            tree_id=TREE,
            parent_id=None,
            kind=kind,
            realm=Realm.WORLD if world else Realm.REAL,
            text="text",
            revision=1,
            ordinal=i,
            created_at=AT,
            world=world or None,
        )
        for i, kind in enumerate((NodeKind.QUESTION, NodeKind.ANSWER))
    )
    return MainLineVersion(
        id=str(uuid.uuid4()),
        tree_id=TREE,
        scope=scope,
        world=world,
        version=n,
        node_ids=tuple(node.id for node in nodes),
        snapshot=nodes,
        confirmed_by="u1",
        created_at=AT,
        candidates=(),
        replaces_version_id=None,
    )


@pytest.mark.parametrize("world", ["", "Arden", "界" * 200, "w" * 200])
def test_every_projected_id_is_reserved_and_within_the_id_limit(world):
    scope = CanonicalScope.WORLD_CANON if world else CanonicalScope.REAL_EXPERIENCE
    result = canon_projection.projection(version(world, scope), "t" * 500, "p", str(uuid.uuid4()))
    ids = [result.result_id, *(o.object_id for o in result.objects)]
    assert {o.object_type.value for o in result.objects} == {
        "source_reference",
        "event",
        "entity",
        "relation",
    }
    assert all(i.startswith(canon_projection.PREFIX) and len(i) <= MAX_ID for i in ids), ids


def test_main_line_ids_that_fit_name_their_world_as_before():
    assert canon_projection.line_entity_id(version(scope=CanonicalScope.REHEARSAL)) == (
        f"mainline-{TREE}-rehearsal"
    )
    world = "a" * LONGEST_NAMED
    assert canon_projection.line_entity_id(version(world)) == f"mainline-{TREE}-world_canon-{world}"


def test_long_world_names_get_one_stable_distinct_digest_id_each():
    long_a, long_b = "a" * (LONGEST_NAMED + 1), "a" * LONGEST_NAMED + "b"
    first, again = version(long_a, n=1), version(long_a, n=2)
    ids = {
        canon_projection.line_entity_id(first),
        canon_projection.line_entity_id(version(long_b)),
    }
    assert canon_projection.line_entity_id(again) == canon_projection.line_entity_id(first)
    assert len(ids) == 2
    # A world whose name is what a digest id ends with still gets its own (named) id.
    digest_id = canon_projection.line_entity_id(first)
    lookalike = digest_id.removeprefix(f"mainline-{TREE}-world_canon@")
    assert canon_projection.line_entity_id(version(lookalike)) != digest_id
    assert len(digest_id) <= MAX_ID
