"""The tools' schemas follow graph.proto: input schemas are derived from the request messages
and refuse to build when the two disagree; output schemas name only response fields, with
their proto3 JSON types. Proto changes are tried on copies in private descriptor pools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from jsonschema import Draft202012Validator

from gateway import protoschema, results, tools, translate
from gateway.protoschema import enum_names
from mirrortree.v1 import common_pb2, graph_pb2, leaves_pb2, options_pb2

Files = dict[str, descriptor_pb2.FileDescriptorProto]
FieldProto = descriptor_pb2.FieldDescriptorProto
COMMON = "mirrortree/v1/common.proto"
GRAPH = "mirrortree/v1/graph.proto"
LEAVES = "mirrortree/v1/leaves.proto"  # graph.proto imports it

INPUTS = (
    (tools.SEARCH, graph_pb2.SearchRequest, tools.SEARCH_FIELDS, ("query",)),
    (tools.GET_CONTEXT, graph_pb2.GetContextRequest, tools.GET_CONTEXT_FIELDS, ("object_ref",)),
    (
        tools.READ_SOURCE,
        graph_pb2.ReadSourceRequest,
        tools.READ_SOURCE_FIELDS,
        ("source_reference_id",),
    ),
)
OUTPUTS = (
    (tools.SEARCH, graph_pb2.SearchResponse),
    (tools.GET_CONTEXT, graph_pb2.GetContextResponse),
    (tools.READ_SOURCE, graph_pb2.ReadSourceResponse),
)

# A value for every offered argument, none of them the default, so each must reach the request.
EVERY_ARGUMENT: dict[str, dict[str, Any]] = {
    tools.SEARCH: {
        "query": "budget",
        "scope": {"global": True},
        "object_types": ["event"],
        "time_range": {"from": "2026-10-01T00:00:00+08:00", "to": "2026-10-02T00:00:00Z"},
        "time_basis": "recorded_at",
        "page_size": 5,
        "cursor": "c1",
        "options": {"min_consistency": {"lsn": "0/16B3748"}},
    },
    tools.GET_CONTEXT: {
        "object_ref": {"type": "preference", "id": "p-1"},
        "scope": {"projects": ["p1", "p2"]},
        "mode": "timeline",
        "time_range": {"from": "2026-10-01T00:00:00Z"},
        "time_basis": "review_generated_at",
        "page_size": 7,
        "cursor": "c2",
        "content_page_size": 100,
        "options": {"min_consistency": {"lsn": "1A/0"}},
        "result_id": "r-1",
    },
    tools.READ_SOURCE: {
        "source_reference_id": "sr-1",
        "scope": {"projects": ["p1"]},
        "read_kind": "version",
        "source_version": "3",
        "offset": 12,
        "page_size": 9,
        "cursor": "c3",
        "options": {"min_consistency": {"lsn": "0/1"}},
    },
}
BUILDERS: dict[str, Callable[[dict[str, Any]], Message]] = {
    tools.SEARCH: translate.search_request,
    tools.GET_CONTEXT: translate.get_context_request,
    tools.READ_SOURCE: translate.read_source_request,
}


def proto_files() -> Files:
    files: Files = {}
    for module in (descriptor_pb2, options_pb2, common_pb2, leaves_pb2, graph_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        files[proto.name] = proto
    return files


def edited(edit: Callable[[Files], None]) -> descriptor_pool.DescriptorPool:
    """common.proto and graph.proto, edited, in a pool of their own."""
    files = proto_files()
    edit(files)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(files[descriptor_pb2.DESCRIPTOR.name])  # what options.proto extends
    pool.Add(files[options_pb2.DESCRIPTOR.name])  # the options common.proto's fields carry
    pool.Add(files[COMMON])
    pool.Add(files[LEAVES])
    pool.Add(files[GRAPH])
    return pool


def message_in(files: Files, file: str, name: str) -> descriptor_pb2.DescriptorProto:
    return next(m for m in files[file].message_type if m.name == name)


def search_schema(pool: descriptor_pool.DescriptorPool) -> dict[str, Any]:
    return protoschema.message_schema(
        pool.FindMessageTypeByName("mirrortree.v1.SearchRequest"),
        tools.SEARCH_FIELDS,
        required=("query",),
        withheld=tools.WITHHELD,
    )


@pytest.mark.parametrize(("tool", "request_type", "fields", "required"), INPUTS)
def test_each_input_schema_offers_every_request_field_but_the_withheld(
    tool: str, request_type: type[Message], fields: Any, required: tuple[str, ...]
) -> None:
    schema = tools.TOOLS_BY_NAME[tool].input_schema
    Draft202012Validator.check_schema(schema)
    offered = [f.name for f in request_type.DESCRIPTOR.fields if f.name not in tools.WITHHELD]
    assert list(schema["properties"]) == offered == list(fields)
    assert schema["required"] == list(required)
    assert "as_of" not in schema["properties"]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize("tool", list(EVERY_ARGUMENT))
def test_every_offered_argument_reaches_its_request_field(tool: str) -> None:
    arguments = EVERY_ARGUMENT[tool]
    schema = tools.TOOLS_BY_NAME[tool].input_schema
    assert set(arguments) == set(schema["properties"])
    Draft202012Validator(schema).validate(arguments)
    request = BUILDERS[tool](dict(arguments))
    for name in arguments:
        field = request.DESCRIPTOR.fields_by_name[name]
        if field.is_repeated:
            assert len(getattr(request, name)) > 0, name
        elif field.message_type is not None:
            assert request.HasField(name), name
        else:
            assert getattr(request, name), name


@pytest.mark.parametrize(("tool", "response_type"), OUTPUTS)
def test_each_output_schema_names_the_seeds_response_parts_at_the_top_level(
    tool: str, response_type: type[Message]
) -> None:
    schema = tools.TOOLS_BY_NAME[tool].output_schema
    assert schema is not None
    Draft202012Validator.check_schema(schema)
    parts = ["requested_scope", "resolved_scope", "revision", "coverage", "evidence"]
    if tool != tools.GET_CONTEXT:
        parts.append("page")
    assert set(parts) <= set(schema["required"])
    for part in parts:
        assert schema["properties"][part]["description"], part
    assert "basis" not in schema["properties"]
    if tool == tools.GET_CONTEXT:  # a page per collection
        collection = schema["properties"]["collections"]["items"]
        assert "page" in collection["properties"]


def schema_nodes(schema: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every sub-schema with where it sits."""
    if not isinstance(schema, dict):
        return []
    found = [(path, schema)]
    for name, prop in schema.get("properties", {}).items():
        found += schema_nodes(prop, f"{path}.{name}")
    found += schema_nodes(schema.get("items"), f"{path}[]")
    for i, branch in enumerate(schema.get("oneOf", [])):
        found += schema_nodes(branch, f"{path}|{i}")
    return found


@pytest.mark.parametrize(("tool", "response_type"), OUTPUTS)
def test_output_schemas_name_every_field_and_refuse_empty_strings_and_proto_spellings(
    tool: str, response_type: type[Message]
) -> None:
    schema = tools.TOOLS_BY_NAME[tool].output_schema
    for path, node in schema_nodes(schema):
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False, path
        if node.get("type") == "string" and "enum" not in node:
            assert node.get("minLength") == 1 or "pattern" in node, path
        for value in node.get("enum", []):
            assert "unspecified" not in value and not value.startswith("validity_"), path


def test_the_scope_shape_is_the_scope_oneof_with_its_project_set_as_a_list_of_ids() -> None:
    scope = common_pb2.Scope.DESCRIPTOR
    assert [f.name for f in scope.oneofs_by_name["kind"].fields] == [f.name for f in scope.fields]
    project_set = common_pb2.ProjectSet.DESCRIPTOR
    assert [(f.name, f.type, f.is_repeated) for f in project_set.fields] == [
        ("project_ids", FieldDescriptor.TYPE_STRING, True)
    ]


def test_the_copied_descriptors_build_the_schemas_the_tools_offer() -> None:
    assert search_schema(edited(lambda files: None)) == tools.SEARCH_INPUT


def test_a_request_field_the_gateway_does_not_follow_stops_the_schema() -> None:
    def add_field(files: Files) -> None:
        message_in(files, GRAPH, "SearchRequest").field.add(
            name="exact", number=9, type=FieldProto.TYPE_BOOL, label=FieldProto.LABEL_OPTIONAL
        )

    with pytest.raises(protoschema.SchemaDrift, match=r"neither offered nor withheld: \['exact'\]"):
        search_schema(edited(add_field))


def test_a_request_field_removed_from_the_proto_stops_the_schema() -> None:
    def drop_cursor(files: Files) -> None:
        message = message_in(files, GRAPH, "SearchRequest")
        kept = [f for f in message.field if f.name != "cursor"]
        del message.field[:]
        message.field.extend(kept)

    with pytest.raises(protoschema.SchemaDrift, match=r"no such fields: \['cursor'\]"):
        search_schema(edited(drop_cursor))


def test_a_changed_field_type_stops_the_schema() -> None:
    def query_as_int64(files: Files) -> None:
        field = next(
            f for f in message_in(files, GRAPH, "SearchRequest").field if f.name == "query"
        )
        field.type = FieldProto.TYPE_INT64

    with pytest.raises(protoschema.SchemaDrift, match="query needs a maximum"):
        search_schema(edited(query_as_int64))


def test_a_scope_member_the_gateway_does_not_offer_stops_the_schema() -> None:
    def add_member(files: Files) -> None:
        message_in(files, COMMON, "Scope").field.add(
            name="realm",
            number=3,
            type=FieldProto.TYPE_STRING,
            label=FieldProto.LABEL_OPTIONAL,
            oneof_index=0,
        )

    with pytest.raises(protoschema.SchemaDrift, match=r"the shape of mirrortree\.v1\.Scope"):
        search_schema(edited(add_member))


def test_an_object_type_added_to_the_proto_is_offered_without_a_gateway_change() -> None:
    def add_value(files: Files) -> None:
        object_type = next(e for e in files[COMMON].enum_type if e.name == "ObjectType")
        object_type.value.add(name="MILESTONE_NOTE", number=10)

    schema = search_schema(edited(add_value))
    assert schema["properties"]["object_types"]["items"]["enum"] == [
        *tools.OBJECT_TYPE_NAMES,
        "milestone_note",
    ]


def test_a_withheld_or_excluded_name_the_proto_lacks_stops_the_schema() -> None:
    with pytest.raises(protoschema.SchemaDrift, match=r"no such fields: \['session_id'\]"):
        protoschema.request_schema(
            graph_pb2.SearchRequest, tools.SEARCH_FIELDS, withheld=("options", "session_id")
        )
    with pytest.raises(protoschema.SchemaDrift, match=r"has no values named \['note'\]"):
        enum_names(common_pb2.ObjectType.DESCRIPTOR, ("note",))


def test_a_renamed_response_field_is_renamed_in_the_output_schema() -> None:
    def rename_title(files: Files) -> None:
        hit = message_in(files, GRAPH, "SearchHit")
        next(f for f in hit.field if f.name == "title").name = "heading"

    hit = edited(rename_title).FindMessageTypeByName("mirrortree.v1.SearchHit")
    properties = results.output_schema(hit)["properties"]
    assert "heading" in properties
    assert "title" not in properties
