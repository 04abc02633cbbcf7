"""Whose records a TreeService request names: the one registry of the rule that a host app
limited to some owners (mirrortree.callers) reaches only their trees' records.

Every id field of a request says in the proto which kind of record it names
(`[(names) = ID_KIND_…]`, protos/mirrortree/v1/options.proto). KINDS says, for each kind, the
table whose `id` it is and whether a tree owns those records; the view `owned_records`
(migration 0038) maps the id of every record a tree owns to its tree. Tests hold the three to
each other and to the catalog: an id field without a kind, a kind without an entry, an owned
table missing from the view, or a table with ids no entry accounts for fails the suite.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from mirrortree.fieldpaths import field_at, value_at
from mirrortree.v1 import options_pb2


@dataclass(frozen=True)
class Kind:
    """What the ids of one IdKind are."""

    table: str | None  # the table whose `id` column they are; None: no table holds them
    owned: bool  # records of a tree, so the tree's owner owns them
    why: str = ""  # for a kind no tree owns: why no owner limits it


K = options_pb2
KINDS: dict[int, Kind] = {
    K.ID_KIND_TREE: Kind("trees", owned=True),
    K.ID_KIND_NODE: Kind("nodes", owned=True),
    K.ID_KIND_MAIN_LINE_VERSION: Kind("main_line_versions", owned=True),
    K.ID_KIND_ARBITER_RULING: Kind("arbiter_rulings", owned=True),
    K.ID_KIND_COMMITMENT: Kind("commitments", owned=True),
    K.ID_KIND_CONTEXT_VERSION: Kind("context_versions", owned=True),
    K.ID_KIND_CITATION_AUTHORIZATION: Kind("citation_authorizations", owned=True),
    K.ID_KIND_CANON_INVITATION: Kind("canon_invitations", owned=True),
    K.ID_KIND_CANON_CANDIDATE: Kind("canon_candidates", owned=True),
    K.ID_KIND_ESTIMATE: Kind("estimates", owned=True),
    K.ID_KIND_TASK: Kind("tasks", owned=True),
    # A message source's id is its node's; another source's matches no record and adds no owner.
    K.ID_KIND_SOURCE: Kind("nodes", owned=True),
    # The field holds the owner itself (a new tree's, a quota's).
    K.ID_KIND_OWNER: Kind(None, owned=True),
    K.ID_KIND_PROJECT: Kind(
        None, owned=False, why="a project is a story-graph scope that trees of any owner name"
    ),
    K.ID_KIND_STORY_OBJECT: Kind(
        None, owned=False, why="a story-graph object is named within its review's scope"
    ),
    K.ID_KIND_REVIEW_RESULT: Kind(
        None, owned=False, why="a review result belongs to the scope it was recorded in"
    ),
    K.ID_KIND_PREFERENCE: Kind(
        "preferences", owned=False, why="a preference belongs to its scope (global or a project)"
    ),
    K.ID_KIND_CAPABILITY: Kind(
        "capabilities", owned=False, why="an app-wide switch, which only an operator may set"
    ),
    K.ID_KIND_USER: Kind(
        None, owned=False, why="names a person; the confirmation grant, not an owner, binds it"
    ),
    K.ID_KIND_WORKER: Kind(
        None, owned=False, why="names a worker process; the worker role binds what it may do"
    ),
    K.ID_KIND_ATTACHMENT: Kind(
        None, owned=False, why="named within its node, whose own id carries the owner"
    ),
    K.ID_KIND_DOCUMENT: Kind(
        None, owned=False, why="names the host app's document; its reference's scope binds it"
    ),
}

# Tables with an `id` column that no request names, and why: a new one fails the catalog test
# until it is here or in KINDS.
UNNAMED_TABLES = {
    "bindings": "a binding is presented by its token (to graph_service), never named by its id",
    "effects": "RecordRealAction answers with the effect and ListEffects lists a tree's",
    "purges": "a purge is reached through the node its branch was rooted at",
}

OWNERS_OF = """
SELECT DISTINCT t.owner FROM owned_records r JOIN trees t ON t.id = r.tree_id
WHERE r.id = any($1::uuid[])
"""

TREE_OF = "SELECT tree_id::text FROM owned_records WHERE id = $1"


# The generated stubs type an extension as a plain FieldDescriptor.
NAMES: Any = options_pb2.names


def kind_of(field: FieldDescriptor) -> int:
    """The IdKind a field is annotated with (ID_KIND_UNSPECIFIED when it is not)."""
    kind: int = field.GetOptions().Extensions[NAMES]
    return kind


@functools.cache
def _fields(message: Descriptor) -> tuple[tuple[tuple[FieldDescriptor, int], ...], frozenset[str]]:
    """Of `message`: its fields that hold tree-owned ids or owners, with their kinds; and the
    names of its message fields, which may hold more."""
    owned, nested = [], []
    for field in message.fields:
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            entry = field.message_type
            if entry is not None and not entry.GetOptions().map_entry:
                nested.append(field.name)
        elif KINDS.get(kind_of(field), Kind(None, False)).owned:
            owned.append((field, kind_of(field)))
    return tuple(owned), frozenset(nested)


def named(request: Message) -> Iterator[tuple[int, str]]:
    """(kind, value) of every tree-owned id and owner `request` names, however deep."""
    owned, nested = _fields(request.DESCRIPTOR)
    for field, kind in owned:
        values = getattr(request, field.name)
        yield from ((kind, v) for v in (values if field.is_repeated else [values]) if v)
    for field, value in request.ListFields():  # only the message fields that are set
        if field.name in nested:
            for item in value if field.is_repeated else [value]:
                yield from named(item)


class TreeOwners:
    """Looks up the owners of the records a request names, on the primary."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def __call__(self, request: Message) -> set[str]:
        """The owners of the trees whose records `request` names (ids that match nothing, or
        are not UUIDs, add none: the RPC itself answers for them)."""
        ids: set[uuid.UUID] = set()
        owners: set[str] = set()
        for kind, value in named(request):
            if kind == options_pb2.ID_KIND_OWNER:
                owners.add(value)
                continue
            try:
                ids.add(uuid.UUID(value))
            except ValueError:
                continue
        if ids:
            rows = await self._pool.fetch(OWNERS_OF, list(ids))
            owners.update(row["owner"] for row in rows)
        return owners

    async def subject_of(self, request: Message, path: str) -> str:
        """What a user-confirmation grant for `request` must name as its tree: the tree of the
        record the field at `path` names, that tree itself, or "owner:<owner>" for an owner;
        "" when the id matches nothing (the RPC answers NOT_FOUND for it)."""
        value = str(value_at(request, path))
        kind = kind_of(field_at(request.DESCRIPTOR, path))
        if kind == options_pb2.ID_KIND_OWNER:
            return f"owner:{value}"
        if kind == options_pb2.ID_KIND_TREE:
            return value
        try:
            record = uuid.UUID(value)
        except ValueError:
            return ""
        tree_id = await self._pool.fetchval(TREE_OF, record)
        return str(tree_id) if tree_id is not None else ""
