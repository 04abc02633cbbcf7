"""Requests of any gRPC method, generated from its message descriptor, for bad-input fuzzing.

Every field is filled (or left unset) from the weird values of `tests.tree_service.fuzzing`:
odd and over-long strings, real ids of a small conversation, extreme and negative numbers,
unknown enum values, NaN, nested messages a few levels deep, short repeated fields and maps.
The number of examples per method is FUZZ_EXAMPLES (a small fixed budget by default; `make
fuzz` runs many more, with FUZZ_RANDOM=1 for fresh examples each run).
"""

from __future__ import annotations

import math
import os
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mirrortree.v1 import common_pb2
from tests.tree_service.fuzzing import KEYS, TIMES, enums, ints, strings

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))

BUDGET = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("FUZZ_RANDOM", "") == "",
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Revisions that can never match a real one: a generated request must not switch the shared
# app or capability off under the other tests (the per-RPC fuzz tests cover real revisions).
UNMATCHABLE_REVISION = st.one_of(st.integers(-3, 0), st.integers(10**12, 2**63 - 1))

MAX_DEPTH = 3

_SIGNED = {
    FieldDescriptor.TYPE_INT32: 32,
    FieldDescriptor.TYPE_SINT32: 32,
    FieldDescriptor.TYPE_SFIXED32: 32,
    FieldDescriptor.TYPE_INT64: 64,
    FieldDescriptor.TYPE_SINT64: 64,
    FieldDescriptor.TYPE_SFIXED64: 64,
}
_UNSIGNED = {
    FieldDescriptor.TYPE_UINT32: 32,
    FieldDescriptor.TYPE_FIXED32: 32,
    FieldDescriptor.TYPE_UINT64: 64,
    FieldDescriptor.TYPE_FIXED64: 64,
}


def documented_reasons() -> frozenset[str]:
    """Every ErrorInfo.reason ErrorReason writes down ("invalid_argument", "stale_cursor", …)."""
    names = common_pb2.ErrorReason.DESCRIPTOR.values_by_name
    return frozenset(
        name.lower().removesuffix("_reason") for name in names if name != "ERROR_REASON_UNSPECIFIED"
    )


def _scalar(field: FieldDescriptor, ids: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        if field.name == "idempotency_key":
            return KEYS
        if field.name.endswith(("_at", "_time", "start", "end", "from", "to")):
            return st.one_of(TIMES, strings())
        return st.one_of(ids, strings())
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.one_of(st.sampled_from([0.0, -1.0, math.nan, math.inf, -math.inf]), st.floats())
    if kind == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None
        return enums([v.number for v in enum.values])
    if field.name == "expected_revision":
        return UNMATCHABLE_REVISION
    if kind in _SIGNED:
        return ints(_SIGNED[kind])
    if kind in _UNSIGNED:
        top = 2 ** _UNSIGNED[kind] - 1
        return st.one_of(st.sampled_from([0, 1, top, top // 2 + 1]), st.integers(0, top))
    raise AssertionError(f"no strategy for field type {kind} of {field.full_name}")


def messages(
    descriptor: Descriptor, ids: st.SearchStrategy[str], depth: int = 0
) -> st.SearchStrategy[Message]:
    """Messages of `descriptor` with a random subset of fields set to weird values."""
    cls = GetMessageClass(descriptor)
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        value = _field(field, ids, depth)
        if value is not None:
            parts[field.name] = st.one_of(st.none(), value)

    def build(values: dict[str, Any]) -> Message:
        message = cls()
        for name, value in values.items():
            if value is None:
                continue
            target = getattr(message, name)
            field = descriptor.fields_by_name[name]
            if _is_map(field):
                for key, item in value.items():
                    if isinstance(item, Message):
                        target[key].CopyFrom(item)
                    else:
                        target[key] = item
            elif field.is_repeated:
                if field.type == FieldDescriptor.TYPE_MESSAGE:
                    for item in value:
                        target.add().CopyFrom(item)
                else:
                    target.extend(value)
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                target.CopyFrom(value)
            else:
                setattr(message, name, value)
        return message

    return st.fixed_dictionaries({}, optional=parts).map(build)


def _message_of(field: FieldDescriptor) -> Descriptor:
    message = field.message_type
    assert message is not None, field.full_name
    return message


def _is_map(field: FieldDescriptor) -> bool:
    return (
        field.type == FieldDescriptor.TYPE_MESSAGE
        and field.is_repeated
        and bool(_message_of(field).GetOptions().map_entry)
    )


def _field(
    field: FieldDescriptor, ids: st.SearchStrategy[str], depth: int
) -> st.SearchStrategy[Any] | None:
    if _is_map(field):
        entry = _message_of(field)
        key = _scalar(entry.fields_by_name["key"], ids)
        value_field = entry.fields_by_name["value"]
        value = _field(value_field, ids, depth)
        return None if value is None else st.dictionaries(key, value, max_size=2)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if depth >= MAX_DEPTH:
            return None
        one = messages(_message_of(field), ids, depth + 1)
    else:
        one = _scalar(field, ids)
    if field.is_repeated:
        return st.lists(one, max_size=2)
    return one


def requests(method: MethodDescriptor, ids: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """One request, or for a client-streaming method a short list of them."""
    one = messages(method.input_type, ids)
    if method.client_streaming:
        return st.lists(one, min_size=0, max_size=4)
    return one
