"""Dotted field paths of proto messages ("confirmation.user_id"), as the contracts' options name
fields of a request (mirrortree.v1 options: the subject and user of a confirmation grant)."""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor


def value_at(message: Any, path: str) -> Any:
    """The value of the field at `path` in `message`."""
    value = message
    for name in path.split("."):
        value = getattr(value, name)
    return value


def field_at(message_type: Any, path: str) -> FieldDescriptor:
    """The field at `path` of the message type `message_type` (a Descriptor)."""
    descriptor = message_type
    *parents, last = path.split(".")
    for name in parents:
        descriptor = descriptor.fields_by_name[name].message_type
    field: FieldDescriptor = descriptor.fields_by_name[last]
    return field
