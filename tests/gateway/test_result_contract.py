"""Every tool result follows the contract's vocabulary: the seed's response parts by name at
the top level, valid against the tool's output schema, and no value anywhere — content
documents included — that is "" or a proto enum spelling (`validity_current`,
`*_unspecified`, `CURRENT_CONTENT`)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from gateway import tools
from gateway.protoschema import tool_enum_name
from mirrortree.v1 import common_pb2, graph_pb2
from tests.gateway.harness import in_memory, tool_error
from tests.gateway.test_story_tools import story_binding

PARTS = ("requested_scope", "resolved_scope", "revision", "coverage", "evidence")


def proto_spellings() -> set[str]:
    """Every enum value name as the proto spells it, where the tools' name differs, and every
    unset value, in the cases an answer could show them."""
    found: set[str] = set()
    for file in (common_pb2.DESCRIPTOR, graph_pb2.DESCRIPTOR):
        enums = [*file.enum_types_by_name.values()]
        enums += [e for m in file.message_types_by_name.values() for e in m.enum_types]
        for enum in enums:
            for value in enum.values:
                tool_name = tool_enum_name(enum.full_name, value.name)
                if value.number == 0 or tool_name != value.name.lower():
                    found |= {value.name, value.name.lower()}
                found.add(value.name)  # upper case is never the tools' spelling
    return found


SPELLINGS = proto_spellings()


def violations(value: Any, path: str = "$") -> list[str]:
    """Where a JSON value holds "", a proto enum spelling or an unset enum; complete content
    documents (the whole JSON text of an item) are parsed and walked too."""
    found: list[str] = []
    if isinstance(value, str):
        if value == "":
            found.append(f'{path}: ""')
        elif value in SPELLINGS or value.lower().endswith("_unspecified"):
            found.append(f"{path}: {value}")
    elif isinstance(value, dict):
        for key, item in value.items():
            found += violations(item, f"{path}.{key}")
        content = value.get("text")
        if "total_length" in value and value.get("start") == "0" and "next_cursor" not in value:
            found += violations(json.loads(content or "null"), f"{path}.text<json>")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += violations(item, f"{path}[{i}]")
    return found


def test_the_walk_finds_what_it_must_refuse() -> None:
    bad = {
        "a": "",
        "b": ["validity_current"],
        "c": {"d": "confirmation_state_unspecified", "e": "CURRENT_CONTENT"},
        "content": {"start": "0", "total_length": "12", "text": '{"to": ""}'},
        "f": "superseded",
    }
    assert violations(bad) == [
        '$.a: ""',
        "$.b[0]: validity_current",
        "$.c.d: confirmation_state_unspecified",
        "$.c.e: CURRENT_CONTENT",
        '$.content.text<json>.to: ""',
    ]


CALLS: list[tuple[str, dict[str, Any]]] = [
    (tools.SEARCH, {"query": "storage engine"}),
    (tools.SEARCH, {"query": "e", "page_size": 50}),
    (tools.SEARCH, {"query": "PostgreSQL", "page_size": 1}),
    (
        tools.SEARCH,
        {
            "query": "storage",
            "time_range": {"from": "2026-10-01T00:00:00Z"},
            "object_types": ["event", "entity", "relation", "leaf_fact"],
        },
    ),
    (tools.SEARCH, {"query": "no such text anywhere"}),
    (tools.GET_CONTEXT, {"object_ref": {"type": "entity", "id": "ent-storage"}}),
    (tools.GET_CONTEXT, {"object_ref": {"type": "event", "id": "ev-decide-a"}}),
    (tools.GET_CONTEXT, {"object_ref": {"type": "event", "id": "ev-revise-b"}, "page_size": 50}),
    (
        tools.GET_CONTEXT,
        {"object_ref": {"type": "event", "id": "ev-revise-b"}, "mode": "timeline"},
    ),
    (
        tools.GET_CONTEXT,
        {
            "object_ref": {"type": "entity", "id": "ent-storage"},
            "mode": "timeline",
            "time_range": {"to": "2026-10-05T00:00:00Z"},
        },
    ),
    (tools.READ_SOURCE, {"source_reference_id": "src-notes-v2"}),
    (tools.READ_SOURCE, {"source_reference_id": "src-notes-v2", "read_kind": "current"}),
    (tools.READ_SOURCE, {"source_reference_id": "src-notes-v1", "page_size": 5}),
]


async def test_every_tool_result_names_the_seeds_parts_and_holds_no_empty_or_proto_value(
    tree_service, tree_stub, graph_stub, graph_service
):
    _, token = await story_binding(tree_service, tree_stub, graph_stub)
    seen: list[dict[str, Any]] = []
    async with in_memory(graph_service.port, token) as client:
        pending = list(CALLS)
        while pending:
            tool, arguments = pending.pop(0)
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, arguments, result.content)
            data = result.structured_content
            assert data is not None
            schema = tools.TOOLS_BY_NAME[tool].output_schema
            assert schema is not None
            jsonschema.validate(data, schema)
            for part in PARTS:
                assert part in data, (tool, part)
            assert violations(data) == [], (tool, arguments)
            seen.append(data)
            # Follow the search hits and the sources they cite, so every object kind is read.
            for hit in data.get("hits", [])[:8]:
                pending.append((tools.GET_CONTEXT, {"object_ref": hit["ref"]}))
                for source in hit.get("sources", [])[:1]:
                    pending.append(
                        (
                            tools.READ_SOURCE,
                            {"source_reference_id": source["source_reference_id"]},
                        )
                    )
            if tool == tools.SEARCH and "next_cursor" in data["page"]:
                page = {**arguments, "cursor": data["page"]["next_cursor"]}
                if page not in [a for _, a in pending]:
                    pending.append((tool, page))
    values = json.dumps(seen)
    for word in ("superseded", "current", "unknown"):  # the seed's words do appear
        assert f'"{word}"' in values


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        (tools.SEARCH, {"query": "x", "as_of": "2026-01-01T00:00:00Z"}, "as_of"),
        (tools.GET_CONTEXT, {"object_ref": {"type": "event", "id": "e"}, "mode": "as_of"}, "mode"),
        (
            tools.GET_CONTEXT,
            {"object_ref": {"type": "event", "id": "e"}, "as_of": "2026-01-01T00:00:00Z"},
            "as_of",
        ),
        (tools.READ_SOURCE, {"source_reference_id": "s", "read_kind": "as_of"}, "read_kind"),
        (tools.SEARCH, {"query": "x", "time_basis": "AS_OF"}, "time_basis"),
    ],
)
async def test_as_of_asked_any_way_is_as_of_unsupported(graph_service, tool, arguments, field):
    async with in_memory(graph_service.port, "mtb_unused") as client:
        result = await client.call_tool(tool, arguments)
    error = tool_error(result)
    assert error["code"] == "as_of_unsupported"
    assert error["fields"][0]["field"] == field
