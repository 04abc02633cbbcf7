"""A stored response's words, filled in from the current state when the write is replayed.

Stored responses keep no words a purge or a revocation must forget (tree_service.stored_responses
strips them); a replay of the write reads each record the response names as it is now and fills
its words back in. So a retry after a purge or a revocation gets blanks and tombstones where the
words were, and any other retry the words as written (they never change otherwise). One loader
per message type of REFILLED reads its records by key through the aggregate that owns them and
renders them as that aggregate's reads do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mirrortree.v1 import costs_pb2, tree_pb2
from tree_service import convert, rules
from tree_service.canon.messages import candidate_to_proto, invitation_to_proto
from tree_service.citations.grants import without_revoked
from tree_service.context_assembly.messages import context_to_proto, summary_to_proto
from tree_service.errors import NotFound
from tree_service.ingestion.messages import preference_to_proto
from tree_service.lifecycle.messages import branch_to_proto
from tree_service.lifecycle.transplant_rpc import origin_to_proto
from tree_service.realms.messages import commitment_to_proto, effect_to_proto, ruling_to_proto
from tree_service.stored_responses import REFILLED, refilled
from tree_service.stores import Stores
from tree_service.tasks.messages import task_to_proto


@dataclass(frozen=True)
class Loader:
    """How the current form of one message type is read: the key a message names, and a read
    of the messages (all of that type) answering key → current message of the same type."""

    key: Callable[[Any], Hashable]
    read: Callable[[Stores, Sequence[Any]], Awaitable[dict[Hashable, Message]]]


async def _nodes(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    found = await stores.nodes.get_nodes([m.id for m in messages])
    nodes = await without_revoked(stores.primary.pool, list(found.values()))
    return {n.id: convert.node_to_proto(n) for n in nodes}


async def _comparisons(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    found = await stores.nodes.get_nodes([m.node_id for m in messages])
    return {
        node_id: costs_pb2.CompareCandidatesResponse(comparison=comparison)
        for node_id, node in found.items()
        if (comparison := convert.comparison_to_proto(node)) is not None
    }


async def _snapshots(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    current: dict[Hashable, Message] = {}
    for message in messages:
        if message.snapshot_omitted:  # too large for its response: it stays out on replay too
            continue
        nodes, _ = await stores.main_lines.snapshot(message.id, 0, rules.MAX_CANON_NODES)
        current[message.id] = tree_pb2.MainLineVersion(
            snapshot=[convert.node_to_proto(n) for n in nodes]
        )
    return current


async def _origins(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    return {
        m.tree_id: origin_to_proto(await stores.transplants.origin(m.tree_id)) for m in messages
    }


async def _contexts(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    return {
        m.context_version_id: context_to_proto(
            await stores.contexts.get_version(m.context_version_id)
        )
        for m in messages
    }


async def _summaries(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    current: dict[Hashable, Message] = {}
    for m in messages:
        summary = await stores.contexts.summary(m.subject, m.version)
        if summary is not None:  # a purge deleted it: its words stay out
            current[(m.subject, m.version)] = summary_to_proto(summary)
    return current


async def _commitments(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    found = await stores.realms.commitments([m.id for m in messages])
    return {c.id: commitment_to_proto(c) for c in found}


async def _rulings(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    return {r.id: ruling_to_proto(r) for r in await stores.realms.rulings([m.id for m in messages])}


async def _effects(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    return {e.id: effect_to_proto(e) for e in await stores.realms.effects([m.id for m in messages])}


async def _invitations(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    found = await stores.canon_reviews.invitations([m.id for m in messages])
    return {i.id: invitation_to_proto(i) for i in found}


async def _candidates(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    found = await stores.canon_reviews.candidates([m.id for m in messages])
    return {c.id: candidate_to_proto(c) for c in found}


async def _branches(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    return {
        m.node_id: branch_to_proto(await stores.lifecycle.get_branch(m.node_id)) for m in messages
    }


async def _preferences(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    found = await stores.ingestion.preferences([m.id for m in messages])
    return {p.preference_id: preference_to_proto(p) for p in found}


async def _tasks(stores: Stores, messages: Sequence[Any]) -> dict[Hashable, Message]:
    current: dict[Hashable, Message] = {}
    for m in messages:
        task, _ = await stores.tasks.get(m.id, reports=False)
        current[m.id] = task_to_proto(task)
    return current


def _id(message: Any) -> Hashable:
    key: str = message.id
    return key


LOADERS: dict[str, Loader] = {
    "mirrortree.v1.Node": Loader(_id, _nodes),
    "mirrortree.v1.CompareCandidatesResponse": Loader(lambda m: m.node_id, _comparisons),
    "mirrortree.v1.MainLineVersion": Loader(_id, _snapshots),
    "mirrortree.v1.TransplantOrigin": Loader(lambda m: m.tree_id, _origins),
    "mirrortree.v1.AssembleContextResponse": Loader(lambda m: m.context_version_id, _contexts),
    "mirrortree.v1.ContextSummary": Loader(lambda m: (m.subject, m.version), _summaries),
    "mirrortree.v1.Commitment": Loader(_id, _commitments),
    "mirrortree.v1.ArbiterRuling": Loader(_id, _rulings),
    "mirrortree.v1.Effect": Loader(_id, _effects),
    "mirrortree.v1.CanonInvitation": Loader(_id, _invitations),
    "mirrortree.v1.CanonCandidate": Loader(_id, _candidates),
    "mirrortree.v1.Branch": Loader(lambda m: m.node_id, _branches),
    "mirrortree.v1.Preference": Loader(_id, _preferences),
    "mirrortree.v1.Task": Loader(_id, _tasks),
}


def _copy(target: Message, source: Message, name: str) -> None:
    field = target.DESCRIPTOR.fields_by_name[name]
    target.ClearField(name)
    if field.is_repeated:
        getattr(target, name).extend(getattr(source, name))
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        if source.HasField(name):
            getattr(target, name).CopyFrom(getattr(source, name))
    else:
        setattr(target, name, getattr(source, name))


class Replays:
    """Fills a replayed response's words in from the current state."""

    def __init__(self, stores: Stores) -> None:
        self._stores = stores

    async def __call__(self, response: Message) -> None:
        pending: dict[str, list[Message]] = {}
        for message in refilled(response):
            pending.setdefault(message.DESCRIPTOR.full_name, []).append(message)
        for name, messages in pending.items():
            loader = LOADERS[name]
            try:
                current = await loader.read(self._stores, messages)
            except NotFound:  # gone since: the words stay out
                current = {}
            for message in messages:
                found = current.get(loader.key(message))
                for field in REFILLED[name]:
                    if found is None:
                        message.ClearField(field)
                    else:
                        _copy(message, found, field)
