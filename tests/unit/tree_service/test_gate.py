"""The one gate's registries, held to the service's descriptors, and its passage check: every
TreeService RPC is gated or says why not, every request that can name an estimate to pay for
work or a ruling to act on passes the checks for it, and a gated write that skips a check
never commits."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from mirrortree.v1 import tree_pb2
from tree_service import gate
from tree_service.gate import GATED, UNGATED, Check

SERVICE = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
METHODS = {m.name: m for m in SERVICE.methods}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "tree-service.md"
# Requests whose estimate_id is refused outright (INVALID_ARGUMENT naming it): questions are the
# user's words, and no model run is charged for them (tree_service.convert.ungenerated).
NEVER_CHARGED = {"AskQuestion", "EditQuestion"}


def field_names(message: Descriptor | None, seen: frozenset[str] = frozenset()) -> set[str]:
    """Every field name a request can carry, nested messages included."""
    if message is None or message.full_name in seen:
        return set()
    names = set()
    for field in message.fields:
        names.add(field.name)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            names |= field_names(field.message_type, seen | {message.full_name})
    return names


def test_every_rpc_is_gated_or_says_why_not():
    assert not GATED.keys() & UNGATED.keys()
    assert set(METHODS) == GATED.keys() | UNGATED.keys(), (
        f"place {sorted(set(METHODS) - GATED.keys() - UNGATED.keys())} in tree_service/gate.py; "
        f"gone: {sorted((GATED.keys() | UNGATED.keys()) - set(METHODS))}"
    )


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_request_that_can_pay_for_work_passes_the_quota(name):
    if "estimate_id" not in field_names(METHODS[name].input_type):
        return
    if name in GATED:
        assert Check.QUOTA in GATED[name].checks
    elif name not in NEVER_CHARGED:
        assert UNGATED[name] in {gate.ACCOUNTING, gate.READ_ONLY}, (
            f"{name} can name an estimate: gate it with QUOTA"
        )


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_request_that_can_act_on_a_ruling_passes_realm_ruling_and_stops(name):
    if "ruling_id" in field_names(METHODS[name].input_type):
        assert set(GATED[name].checks) == {Check.SAFETY_STOP, Check.REALM, Check.RULING}


def test_every_gated_write_stops_for_a_safety_stop():
    assert all(Check.SAFETY_STOP in passage.checks for passage in GATED.values())


def test_the_docs_list_what_the_gate_checks_for_each_rpc():
    text = DOCS.read_text()
    section = text[text.index("## The gate") :]
    section = section[: section.index("\n## ", 1)]
    for name, passage in GATED.items():
        checks = ", ".join(c.value for c in passage.checks)
        row = f"| `{name}` | {checks} | {passage.how} |"
        assert row in section, f"docs/tree-service.md: the gate's table lacks {row}"
    listed = re.findall(r"^\| `(\w+)` \|", section, re.M)
    assert sorted(listed) == sorted(GATED)


def asks(*checks: Check) -> Any:
    """A write's action that asks the gate `checks` (as the gate's own questions record them)."""

    async def action(conn: Any) -> str:
        gate._ask(*checks)
        return "written"

    return action


async def test_a_gated_write_that_skips_a_check_is_an_error():
    with pytest.raises(RuntimeError, match="AddAnswer wrote without asking the gate: quota"):
        await gate.guarded("AddAnswer", asks(Check.SAFETY_STOP), None)
    with pytest.raises(RuntimeError, match="safety_stop, quota"):
        await gate.guarded("CompareCandidates", asks(), None)
    assert await gate.guarded("AddAnswer", asks(Check.SAFETY_STOP, Check.QUOTA), None)


async def test_an_ungated_write_asks_nothing_and_what_was_asked_stays_with_its_write():
    assert await gate.guarded("AskQuestion", asks(), None) == "written"
    gate._ask(Check.QUOTA)  # outside any write: recorded nowhere
    with pytest.raises(RuntimeError):
        await gate.guarded("StartTask", asks(Check.SAFETY_STOP), None)


async def test_a_claim_with_nothing_to_hand_out_passes_without_a_question():
    async def nothing(conn: Any) -> None:
        gate.nothing_to_admit()

    await gate.guarded("ClaimTask", nothing, None)
