"""The owners of the trees a TreeService request refers to, so that a host app limited to some
owners (mirrortree.callers) reaches only their trees.

A request names trees directly (tree_id, session_id), through their nodes (question_id,
answer_id, leaf_node_id, node_ids, ...) or their main-line versions (version_id), or names an
owner outright (CreateTree.owner). Every id-like field is collected from the message, however
deep; ids that are not UUIDs or match nothing add no owner (the RPC itself answers for them).
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

OWNERS_OF = """
SELECT t.owner FROM trees t WHERE t.id = any($1::uuid[])
UNION
SELECT t.owner FROM nodes n JOIN trees t ON t.id = n.tree_id WHERE n.id = any($1::uuid[])
UNION
SELECT t.owner FROM main_line_versions v JOIN trees t ON t.id = v.tree_id
WHERE v.id = any($1::uuid[])
UNION
SELECT t.owner FROM trees t WHERE t.id IN (
    SELECT tree_id FROM arbiter_rulings WHERE id = any($1::uuid[])
    UNION ALL SELECT tree_id FROM commitments WHERE id = any($1::uuid[])
    UNION ALL SELECT tree_id FROM context_versions WHERE id = any($1::uuid[])
    UNION ALL SELECT tree_id FROM citation_authorizations WHERE id = any($1::uuid[])
    UNION ALL SELECT tree_id FROM canon_invitations WHERE id = any($1::uuid[])
    UNION ALL SELECT v.tree_id FROM canon_candidates c JOIN main_line_versions v
              ON v.id = c.version_id WHERE c.id = any($1::uuid[])
    UNION ALL SELECT tree_id FROM estimates WHERE id = any($1::uuid[])
    UNION ALL SELECT tree_id FROM tasks WHERE id = any($1::uuid[])
)
"""

# The tree of a commitment, citation authorization, canon invitation or canon candidate, for
# requests that name no tree.
TREE_OF = """
SELECT tree_id FROM commitments WHERE id = $1
UNION ALL SELECT tree_id FROM citation_authorizations WHERE id = $1
UNION ALL SELECT tree_id FROM canon_invitations WHERE id = $1
UNION ALL SELECT v.tree_id FROM canon_candidates c JOIN main_line_versions v ON v.id = c.version_id
WHERE c.id = $1
UNION ALL SELECT tree_id FROM estimates WHERE id = $1
UNION ALL SELECT tree_id FROM tasks WHERE id = $1
LIMIT 1
"""


# Requests whose `owner` field names an owner outright (a new tree's, or a quota's).
OWNER_NAMING = frozenset({"CreateTreeRequest", "SetQuotaRequest", "GetQuotaRequest"})


def _ids(message: Message, found: set[uuid.UUID], owners: set[str]) -> None:
    creating = message.DESCRIPTOR.name in OWNER_NAMING
    for field, value in message.ListFields():
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            entry = field.message_type
            if entry is not None and entry.GetOptions().map_entry:
                continue
            for item in value if field.is_repeated else [value]:
                _ids(item, found, owners)
        elif field.type == FieldDescriptor.TYPE_STRING:
            if field.name == "owner" and creating:
                owners.add(value)
            elif field.name == "id" or field.name.endswith(("_id", "_ids")):
                for text in value if field.is_repeated else [value]:
                    try:
                        found.add(uuid.UUID(text))
                    except ValueError:
                        continue


class TreeOwners:
    """Looks up the owners a request's trees belong to, on the primary."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def __call__(self, request: Any) -> set[str]:
        found: set[uuid.UUID] = set()
        owners: set[str] = set()
        _ids(request, found, owners)
        if found:
            rows = await self._pool.fetch(OWNERS_OF, list(found))
            owners.update(row["owner"] for row in rows)
        return owners

    async def tree_of(self, request: Any) -> str:
        """The tree a request acts on: its tree_id, or the tree of the record it names."""
        named = str(getattr(request, "tree_id", ""))
        if named:
            return named
        for field in (
            "commitment_id",
            "authorization_id",
            "invitation_id",
            "candidate_id",
            "estimate_id",
            "task_id",
        ):
            try:
                record = uuid.UUID(str(getattr(request, field, "")))
            except ValueError:
                continue
            tree_id = await self._pool.fetchval(TREE_OF, record)
            if tree_id is not None:
                return str(tree_id)
        return ""
