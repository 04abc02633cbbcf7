"""The acts only the user may perform: one table, TreeService's proto (`option
(needs_confirmation)`), from which tree_service takes its checks and against which the docs
are held."""

from __future__ import annotations

import re
from pathlib import Path

from google.protobuf.descriptor import FieldDescriptor

from mirrortree import callers
from mirrortree.fieldpaths import field_at
from mirrortree.v1 import options_pb2, tree_pb2
from tree_service import ownership

ROOT = Path(__file__).resolve().parents[3]
SERVICE = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
K = options_pb2
ROW = re.compile(r"^\| `(\w+)`[^|]*\| `(\w+)` \| `([\w.]+)` \| ([^|]+) \|$")


def documented() -> dict[str, tuple[str, str, str]]:
    """SECURITY.md's table of confirmed RPCs: RPC → (action, user field, subject field)."""
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    table = text.split("| RPC | grant action | user it must name | tree it must name |", 1)[1]
    rows = {}
    for line in table.strip().splitlines()[1:]:
        if not line.startswith("|"):
            break
        found = ROW.match(line)
        assert found is not None, f"a row SECURITY.md's test cannot read: {line}"
        rpc, action, user, tree = found.groups()
        subject = re.findall(r"`([\w.]+)`", tree)[-1]
        rows[rpc] = (action, user, subject)
    return rows


def test_the_confirmed_rpcs_are_read_from_the_proto():
    assert set(callers.CONFIRMED) >= {"Canonicalize", "Purge", "SetQuota", "AcceptObservation"}
    assert callers.CONFIRMED["Canonicalize"] == callers.Confirmed(
        "canonicalize", "confirmation.user_id", "tree_id"
    )


def test_each_confirmed_rpc_names_a_user_field_and_a_subject_whose_tree_can_be_found():
    for name, confirmed in callers.CONFIRMED.items():
        request = SERVICE.methods_by_name[name].input_type
        user = field_at(request, confirmed.user_field)
        assert user.type == FieldDescriptor.TYPE_STRING and not user.is_repeated, name
        subject = field_at(request, confirmed.subject_field)
        kind = ownership.kind_of(subject)
        assert not subject.is_repeated, name
        assert ownership.KINDS[kind].owned, f"{name}: no tree is found from {K.IdKind.Name(kind)}"


def test_every_confirmed_rpc_is_unary():
    """The grant is checked on a call's one request; callers refuses to start otherwise."""
    for name in callers.CONFIRMED:
        method = SERVICE.methods_by_name[name]
        assert not (method.client_streaming or method.server_streaming), name


def test_each_action_is_named_once():
    actions = [c.action for c in callers.CONFIRMED.values()]
    assert len(actions) == len(set(actions))


def test_security_md_lists_exactly_the_confirmed_rpcs_as_the_proto_declares_them():
    expected = {
        name: (c.action, c.user_field, c.subject_field) for name, c in callers.CONFIRMED.items()
    }
    assert documented() == expected


def test_every_rpc_with_a_user_confirmation_field_needs_a_grant():
    """A request carrying a UserConfirmation claims the user's word; only a grant proves it."""
    for method in SERVICE.methods:
        claims = any(
            f.message_type is not None and f.message_type.name == "UserConfirmation"
            for f in method.input_type.fields
        )
        if claims:
            assert method.name in callers.CONFIRMED, method.name
