"""The ownership registry held against the protos: every id a TreeService request can carry says
which kind of record it names, and every kind says whose it is (the catalog and the RPCs are
held to it in tests/tree_service/test_ownership.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from mirrortree.fieldpaths import field_at
from mirrortree.v1 import costs_pb2, options_pb2, tasks_pb2, tree_pb2
from tree_service import ownership

SERVICE = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
K = options_pb2


def request_fields() -> Iterator[tuple[str, FieldDescriptor]]:
    """Every field of every TreeService request, however deep, once per message type."""
    seen: set[str] = set()

    def walk(message: Descriptor) -> Iterator[tuple[str, FieldDescriptor]]:
        if message.full_name in seen:
            return
        seen.add(message.full_name)
        for field in message.fields:
            yield f"{message.full_name}.{field.name}", field
            entry = field.message_type
            if entry is not None and not entry.GetOptions().map_entry:
                yield from walk(entry)

    for method in SERVICE.methods:
        yield from walk(method.input_type)


def names_a_record(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_STRING and (
        field.name in ("id", "owner") or field.name.endswith(("_id", "_ids"))
    )


FIELDS = dict(request_fields())


def test_every_id_field_of_a_request_says_which_kind_of_record_it_names():
    unannotated = [
        name
        for name, field in FIELDS.items()
        if names_a_record(field) and ownership.kind_of(field) == K.ID_KIND_UNSPECIFIED
    ]
    assert not unannotated, (
        "annotate each with [(names) = ID_KIND_…] (protos/mirrortree/v1/options.proto): "
        + ", ".join(unannotated)
    )


def test_only_string_fields_are_annotated():
    wrong = [
        name
        for name, field in FIELDS.items()
        if ownership.kind_of(field) and field.type != FieldDescriptor.TYPE_STRING
    ]
    assert not wrong


def test_every_kind_is_in_the_registry_and_one_no_tree_owns_says_why():
    kinds = {v.number for v in K.IdKind.DESCRIPTOR.values} - {K.ID_KIND_UNSPECIFIED}
    assert kinds == ownership.KINDS.keys()
    for kind, entry in ownership.KINDS.items():
        name = K.IdKind.Name(kind)
        if entry.owned:
            assert entry.table or kind == K.ID_KIND_OWNER, f"{name}: which table holds it?"
            assert not entry.why, f"{name} is owned; `why` is for kinds no tree owns"
        else:
            assert entry.why, f"{name}: say why no tree owner limits it"


def test_the_ids_a_request_names_are_read_by_kind_however_deep():
    request = tree_pb2.AskQuestionRequest(
        tree_id="t-1",
        parent_id="n-1",
        conditions=tree_pb2.RunConditions(estimate_id="e-1"),
        citations=[tree_pb2.Citation(node_id="n-2", authorization_id="a-1")],
        attachments=[tree_pb2.Attachment(id="attachment-1")],
    )
    assert sorted(ownership.named(request)) == sorted(
        [
            (K.ID_KIND_TREE, "t-1"),
            (K.ID_KIND_NODE, "n-1"),
            (K.ID_KIND_ESTIMATE, "e-1"),
            (K.ID_KIND_NODE, "n-2"),
            (K.ID_KIND_CITATION_AUTHORIZATION, "a-1"),
        ]
    )  # an attachment's id is the caller's name within its node: no tree owns it
    assert list(ownership.named(costs_pb2.GetQuotaRequest(owner="bob"))) == [
        (K.ID_KIND_OWNER, "bob")
    ]
    assert list(ownership.named(tasks_pb2.ClaimTaskRequest(worker_id="w-1"))) == []


@pytest.mark.parametrize(
    ("message", "path", "kind"),
    [
        (tree_pb2.CanonicalizeRequest, "confirmation.user_id", K.ID_KIND_USER),
        (tree_pb2.CanonicalizeRequest, "confirmation.invitation_id", K.ID_KIND_CANON_INVITATION),
        (costs_pb2.SetQuotaRequest, "owner", K.ID_KIND_OWNER),
    ],
)
def test_a_field_path_leads_to_its_field(message, path, kind):
    assert ownership.kind_of(field_at(message.DESCRIPTOR, path)) == kind
