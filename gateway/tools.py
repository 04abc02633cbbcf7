"""The three Story Graph tools: names, descriptions and JSON Schemas.

Input schemas are derived from the gRPC request messages (graph.proto) by
gateway.protoschema: the tables below hold, per field, only the limits, defaults and
descriptions the proto cannot say. Enums are lower-case names; int64 values come out as
strings (the proto3 JSON mapping). `as_of` is reserved in the proto and in no schema: reading
the graph as of a past moment is not offered. Output schemas are derived from the response
messages with the seed's response parts at the top level (gateway/results.py).
"""

from __future__ import annotations

from typing import Any

from mcp import types

from gateway import results
from gateway.protoschema import FieldDoc, doc, enum_names, request_schema
from mirrortree.scopes import MAX_PROJECT_ID, MAX_PROJECTS
from mirrortree.v1 import common_pb2, graph_pb2
from mirrortree.validation import MAX_ID

SERVER_NAME = "Story Graph"
CAPABILITY_ID = "story-graph"
SEARCH = "story_graph_search"
GET_CONTEXT = "story_graph_get_context"
READ_SOURCE = "story_graph_read_source"

# graph_service's limits (graph_service/convert.py, cursors.py), offered up front so a model
# learns them from the schema; tests/unit/test_proto_drift.py keeps the two equal.
MAX_QUERY = 500
DEFAULT_PAGE = 10
MAX_PAGE = 50
DEFAULT_CONTENT_PAGE = 4_000
MAX_CONTENT_PAGE = 8_000
MAX_CURSOR_CHARS = 2048
MAX_OFFSET = 2**53  # the largest integer every JSON reader holds exactly
LSN_PATTERN = "^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$"  # mirrortree.lsn's text form
# An RFC 3339 time is at most 35 characters (nanoseconds and an offset); the bound keeps every
# argument's size finite, which the HTTP body limit is derived from (gateway.bodylimit).
MAX_TIME_CHARS = 64

# Request fields no tool offers (none at the top level; see OPTIONS for a nested one).
WITHHELD: tuple[str, ...] = ()

# Preferences are background, never searched as graph objects: a search lists the ones that
# match in `background`, and get_context reads them.
NOT_SEARCHED = ("preference",)
OBJECT_TYPE_NAMES = enum_names(common_pb2.ObjectType.DESCRIPTOR, NOT_SEARCHED)
CONTEXT_OBJECT_TYPE_NAMES = enum_names(common_pb2.ObjectType.DESCRIPTOR)

SCOPE_SCHEMA: dict[str, Any] = {
    "description": (
        "Where to read. Omit it to use the calling session's current project. Give "
        '{"projects": ["p1"]} for one project, several ids for a project set, or '
        '{"global": true} for Global results (never presented as a project\'s conclusions).'
    ),
    "oneOf": [
        {
            "type": "object",
            "properties": {"global": {"const": True}},
            "required": ["global"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "projects": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": MAX_PROJECT_ID},
                    "minItems": 1,
                    "maxItems": MAX_PROJECTS,
                }
            },
            "required": ["projects"],
            "additionalProperties": False,
        },
    ],
}
# Scope is a oneof offered as one branch per member, its ProjectSet as the list of ids.
SCOPE = doc(shape=SCOPE_SCHEMA)

TIME_RANGE = doc(
    fields={
        "from": doc(format="date-time", maxLength=MAX_TIME_CHARS),
        "to": doc(format="date-time", maxLength=MAX_TIME_CHARS),
    },
    description=(
        "Closed interval [from, to]; ISO 8601 with a zone (e.g. 2026-10-01T00:00:00+08:00). "
        "Interval events match when they intersect it; an event dated with a coarse precision "
        "(a day, a month) may lie anywhere in that period and matches a range that meets it. "
        "Objects whose time is unknown never match and are counted in "
        "coverage.unknown_time_excluded."
    ),
)

TIME_BASIS = doc(
    default="event_time",
    description=(
        "Which time the range applies to: when it happened (event_time), when the review that "
        "described it ran, or when it was written to the system."
    ),
)

PAGE_SIZE = doc(minimum=1, maximum=MAX_PAGE, default=DEFAULT_PAGE)

# The caller's own read-your-writes token passes through; the session is never named by a
# caller, since the gateway authenticates by its binding.
OPTIONS = doc(
    description=(
        "Only to read your own recent writes: min_consistency.lsn is the consistency token a "
        "Mirrortree write returned; the read waits briefly until it is visible, or answers "
        "consistency_timeout. Omit it otherwise."
    ),
    fields={
        "min_consistency": doc(
            fields={"lsn": doc(pattern=LSN_PATTERN, maxLength=17, description="e.g. 0/16B3748")},
            required=("lsn",),
        )
    },
    withheld=("session_id",),
)

SEARCH_FIELDS: dict[str, FieldDoc] = {
    "query": doc(
        minLength=1,
        maxLength=MAX_QUERY,
        description="Text to find: case-insensitive, contiguous substring.",
    ),
    "scope": SCOPE,
    "object_types": doc(
        not_offered=NOT_SEARCHED,
        uniqueItems=True,
        description="Limit to these object types; omit for all.",
    ),
    "time_range": TIME_RANGE,
    "time_basis": TIME_BASIS,
    "page_size": PAGE_SIZE,
    "cursor": doc(
        maxLength=MAX_CURSOR_CHARS,
        description="page.next_cursor of the previous page; keeps its scope and filters.",
    ),
    "options": OPTIONS,
}

GET_CONTEXT_FIELDS: dict[str, FieldDoc] = {
    "object_ref": doc(
        fields={"type": doc(), "id": doc(minLength=1, maxLength=MAX_ID)},
        required=("type", "id"),
        description="A hit's ref from story_graph_search (type and stable id).",
    ),
    "scope": SCOPE,
    "mode": doc(
        default="current",
        description=(
            "current: the present understanding (validity only from evidenced replaces/"
            "contradicts relations), decisions, evidence, preferences as background; "
            "timeline: dated evidence in event-time order plus undated evidence apart "
            "(it may include events recorded late; it is not what was known then)."
        ),
    ),
    "time_range": TIME_RANGE,
    "time_basis": TIME_BASIS,
    "page_size": PAGE_SIZE,
    "cursor": doc(
        maxLength=MAX_CURSOR_CHARS,
        description=(
            "A collection's page.next_cursor or an item's content.next_cursor: the answer "
            "then holds only that collection page or that item's next fragment."
        ),
    ),
    "content_page_size": doc(
        minimum=1,
        maximum=MAX_CONTENT_PAGE,
        default=DEFAULT_CONTENT_PAGE,
        description=(
            "Code points per content fragment; fragments of one item joined in order of "
            "start are its JSON document."
        ),
    ),
    "options": OPTIONS,
    "result_id": doc(
        minLength=1,
        maxLength=MAX_ID,
        description="Read only the copy one stored review result recorded (a version).",
    ),
}

READ_SOURCE_FIELDS: dict[str, FieldDoc] = {
    "source_reference_id": doc(minLength=1, maxLength=MAX_ID),
    "scope": SCOPE,
    "read_kind": doc(
        default="snapshot",
        description=(
            "snapshot: the fragment saved as evidence; version: a named source_version; "
            "current: the source as it is now."
        ),
    ),
    "source_version": doc(
        pattern="^[0-9]{1,18}$",
        maxLength=18,
        description="A whole number: the version to read.",
    ),
    "offset": doc(minimum=0, maximum=MAX_OFFSET, description="Zero-based code point."),
    "page_size": doc(minimum=1, maximum=MAX_CONTENT_PAGE, default=DEFAULT_CONTENT_PAGE),
    "cursor": doc(maxLength=MAX_CURSOR_CHARS),
    "options": OPTIONS,
}

SEARCH_INPUT = request_schema(
    graph_pb2.SearchRequest, SEARCH_FIELDS, required=("query",), withheld=WITHHELD
)
GET_CONTEXT_INPUT = request_schema(
    graph_pb2.GetContextRequest,
    GET_CONTEXT_FIELDS,
    required=("object_ref",),
    withheld=WITHHELD,
)
READ_SOURCE_INPUT = request_schema(
    graph_pb2.ReadSourceRequest,
    READ_SOURCE_FIELDS,
    required=("source_reference_id",),
    withheld=WITHHELD,
)

LINKED_LEAVES_DOC = (
    "Leaf facts this scope linked in its reviews instead of storing its own copy (extracted "
    "once, shared): ref and result_id of the scope's own review (no stored copy, so no "
    "get_context of its own), and the "
    "shared leaf with its source, range and extracted_in (where it was first extracted: a "
    "Global extraction is Global's, not this project's conclusion); source_reference_ids "
    "read with story_graph_read_source. Only leaves whose source belongs to the scope; "
    "first page only, at most page_size."
)

# graph_service's label of a preference (graph_service/views.py PREFERENCE_LABEL), which the
# gateway does not import; tests/gateway/test_search_background_tool.py keeps the two equal.
PREFERENCE_LABEL = "background: confirmed preference"
BACKGROUND_DOC = (
    "The user's confirmed long-term preferences (memory) that apply in this scope (Global ones "
    "everywhere, a project's in scopes that include it) and whose subject or text holds the "
    f'query, each labelled "{PREFERENCE_LABEL}": background the user confirmed, not a graph '
    "fact and not evidence of what happened. ref (get_context reads it, with any pending "
    "differences with graph facts), where it applies (scope), subject, an excerpt marked as an "
    "excerpt, revision, updated_at (its real update time, not when it was first decided) and "
    "confirmed_by. Whatever object_types and time_range say; first page only, at most "
    "page_size, most recently updated first."
)

# Output schemas are derived from the response messages by the rules result_json follows
# (gateway/results.py); the tables below only describe the body fields an agent reads first.
SEARCH_OUTPUT = results.result_schema(
    graph_pb2.SearchResponse,
    {
        "hits": (
            "Matching objects, most relevant first: ref (for get_context), result_id, the "
            "item's own scope, title, kind, matched_fields and match_reason, an excerpt marked "
            "as an excerpt, object_revision, time (event_time, review_generated_at, "
            "recorded_at, validity, confirmation_state), sources and related refs."
        ),
        "linked_leaves": LINKED_LEAVES_DOC,
        "background": BACKGROUND_DOC,
    },
    ("hits",),
)
GET_CONTEXT_OUTPUT = results.result_schema(
    graph_pb2.GetContextResponse,
    {
        "collections": (
            "Each collection is paged on its own (its page.next_cursor). current mode: "
            "current (the projection: description chosen by evidence, validity, decisions and "
            "work state, unresolved items), snapshots, events, changes, relations, leaves, "
            "related, sources, preferences; timeline mode: timeline, undated, snapshots, "
            "related, sources. An item's content is a fragment of its JSON document (start..end "
            "of total_length, code points); content.next_cursor continues it."
        ),
        "linked_leaves": (
            "current mode: the leaf facts this scope linked (no copy of its own) and said are "
            "about the object, as in story_graph_search's linked_leaves."
        ),
    },
    ("object_ref", "mode", "collections", "object_scope"),
)
READ_SOURCE_OUTPUT = results.result_schema(
    graph_pb2.ReadSourceResponse,
    {
        "text": "One page of the content, code points start..end of content_length; left out "
        "when there is none to read (availability says why: a purged message reads deleted).",
        "content_kind": "saved_fragment (the evidence as saved) or whole_source.",
        "time_metadata": (
            "The source's times: created, updated (the version returned was written) and "
            "captured (the fragment was saved), each with its basis, or unknown with a reason."
        ),
    },
    ("content_kind", "start", "end", "content_length", "availability"),
)

_ANNOTATIONS = types.ToolAnnotations(
    read_only_hint=True, open_world_hint=False, idempotent_hint=True
)

TOOLS: tuple[types.Tool, ...] = (
    types.Tool(
        name=SEARCH,
        title="Search the story graph",
        description=(
            "Find decisions, events, entities, relations, summaries and their sources in the "
            "user's story graph. Use it first when the user asks to continue last work, how "
            "something was decided, or why a plan changed. Read-only: it never starts a review "
            "or writes anything. Hits carry stable refs for story_graph_get_context and source "
            "entries for story_graph_read_source; linked_leaves lists shared leaf facts the "
            "scope reused, each saying where it was first extracted; background lists the "
            "user's confirmed preferences that match, labelled as background, never graph "
            "facts; coverage says what was (not) reviewed."
        ),
        input_schema=SEARCH_INPUT,
        output_schema=SEARCH_OUTPUT,
        annotations=_ANNOTATIONS,
    ),
    types.Tool(
        name=GET_CONTEXT,
        title="Get an object's context",
        description=(
            "Read one object's current understanding or its timeline (proposals, revisions, "
            "replacements, conflicts) with evidence, after story_graph_search found it. Use it "
            "to answer how a decision evolved and what holds now: the current item gives the "
            "description the evidence supports (or the competing ones when nothing decides), "
            "validity, the work state (decided is not done) and what is unresolved (open "
            "questions, pending differences with preferences, coverage gaps). Conflicts "
            "without evidence stay open. Read-only."
        ),
        input_schema=GET_CONTEXT_INPUT,
        output_schema=GET_CONTEXT_OUTPUT,
        annotations=_ANNOTATIONS,
    ),
    types.Tool(
        name=READ_SOURCE,
        title="Read a source",
        description=(
            "Read the saved evidence fragment of a source reference (default), a named version, "
            "or the current source, in code-point pages, with the source's time metadata "
            "(created, updated, captured; each with its basis or unknown). Use it to check the "
            "original words behind a decision or a conflict before quoting them. Read-only."
        ),
        input_schema=READ_SOURCE_INPUT,
        output_schema=READ_SOURCE_OUTPUT,
        annotations=_ANNOTATIONS,
    ),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


def input_schema(name: str) -> dict[str, Any] | None:
    """The input schema of a tool by name (None for an unknown one), for the SDK's check of
    `Mcp-Param-*` headers: without it the SDK runs the whole `tools/list` handler — a binding
    check on graph_service and the full catalogue serialized — on every `tools/call`."""
    tool = TOOLS_BY_NAME.get(name)
    return tool.input_schema if tool is not None else None
