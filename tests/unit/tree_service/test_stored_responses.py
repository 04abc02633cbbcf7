"""The stored-response registry held against the descriptors: every string a write's response can
carry is either filled in on replay (and kept out of storage) or said to hold no words a purge or
a revocation forgets; and stripping keeps exactly the rest."""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from mirrortree.v1 import tree_pb2
from tree_service import replays
from tree_service.stored_responses import KEPT, KEPT_WORDS, REFILLED, refilled, stripped

SERVICE = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
WRITES = [
    m
    for m in SERVICE.methods
    if m.client_streaming or "idempotency_key" in m.input_type.fields_by_name
]


def holds_text(field: FieldDescriptor) -> bool:
    if field.type == FieldDescriptor.TYPE_STRING:
        return True
    entry = field.message_type
    return (
        entry is not None
        and entry.GetOptions().map_entry
        and entry.fields_by_name["value"].type == FieldDescriptor.TYPE_STRING
    )


def stored_strings() -> Iterator[tuple[str, str]]:
    """(message, field) of every string a stored write response can hold, outside refilled
    fields, once per message type."""
    seen: set[str] = set()

    def walk(message: Descriptor) -> Iterator[tuple[str, str]]:
        if message.full_name in seen:
            return
        seen.add(message.full_name)
        own = REFILLED.get(message.full_name, ())
        for field in message.fields:
            if field.name in own:
                continue
            if holds_text(field):
                yield message.full_name, field.name
            elif field.message_type is not None and not field.message_type.GetOptions().map_entry:
                yield from walk(field.message_type)

    for method in WRITES:
        yield from walk(method.output_type)


def classified() -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for registry in (KEPT, KEPT_WORDS):
        for message, (fields, why) in registry.items():
            for field in fields:
                assert (message, field) not in found, f"{message}.{field} is listed twice"
                found[(message, field)] = why
    return found


def test_every_string_a_stored_response_can_hold_is_refilled_or_kept_with_a_reason():
    strings = set(stored_strings())
    kept = classified()
    unplaced = sorted(strings - kept.keys())
    assert not unplaced, (
        "place each in tree_service.stored_responses: REFILLED (a replay fills it in) or KEPT "
        f"(why it holds no words to forget): {unplaced}"
    )
    assert not kept.keys() - strings, "an entry names a field no write response holds"


def test_every_refilled_field_exists_and_has_a_loader():
    pool = descriptor_pool.Default()
    for message, fields in REFILLED.items():
        descriptor = pool.FindMessageTypeByName(message)
        assert set(fields) <= set(descriptor.fields_by_name), message
    assert replays.LOADERS.keys() == REFILLED.keys()


def node(text: str) -> tree_pb2.Node:
    return tree_pb2.Node(
        id="n-1",
        text=text,
        reasoning_summary=text,
        evidence=[text],
        citations=[tree_pb2.Citation(node_id="n-0", snapshot=text)],
        revision=3,
    )


def test_stripping_keeps_the_frame_and_drops_the_words_however_deep():
    version = tree_pb2.MainLineVersion(
        id="v-1", version=2, snapshot=[node("the words")], confirmed_by="u-1"
    )
    response = tree_pb2.CanonicalizeResponse(version=version)
    kept = stripped(response)
    assert "the words" not in str(kept)
    assert (kept.version.id, kept.version.version, kept.version.confirmed_by) == ("v-1", 2, "u-1")
    assert response.version.snapshot[0].text == "the words"  # a copy is stripped, not the answer


def test_the_messages_a_replay_fills_are_found_outermost_first():
    response = tree_pb2.AskQuestionResponse(node=node("q"), tree_revision=4)
    assert [m.DESCRIPTOR.name for m in refilled(response)] == ["Node"]
    version = tree_pb2.MainLineVersion(id="v-1", snapshot=[node("a"), node("b")])
    # The snapshot's nodes are the version's: its loader fills them, not the live nodes'.
    found = list(refilled(tree_pb2.CanonicalizeResponse(version=version)))
    assert [m.DESCRIPTOR.name for m in found] == ["MainLineVersion"]
    stored = stripped(tree_pb2.AskQuestionResponse(node=node("q"), tree_revision=4))
    assert (stored.node.id, stored.node.revision, stored.tree_revision) == ("n-1", 3, 4)
