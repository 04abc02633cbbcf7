"""JSON Schemas of proto request messages, derived from their descriptors.

A tool's input schema takes its property names, types, enum values, repetition and nesting
from the request message, and from a table only what the proto cannot say: limits, defaults
and the description that tells a model when and how to use the field. Every field of the
message must be in the table or withheld by name, and every table entry must name a field,
so a proto change the gateway does not follow fails as soon as the schema is built.

Enum values are offered as lower-case names, renamed where the proto's name would mislead.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

# Enum values whose name in the tools differs from the proto's, both ways, so that what an
# answer lists (available_read_kinds) is what a call accepts (read_kind).
# Validity states and coverage bases lose the prefix that keeps them unique in the proto
# package: the contract's words are `current`, `superseded`, `disputed`, `unknown`, and
# `interval`, `counts`, `unknown`.
TOOL_ENUM_NAMES: dict[tuple[str, str], str] = {
    ("mirrortree.v1.ReadKind", "CURRENT_CONTENT"): "current",
    ("mirrortree.v1.ValidityState", "VALIDITY_UNKNOWN"): "unknown",
    ("mirrortree.v1.ValidityState", "VALIDITY_CURRENT"): "current",
    ("mirrortree.v1.ValidityState", "VALIDITY_SUPERSEDED"): "superseded",
    ("mirrortree.v1.ValidityState", "VALIDITY_DISPUTED"): "disputed",
    ("mirrortree.v1.CoverageBasis", "COVERAGE_INTERVAL"): "interval",
    ("mirrortree.v1.CoverageBasis", "COVERAGE_COUNTS"): "counts",
    ("mirrortree.v1.CoverageBasis", "COVERAGE_UNKNOWN"): "unknown",
}
PROTO_ENUM_NAMES: dict[tuple[str, str], str] = {
    (enum, tool_name): proto_name for (enum, proto_name), tool_name in TOOL_ENUM_NAMES.items()
}

_INTEGER_MAXIMUM = {
    FieldDescriptor.TYPE_INT32: 2**31 - 1,
    FieldDescriptor.TYPE_SINT32: 2**31 - 1,
    FieldDescriptor.TYPE_SFIXED32: 2**31 - 1,
    FieldDescriptor.TYPE_UINT32: 2**32 - 1,
    FieldDescriptor.TYPE_FIXED32: 2**32 - 1,
    FieldDescriptor.TYPE_INT64: 2**63 - 1,
    FieldDescriptor.TYPE_SINT64: 2**63 - 1,
    FieldDescriptor.TYPE_SFIXED64: 2**63 - 1,
    FieldDescriptor.TYPE_UINT64: 2**64 - 1,
    FieldDescriptor.TYPE_FIXED64: 2**64 - 1,
}
_SCALAR_TYPES = {
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BOOL: "boolean",
    FieldDescriptor.TYPE_DOUBLE: "number",
    FieldDescriptor.TYPE_FLOAT: "number",
} | dict.fromkeys(_INTEGER_MAXIMUM, "integer")


class SchemaDrift(Exception):
    """A request message and the gateway's table of its fields no longer agree."""


@dataclass(frozen=True)
class FieldDoc:
    """What the proto cannot say about one field of a request message."""

    keywords: Mapping[str, Any] = field(default_factory=dict)  # limits, default, description
    fields: Mapping[str, FieldDoc] | None = None  # a message field's own fields
    required: tuple[str, ...] = ()  # of a message field's fields
    not_offered: tuple[str, ...] = ()  # enum values (tool names) this field does not accept
    shape: Mapping[str, Any] | None = None  # the whole schema of a message offered its own way
    withheld: tuple[str, ...] = ()  # of a message field's fields: those no caller may set


def doc(
    *,
    fields: Mapping[str, FieldDoc] | None = None,
    required: tuple[str, ...] = (),
    not_offered: tuple[str, ...] = (),
    shape: Mapping[str, Any] | None = None,
    withheld: tuple[str, ...] = (),
    **keywords: Any,
) -> FieldDoc:
    """A FieldDoc with its JSON Schema keywords given by name (minLength=1, default=10, …)."""
    return FieldDoc(keywords, fields, required, not_offered, shape, withheld)


def tool_enum_name(enum: str, proto_name: str) -> str:
    """The tools' name of an enum value (enum: the enum's full proto name)."""
    return TOOL_ENUM_NAMES.get((enum, proto_name), proto_name.lower())


def proto_enum_name(enum: str, tool_name: str) -> str:
    """The proto name of an enum value the tools name `tool_name`."""
    return PROTO_ENUM_NAMES.get((enum, tool_name), tool_name.upper())


def enum_names(enum: EnumDescriptor, not_offered: Collection[str] = ()) -> list[str]:
    """The tools' names of an enum's values in proto order, without the unset (zero) value."""
    names = [tool_enum_name(enum.full_name, v.name) for v in enum.values if v.number != 0]
    unknown = sorted(set(not_offered) - set(names))
    if unknown:
        raise SchemaDrift(f"{enum.full_name} has no values named {unknown}")
    return [name for name in names if name not in not_offered]


def request_schema(
    request: type[Message],
    fields: Mapping[str, FieldDoc],
    *,
    required: tuple[str, ...] = (),
    withheld: Collection[str] = (),
) -> dict[str, Any]:
    """A tool's input schema: the request message with exactly the fields in `fields`."""
    descriptor = cast(Descriptor, request.DESCRIPTOR)  # the C and Python descriptors agree
    return message_schema(descriptor, fields, required=required, withheld=withheld)


def message_schema(
    message: Descriptor,
    fields: Mapping[str, FieldDoc],
    *,
    required: tuple[str, ...] = (),
    withheld: Collection[str] = (),
) -> dict[str, Any]:
    """The JSON Schema of a message offered with exactly the fields in `fields`, in proto
    order; `withheld` names the fields a caller of the tools may not set."""
    names = [f.name for f in message.fields]
    missing = [n for n in names if n not in fields and n not in withheld]
    unknown = [n for n in [*fields, *withheld, *required] if n not in names]
    both = [n for n in fields if n in withheld]
    if missing or unknown or both:
        raise SchemaDrift(
            f"{message.full_name}: "
            + "; ".join(
                problem
                for problem in (
                    missing and f"fields neither offered nor withheld: {missing}",
                    unknown and f"no such fields: {unknown}",
                    both and f"both offered and withheld: {both}",
                )
                if problem
            )
            + " (offer each field in the tool's table in gateway/tools.py, or withhold it)"
        )
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            f.name: field_schema(f, fields[f.name]) for f in message.fields if f.name in fields
        },
    }
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def field_schema(descriptor: FieldDescriptor, fdoc: FieldDoc) -> dict[str, Any]:
    """One field's schema: its type from the descriptor, then the table's keywords."""
    value = _value_schema(descriptor, fdoc)
    if descriptor.is_repeated:
        return {"type": "array", "items": value, **fdoc.keywords}
    return {**value, **fdoc.keywords}


def _value_schema(descriptor: FieldDescriptor, fdoc: FieldDoc) -> dict[str, Any]:
    name = descriptor.full_name
    if fdoc.not_offered and descriptor.type != FieldDescriptor.TYPE_ENUM:
        raise SchemaDrift(f"{name} is not an enum; not_offered means nothing for it")
    if (fdoc.fields is not None or fdoc.shape is not None) != (
        descriptor.type == FieldDescriptor.TYPE_MESSAGE
    ):
        raise SchemaDrift(f"{name}: only a message field has fields or a shape of its own")
    if descriptor.type == FieldDescriptor.TYPE_ENUM:
        enum = descriptor.enum_type
        assert enum is not None  # an enum field always has its enum type
        return {"type": "string", "enum": enum_names(enum, fdoc.not_offered)}
    if descriptor.type == FieldDescriptor.TYPE_MESSAGE:
        message = descriptor.message_type
        assert message is not None  # a message field always has its message type
        if fdoc.shape is not None:
            _check_shape(message, fdoc.shape)
            return dict(fdoc.shape)
        assert fdoc.fields is not None
        return message_schema(message, fdoc.fields, required=fdoc.required, withheld=fdoc.withheld)
    if descriptor.type not in _SCALAR_TYPES:
        raise SchemaDrift(f"{name} has a proto type the tools do not offer ({descriptor.type})")
    largest = _INTEGER_MAXIMUM.get(descriptor.type)
    if largest is not None and not (
        isinstance(fdoc.keywords.get("maximum"), int) and fdoc.keywords["maximum"] <= largest
    ):
        raise SchemaDrift(f"{name} needs a maximum the proto type can hold (<= {largest})")
    return {"type": _SCALAR_TYPES[descriptor.type]}


def _check_shape(message: Descriptor, shape: Mapping[str, Any]) -> None:
    """A message offered in a shape of its own (a oneof as one branch per member) must still
    offer every field of the message and nothing else."""
    branches = shape.get("oneOf", [shape])
    offered = {name for branch in branches for name in branch.get("properties", {})}
    expected = {f.name for f in message.fields}
    if offered != expected:
        raise SchemaDrift(
            f"the shape of {message.full_name} offers {sorted(offered)}, the message has "
            f"{sorted(expected)}"
        )
