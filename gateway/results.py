"""gRPC responses → the tools' JSON results, and the output schemas that describe them.

Seed §4 names the parts every answer carries: `requested_scope`, `resolved_scope` (with the
time range and basis used), `revision`, `coverage`, `page` and `evidence`. They sit at the
top level of every result under those names; the rest of a result is the tool's own body.

One rule for values (docs/story-graph.md, "Coverage, counts and unknowns"): a value that does
not apply or is not known is left out, and where the contract needs the fact stated (counts,
revisions, versions, event times, validity, coverage) it is an explicit `unknown` with a
reason. A result never holds "" or a proto enum spelling (`validity_current`,
`*_unspecified`); the output schemas are derived from the response messages by the same rules,
so a string in them is never empty and an enum lists only the tools' names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from gateway.protoschema import tool_enum_name
from mirrortree.v1 import graph_pb2

_INT64 = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED64,
}
_SCOPE = "mirrortree.v1.Scope"
_COUNT = "mirrortree.v1.Count"
_REVISION = "mirrortree.v1.Revision"

# What an answer's top-level parts say, for the output schemas.
PART_DESCRIPTIONS = {
    "requested_scope": (
        'The scope the call named ({"projects": [...]} or {"global": true}), or {"default": '
        "true} when it named none (then the calling session's current project applies)."
    ),
    "resolved_scope": (
        "The scope actually read: scope (as requested_scope), resolution (explicit, "
        "session_current_project or cursor), time_range (closed; an end left out is open) and "
        "time_basis (the time dimension the range applies to). Each item also carries its own "
        "scope."
    ),
    "revision": (
        "What this answer was read at: read_revision (the scope's graph revision; cursors are "
        "bound to it) and read_at (the time of the last commit the replica had replayed: how "
        "fresh the answer is; unknown when it had replayed none); read_source adds "
        "requested_version, "
        "returned_version (known or unknown) and differs_from_reference. Each item carries its "
        "own object_revision, known or unknown."
    ),
    "coverage": (
        "What the stored review results claim they processed, independent of paging: state "
        "(unknown or partial), processed (each result's covered interval, or unknown when it "
        "gave only counts, with the counts as counts), excluded source types, gaps, "
        "unknown_time_excluded. Unknown is never written as 0."
    ),
    "page": (
        "Paging of the list: returned_count, has_more, next_cursor (present when has_more), "
        "complete, limit_reason (present when the page stopped early) and total (exact or "
        "unknown). In get_context each collection has its own page."
    ),
    "evidence": (
        "Where the evidence of this answer is: a note on how to read it; get_context adds "
        "history_gaps (known holes in the object's history; empty does not claim it is "
        "complete); read_source names the source (source_type, source_id, location)."
    ),
}

SEARCH_EVIDENCE_NOTE = (
    "each hit carries its own evidence: sources (source references with locators; read them "
    "with story_graph_read_source), time.validity with the relations establishing it, and "
    "time.confirmation_state; an object's known conflicts, unresolved items and history gaps "
    "are read with story_graph_get_context"
)
READ_SOURCE_EVIDENCE_NOTE = (
    "the text is evidence only for the range it covers (start..end of content_length); a "
    "saved fragment is not the whole source"
)
UNKNOWN_VERSION = "the source reference recorded no source version"


def message_json(message: Message) -> dict[str, Any]:
    """A message as the tools write it: fields that do not apply are left out."""
    descriptor = cast(Descriptor, message.DESCRIPTOR)  # the C and Python descriptors agree
    if descriptor.full_name == _SCOPE:
        return scope_json(message)
    plan = _PLANS.get(descriptor.full_name) or _plan(descriptor)
    data: dict[str, Any] = {}
    for name, shape, convert, oneof in plan:
        if shape is _REPEATED:
            data[name] = [convert(v) for v in getattr(message, name)]
        elif shape is _MESSAGE:
            if message.HasField(name):
                data[name] = message_json(getattr(message, name))
        elif oneof is not None:
            if message.WhichOneof(oneof) == name:
                data[name] = convert(getattr(message, name))
        else:
            value = convert(getattr(message, name))
            if value is not None:
                data[name] = value
    return data


# How each field of a message type is written, worked out once per type: reading the
# descriptors afresh for every field of every result was a sixth of the gateway's CPU per call.
_REPEATED, _MESSAGE, _SINGLE = "repeated", "message", "single"
_Plan = tuple[tuple[str, str, Callable[[Any], Any], str | None], ...]
_PLANS: dict[str, _Plan] = {}


def _plan(descriptor: Descriptor) -> _Plan:
    plan: list[tuple[str, str, Callable[[Any], Any], str | None]] = []
    for field in descriptor.fields:
        convert = _converter(field)
        if field.is_repeated:
            plan.append((field.name, _REPEATED, convert, None))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            plan.append((field.name, _MESSAGE, convert, None))
        else:
            oneof = field.containing_oneof.name if field.containing_oneof is not None else None
            plan.append((field.name, _SINGLE, convert, oneof))
    _PLANS[descriptor.full_name] = result = tuple(plan)
    return result


def _converter(field: FieldDescriptor) -> Callable[[Any], Any]:
    """One value of the field as the tools write it (None: left out)."""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message_json
    if field.type == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None  # an enum field always has its enum type
        names = {
            number: tool_enum_name(enum.full_name, value.name)
            for number, value in enum.values_by_number.items()
            if number != 0  # unset: the field is left out
        }
        return lambda value: names.get(value, f"unknown({value})") if value else None
    if field.type == FieldDescriptor.TYPE_STRING:
        return lambda value: value or None
    if field.type in _INT64:
        return str  # the proto3 JSON mapping: int64 travels as a string
    return lambda value: value


def scope_json(scope: Message) -> dict[str, Any]:
    """A scope in the shape the tools' `scope` argument takes."""
    kind = scope.WhichOneof("kind")
    if kind == "global":
        return {"global": True}
    if kind == "projects":
        return {"projects": list(scope.projects.project_ids)}  # type: ignore[attr-defined]
    return {}


def result_json(response: Message) -> dict[str, Any]:
    """A tool's result: its body, then the seed's response parts at the top level."""
    data = message_json(response)
    basis = data.pop("basis", {})
    scope = basis.get("scope", {})
    parts: dict[str, Any] = {
        "requested_scope": scope.get("requested") or {"default": True},
        "resolved_scope": {
            "scope": scope.get("resolved", {}),
            "resolution": scope.get("resolution", "unknown"),
            "time_range": basis.get("time_range", {}),
            "time_basis": basis.get("time_basis", "event_time"),
        },
        "revision": {
            "read_revision": basis.get("read_revision", "0"),
            "read_at": basis.get("read_at", "unknown"),
        },
    }
    if isinstance(response, graph_pb2.SearchResponse):
        parts["evidence"] = {"note": SEARCH_EVIDENCE_NOTE}
    elif isinstance(response, graph_pb2.GetContextResponse):
        parts["evidence"] = {
            "note": data.pop("evidence_note", ""),
            "history_gaps": data.pop("history_gaps", []),
        }
    elif isinstance(response, graph_pb2.ReadSourceResponse):
        requested = data.pop("requested_version", None)
        returned = data.pop("returned_version", None)
        if requested is not None:
            parts["revision"]["requested_version"] = requested
        parts["revision"]["returned_version"] = (
            {"known": returned} if returned else {"unknown": {"reason": UNKNOWN_VERSION}}
        )
        parts["revision"]["differs_from_reference"] = data.pop("differs_from_reference", False)
        evidence: dict[str, Any] = {"note": READ_SOURCE_EVIDENCE_NOTE}
        for name in ("source_type", "source_id", "location"):
            if name in data:
                evidence[name] = data.pop(name)
        parts["evidence"] = evidence
    for name in ("coverage", "page"):
        if name in data:
            parts[name] = data.pop(name)
    return {**data, **parts}


# ---- output schemas ----------------------------------------------------------------------

_STRING: dict[str, Any] = {"type": "string", "minLength": 1}
_UNKNOWN: dict[str, Any] = {
    "type": "object",
    "description": "Not known; reason says why. Never written as 0 or an empty string.",
    "properties": {"reason": _STRING},
    "required": ["reason"],
    "additionalProperties": False,
}
SCOPE_OUTPUT: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"global": {"const": True}},
            "required": ["global"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"projects": {"type": "array", "items": _STRING, "minItems": 1}},
            "required": ["projects"],
            "additionalProperties": False,
        },
    ]
}


def _either(name: str, value: dict[str, Any], description: str) -> dict[str, Any]:
    """A oneof of a known value and `unknown`, exactly one present."""
    return {
        "type": "object",
        "description": description,
        "properties": {name: value, "unknown": _UNKNOWN},
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
    }


_INT64_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": "^-?[0-9]+$",
    "description": "an int64, as a string",
}
COUNT_OUTPUT = _either("exact", _INT64_SCHEMA, "A count: exact, or unknown (never 0 for unknown).")
REVISION_OUTPUT = _either(
    "known", _STRING, "A revision: known, or unknown (updated_at is never a revision)."
)
PAGE_REQUIRED = ["returned_count", "has_more", "complete", "total"]


def output_schema(descriptor: Descriptor) -> dict[str, Any]:
    """The JSON Schema of message_json's output for a message."""
    name = descriptor.full_name
    if name == _SCOPE:
        return SCOPE_OUTPUT
    if name == _COUNT:
        return COUNT_OUTPUT
    if name == _REVISION:
        return REVISION_OUTPUT
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {f.name: _field_output(f) for f in descriptor.fields},
        "additionalProperties": False,
    }
    if name == "mirrortree.v1.PageInfo":
        schema["required"] = PAGE_REQUIRED
    return schema


def _field_output(field: FieldDescriptor) -> dict[str, Any]:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        message = field.message_type
        assert message is not None  # a message field always has its message type
        value = output_schema(message)
    elif field.type == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None
        names = [tool_enum_name(enum.full_name, v.name) for v in enum.values if v.number != 0]
        value = {"type": "string", "enum": names}
    elif field.type == FieldDescriptor.TYPE_STRING:
        value = _STRING
    elif field.type in _INT64:
        value = _INT64_SCHEMA
    elif field.type == FieldDescriptor.TYPE_BOOL:
        value = {"type": "boolean"}
    else:
        value = {"type": "integer"}
    return {"type": "array", "items": value} if field.is_repeated else value


def result_schema(
    response: type[Message], body: dict[str, str], required: tuple[str, ...]
) -> dict[str, Any]:
    """A tool's output schema: its response message, reshaped as result_json reshapes it.

    body: descriptions of the body's own fields; required: body fields always present."""
    descriptor = cast(Descriptor, response.DESCRIPTOR)
    schema = output_schema(descriptor)
    properties: dict[str, Any] = schema["properties"]
    basis = properties.pop("basis")["properties"]
    scope = basis["scope"]["properties"]
    revision: dict[str, Any] = {
        "read_revision": basis["read_revision"],
        "read_at": basis["read_at"],
    }
    evidence: dict[str, Any] = {"note": _STRING}
    if response is graph_pb2.GetContextResponse:
        properties.pop("evidence_note")
        evidence["history_gaps"] = properties.pop("history_gaps")
    if response is graph_pb2.ReadSourceResponse:
        revision["requested_version"] = properties.pop("requested_version")
        properties.pop("returned_version")
        revision["returned_version"] = _either(
            "known", _STRING, "The version returned, or unknown when none was recorded."
        )
        revision["differs_from_reference"] = properties.pop("differs_from_reference")
        for name in ("source_type", "source_id", "location"):
            evidence[name] = properties.pop(name)
    parts: dict[str, Any] = {
        "requested_scope": {
            "oneOf": [
                *SCOPE_OUTPUT["oneOf"],
                {
                    "type": "object",
                    "properties": {"default": {"const": True}},
                    "required": ["default"],
                    "additionalProperties": False,
                },
            ]
        },
        "resolved_scope": {
            "type": "object",
            "properties": {
                "scope": SCOPE_OUTPUT,
                "resolution": {
                    "type": "string",
                    "enum": ["explicit", "session_current_project", "cursor"],
                },
                "time_range": basis["time_range"],
                "time_basis": basis["time_basis"],
            },
            "required": ["scope", "resolution", "time_range", "time_basis"],
            "additionalProperties": False,
        },
        "revision": {
            "type": "object",
            "properties": revision,
            "required": list(revision)
            if response is not graph_pb2.ReadSourceResponse
            else ["read_revision", "read_at", "returned_version", "differs_from_reference"],
            "additionalProperties": False,
        },
        "evidence": {
            "type": "object",
            "properties": evidence,
            "required": ["note"],
            "additionalProperties": False,
        },
        "coverage": properties.pop("coverage"),
    }
    if "page" in properties:
        parts["page"] = properties.pop("page")
    for name, description in body.items():
        properties[name] = {**properties[name], "description": description}
    for name, part in parts.items():
        parts[name] = {**part, "description": PART_DESCRIPTIONS[name]}
    assert not set(scope) - {"requested", "resolved", "resolution"}
    return {
        "type": "object",
        "properties": {**properties, **parts},
        "required": [*required, *parts],
        "additionalProperties": False,
    }
