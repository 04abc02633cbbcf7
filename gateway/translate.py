"""MCP tool arguments → gRPC requests, gRPC responses → JSON, gRPC errors → tool errors.

No business rule lives here: scope, paging and validity are graph_service's. The gateway
checks only the argument shape (the tool's JSON Schema) so that a malformed call gets a
precise message before any network hop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import Message
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from gateway import tools
from gateway.protoschema import proto_enum_name
from mirrortree.protoscope import global_scope, project_scope, time_range
from mirrortree.rpcstatus import RpcFailure
from mirrortree.v1 import common_pb2, graph_pb2
from mirrortree.validation import SHOWN_CHARS, shown

_VALIDATORS = {tool.name: Draft202012Validator(tool.input_schema) for tool in tools.TOOLS}

# The most characters of any message or field description the gateway writes. Messages quote
# a caller's value by its first SHOWN_CHARS characters and its length, never whole: a refusal
# of a megabyte of text stays a few hundred bytes (the cap is the last line, not the means).
MAX_MESSAGE_CHARS = 1000
# Unknown argument names listed at most in one refusal.
NAMES_SHOWN = 5

# What the model should do next, by machine code. Codes not listed fall back to the sentence
# graph_service sent, which is always written for a reader.
NEXT_STEP = {
    "invalid_argument": "Fix the named argument and call again.",
    "as_of_unsupported": "Call again without as_of; use mode timeline to see how things evolved.",
    # scope_required and scope_mismatch: see scope_next_step, which knows the situation.
    "stale_cursor": "The data changed while paging; repeat the search without a cursor.",
    "invalid_cursor": "Use next_cursor exactly as returned, with the same arguments.",
    "not_found": "Search again to get a current reference.",
    "historical_version_unavailable": (
        "That version is not kept; read one of the options the message lists (the snapshot, "
        "the current source, or a result that holds the object)."
    ),
    "source_unavailable": "Only the saved snapshot can be read; use read_kind snapshot.",
    "response_too_large": "Call again with a smaller page_size or content_page_size.",
    "search_budget_exceeded": (
        "Search a longer, more specific text (three characters or more), or narrow "
        "time_range, object_types or scope."
    ),
    "disabled": (
        "The story graph is switched off (the message says which switch); do not retry. Tell "
        "the user it is off if they asked for something from it."
    ),
    "unauthenticated": "The connection's binding is not valid; ask the user to reconnect.",
    "rate_limited": "Wait the seconds the message gives, then retry; make fewer, broader calls.",
    "overloaded": "The story graph is busy; retry once in a moment.",
    "consistency_timeout": "The latest writes are not readable yet; retry in a moment.",
    "replica_unavailable": "The story graph is temporarily unavailable; retry in a moment.",
    "database_unavailable": "The story graph is temporarily unavailable; retry in a moment.",
    "unavailable": (
        "The story graph could not be reached; retry once in a moment. If it still fails, "
        "tell the user the story graph is unavailable."
    ),
    "deadline_exceeded": (
        "Retry once with a narrower call (a smaller page_size, a time_range or object_types); "
        "if it times out again, tell the user."
    ),
    "internal": (
        "Do not repeat the call in a loop: try it once more later, and tell the user if it "
        "fails again."
    ),
    "permission_denied": (
        "This connection may not read that; do not retry. Tell the user what could not be read."
    ),
    "resource_exhausted": "The story graph is busy; wait a few seconds, then retry once.",
}

# Arguments whose value "as_of" asks for a past-moment read: refused as such, not as a bad value.
AS_OF_VALUED = ("mode", "read_kind", "time_basis")

SCOPE_REQUIRED_NEXT_STEP = (
    "This session has no current project, so there is nothing to read by default, and a "
    "session's project cannot be changed. Tell the user: reading a project needs a connection "
    "bound to a session in that project, or one granted it. Do not guess a scope: this "
    "connection reads another scope only if it was granted it."
)

_CODE_BY_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: "invalid_argument",
    grpc.StatusCode.NOT_FOUND: "not_found",
    grpc.StatusCode.PERMISSION_DENIED: "permission_denied",
    grpc.StatusCode.UNAUTHENTICATED: "unauthenticated",
    grpc.StatusCode.DEADLINE_EXCEEDED: "deadline_exceeded",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.UNIMPLEMENTED: "not_implemented",
    grpc.StatusCode.OUT_OF_RANGE: "out_of_range",
    grpc.StatusCode.FAILED_PRECONDITION: "failed_precondition",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "resource_exhausted",
}


@dataclass(frozen=True)
class ToolError(Exception):
    """A failure the model can act on: machine code, sentence, optional field details."""

    code: str
    message: str
    fields: tuple[dict[str, str], ...] = ()
    next_step: str = ""  # when the situation, not the code alone, decides what to do

    def as_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": bounded(self.message)}
        next_step = self.next_step or NEXT_STEP.get(self.code)
        if next_step:
            error["next_step"] = next_step
        if self.fields:
            error["fields"] = [{k: bounded(v) for k, v in f.items()} for f in self.fields]
        return {"error": error}

    def as_text(self) -> str:
        return json.dumps(self.as_json(), ensure_ascii=False)


def check_arguments(tool_name: str, arguments: dict[str, Any]) -> None:
    """Refuse `as_of` however it is asked for, then validate against the tool's input schema."""
    asked = [name for name in AS_OF_VALUED if str(arguments.get(name, "")).lower() == "as_of"]
    if "as_of" in arguments or asked:
        field = "as_of" if "as_of" in arguments else asked[0]
        raise ToolError(
            "as_of_unsupported",
            "as_of is not supported: the story graph offers current and timeline reads only, "
            "never a reconstruction of what was known at a past moment"
            + (f' ({field} "as_of" asks for one).' if field != "as_of" else "."),
            ({"field": field, "description": "as_of is not offered by this tool"},),
        )
    errors = sorted(
        _VALIDATORS[tool_name].iter_errors(arguments), key=lambda e: [str(p) for p in e.path]
    )
    if errors:
        fields = tuple(
            {
                "field": bounded(".".join(str(p) for p in e.path) or "arguments", SHOWN_CHARS * 2),
                "description": schema_error(e),
            }
            for e in errors
        )
        raise ToolError(
            "invalid_argument",
            f"invalid {fields[0]['field']}: {fields[0]['description']}",
            fields,
        )
    _check_text(arguments, "")
    if tool_name == tools.READ_SOURCE:
        _check_read_source(arguments)
    # JSON Schema counts 5.0 as an integer; protobuf does not. Pass such numbers on as ints.
    properties: dict[str, Any] = tools.TOOLS_BY_NAME[tool_name].input_schema["properties"]
    for name, value in list(arguments.items()):
        if properties.get(name, {}).get("type") == "integer" and isinstance(value, float):
            arguments[name] = int(value)


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """text, cut to `limit` characters (saying how long it was) when longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters, cut)"


def quoted(value: Any) -> str:
    """A caller's value as a message quotes it: a string by its first characters and its
    length, anything else as JSON the same way."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= SHOWN_CHARS:
        return repr(text) if isinstance(value, str) else text
    return f"{shown(text)} ({len(text)} characters)"


def schema_error(error: ValidationError) -> str:
    """What a JSON Schema error says, rebuilt from its keyword so that it quotes the offending
    value by a short prefix (jsonschema's own message holds the whole value)."""
    keyword, value = error.validator, error.instance
    limit: Any = error.validator_value
    if keyword == "maxLength" and isinstance(value, str):
        return f"{shown(value)} is {len(value)} characters long; the limit is {limit}"
    if keyword == "minLength":
        return "must not be empty" if limit == 1 else f"must be at least {limit} characters long"
    if keyword == "maxItems" and isinstance(value, list):
        return f"has {len(value)} items; the limit is {limit}"
    if keyword == "minItems":
        return f"must have at least {limit} item{'s' if limit != 1 else ''}"
    if keyword == "uniqueItems":
        return "has repeated items; give each at most once"
    if keyword == "enum":
        return f"{quoted(value)} is not one of {', '.join(json.dumps(v) for v in limit)}"
    if keyword == "const":
        return f"{quoted(value)} must be {json.dumps(limit)}"
    if keyword == "type":
        kinds = limit if isinstance(limit, str) else " or ".join(limit)
        return f"{quoted(value)} is not of type {kinds}"
    if keyword == "pattern":
        return f"{quoted(value)} does not match {limit}"
    if keyword in ("minimum", "exclusiveMinimum"):
        return f"{quoted(value)} is below the minimum of {limit}"
    if keyword in ("maximum", "exclusiveMaximum"):
        return f"{quoted(value)} is above the maximum of {limit}"
    if keyword == "required":
        missing = [name for name in limit if isinstance(value, dict) and name not in value]
        return f"{', '.join(missing) or 'a required property'} is required"
    if keyword == "additionalProperties" and isinstance(value, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [name for name in value if name not in known]
        names = ", ".join(quoted(name) for name in extra[:NAMES_SHOWN])
        more = f" and {len(extra) - NAMES_SHOWN} more" if len(extra) > NAMES_SHOWN else ""
        return f"unknown argument{'s' if len(extra) != 1 else ''} {names}{more}; accepted: " + (
            ", ".join(known) or "none"
        )
    if keyword in ("oneOf", "anyOf"):
        return f"{quoted(value)} matches none of the accepted forms (see the tool's schema)"
    return f"{quoted(value)} fails the schema's {keyword} rule"


def _check_text(value: Any, path: str) -> None:
    """Refuse strings that are not Unicode text (a lone UTF-16 surrogate such as "\\ud800"),
    naming the argument: protobuf would refuse them later without saying which one."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            field = path or "arguments"
            field = bounded(field, SHOWN_CHARS * 2)
            raise ToolError(
                "invalid_argument",
                f"invalid {field}: contains a lone surrogate ({value[exc.start]!a} at "
                f"position {exc.start}), which is not Unicode text; remove or replace it",
                ({"field": field, "description": "contains a lone surrogate"},),
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_text(item, f"{path}[{index}]")


def _check_read_source(arguments: dict[str, Any]) -> None:
    """Combinations the schema cannot express, refused with the schema's own words."""
    kind = arguments.get("read_kind", "snapshot")
    if arguments.get("source_version") and kind != "version":
        raise ToolError(
            "invalid_argument",
            f'invalid source_version: it is only used with read_kind "version" (read_kind is '
            f'"{kind}"); pass read_kind "version" to read that version, or drop source_version',
            ({"field": "source_version", "description": 'only used with read_kind "version"'},),
        )
    if arguments.get("cursor") and "offset" in arguments:
        raise ToolError(
            "invalid_argument",
            "invalid offset: a cursor already says where the next page starts, so offset "
            "cannot be given with it; pass the cursor alone to continue, or offset alone "
            "(without cursor) to start somewhere else",
            ({"field": "offset", "description": "not accepted together with cursor"},),
        )


def _scope(value: dict[str, Any] | None) -> common_pb2.Scope:
    if not value:
        return common_pb2.Scope()
    if value.get("global"):
        return global_scope()
    return project_scope(value["projects"])


def _time_range(value: dict[str, Any] | None) -> common_pb2.TimeRange:
    value = value or {}
    return time_range(value.get("from", ""), value.get("to", ""))


def _enum(enum: Any, name: str) -> Any:
    """The enum value for a tool's name of it (the schema has already checked it exists)."""
    return enum.Value(proto_enum_name(enum.DESCRIPTOR.full_name, name))


def _options(value: dict[str, Any] | None) -> graph_pb2.ReadOptions:
    """The caller's read-your-writes token, if it gave one (never a session: see tools.OPTIONS)."""
    token = (value or {}).get("min_consistency")
    if not token:
        return graph_pb2.ReadOptions()
    return graph_pb2.ReadOptions(min_consistency=common_pb2.ConsistencyToken(lsn=token["lsn"]))


def search_request(arguments: dict[str, Any]) -> graph_pb2.SearchRequest:
    return graph_pb2.SearchRequest(
        query=arguments["query"],
        scope=_scope(arguments.get("scope")),
        object_types=[_enum(common_pb2.ObjectType, t) for t in arguments.get("object_types", [])],
        time_range=_time_range(arguments.get("time_range")),
        time_basis=_enum(common_pb2.TimeBasis, arguments.get("time_basis", "event_time")),
        page_size=arguments.get("page_size", 0),
        cursor=arguments.get("cursor", ""),
        options=_options(arguments.get("options")),
    )


def get_context_request(arguments: dict[str, Any]) -> graph_pb2.GetContextRequest:
    ref = arguments["object_ref"]
    return graph_pb2.GetContextRequest(
        object_ref=common_pb2.ObjectRef(
            type=_enum(common_pb2.ObjectType, ref["type"]), id=ref["id"]
        ),
        scope=_scope(arguments.get("scope")),
        mode=_enum(graph_pb2.ContextMode, arguments.get("mode", "current")),
        time_range=_time_range(arguments.get("time_range")),
        time_basis=_enum(common_pb2.TimeBasis, arguments.get("time_basis", "event_time")),
        page_size=arguments.get("page_size", 0),
        cursor=arguments.get("cursor", ""),
        content_page_size=arguments.get("content_page_size", 0),
        options=_options(arguments.get("options")),
        result_id=arguments.get("result_id", ""),
    )


def read_source_request(arguments: dict[str, Any]) -> graph_pb2.ReadSourceRequest:
    kind = arguments.get("read_kind", "snapshot")
    return graph_pb2.ReadSourceRequest(
        source_reference_id=arguments["source_reference_id"],
        scope=_scope(arguments.get("scope")),
        read_kind=_enum(graph_pb2.ReadKind, kind),
        source_version=arguments.get("source_version", ""),
        offset=arguments.get("offset", 0),
        page_size=arguments.get("page_size", 0),
        cursor=arguments.get("cursor", ""),
        options=_options(arguments.get("options")),
    )


def build_request(build: Callable[[dict[str, Any]], Message], arguments: dict[str, Any]) -> Any:
    """Build the gRPC request; what JSON Schema lets through but protobuf refuses (1.0 for an
    integer, an out-of-range number) becomes a named argument error, not a crash."""
    try:
        return build(arguments)
    except (TypeError, ValueError) as exc:
        raise ToolError(
            "invalid_argument",
            "an argument has a value the story graph cannot take: "
            f"{bounded(str(exc), SHOWN_CHARS * 3)}; use whole numbers within the documented "
            "ranges",
        ) from None


def scope_argument(scope: common_pb2.Scope) -> str:
    """A scope as the tools' `scope` argument (JSON)."""
    if scope.WhichOneof("kind") == "global":
        return json.dumps({"global": True})
    return json.dumps({"projects": list(scope.projects.project_ids)})


def scope_next_step(failure: RpcFailure, binding: graph_pb2.ResolveBindingResponse | None) -> str:
    """What to do after scope_required or scope_mismatch, which depends on the situation.

    binding: the caller's binding (its session's current project, empty for none, and the
    scopes it was granted); None when it could not be looked up.
    """
    if failure.reason == "scope_required":
        return SCOPE_REQUIRED_NEXT_STEP
    own_project = str(binding.project_id) if binding is not None else None
    granted = [scope_argument(s) for s in binding.allowed_scopes] if binding is not None else []
    also = (
        f" It was also granted {', '.join(granted)}: pass one of them as scope only if the "
        "user asked for it."
        if granted
        else ""
    )
    if "object_id" in failure.metadata or "source_reference_id" in failure.metadata:
        what = "source reference" if "source_reference_id" in failure.metadata else "object"
        return (
            f"That {what} exists, but not in the scope that was read. Use refs from "
            "story_graph_search results of the scope you read."
            + (also or " This connection was granted no other scope.")
        )
    requested = failure.metadata.get("requested_scope", "that scope")
    if own_project:
        return (
            f"This connection reads only its session's project ({own_project}) and scopes its "
            f"binding was granted, and {requested} is neither. Call again without scope (and "
            "without a cursor from that scope) to read its project; do not try other scopes." + also
        )
    if own_project == "":
        return (
            f"This connection was not granted {requested}, and its session has no current "
            "project to read instead. Tell the user: reading a project needs a connection bound "
            "to a session in that project, or one granted it; do not try other scopes." + also
        )
    return (
        "This connection reads only its session's current project and scopes its binding was "
        "granted. Call again without scope; do not try other scopes."
    )


def tool_error_from_rpc(failure: RpcFailure, next_step: str = "") -> ToolError:
    """Map a failed gRPC call to a tool error; internal failures say nothing internal."""
    if failure.code in (
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DATA_LOSS,
    ):
        return ToolError(
            "internal",
            "The story graph failed to answer this call; it has been logged. Retry later.",
        )
    code = failure.reason or _CODE_BY_STATUS.get(failure.code, "unavailable")
    fields = tuple({"field": v.field, "description": v.description} for v in failure.violations)
    if failure.code == grpc.StatusCode.DEADLINE_EXCEEDED:
        message = "The story graph did not answer in time; retry with a narrower query."
    elif failure.code == grpc.StatusCode.UNAVAILABLE and not failure.reason:
        message = "The story graph service is unreachable; retry in a moment."
    else:
        message = bounded(failure.message)
    return ToolError(code, message, fields, next_step)
