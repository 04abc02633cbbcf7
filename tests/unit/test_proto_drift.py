"""Every enum map in the code follows its proto enum: a value added to a proto enum and not to
the maps, a map naming a value the enum lacks, or an inverse that is not one, fails here.

Each map is checked against its enum's descriptor: every value but the unset (zero) one is
mapped unless the table says why not, each side names only values that exist, the names are
the ones the enum's value names spell, and the domain values it maps to are all reachable.
The gateway's enum names, defaults and limits are tied to graph_service's, and the error
reasons the services send to ErrorReason. The middle part proves each map check can fail,
against enums edited in a private descriptor pool. No database.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import EnumDescriptor

from gateway import protoschema, tools, translate
from graph_service import convert as graph_convert
from graph_service import cursors as graph_cursors
from graph_service import errors as graph_errors
from graph_service import source_convert
from mirrortree import scopes, validation, vocabulary
from mirrortree.v1 import common_pb2, graph_pb2, tasks_pb2, tree_pb2
from tree_service import commitments, domain
from tree_service import convert as tree_convert
from tree_service import errors as tree_errors
from tree_service.canon import messages as canon_messages
from tree_service.canon import rules as canon_rules
from tree_service.context_assembly import layers as context_layers
from tree_service.context_assembly import messages as context_messages
from tree_service.ingestion import review_input
from tree_service.lifecycle import merge_rpc
from tree_service.lifecycle import rules as lifecycle_rules
from tree_service.realms import messages as realm_messages
from tree_service.tasks import messages as task_messages
from tree_service.tasks import rules as task_rules


def lower(name: str) -> str:
    return name.lower()


def coverage_basis_name(name: str) -> str:
    return name.removeprefix("COVERAGE_").lower()


def member_of(enum: type[Enum], renamed: Mapping[str, Any] | None = None) -> Callable[[str], Any]:
    """The domain Enum member a proto value's name spells (its lower-case name as value)."""
    return lambda name: (renamed or {}).get(name) or enum(name.lower())


@dataclass(frozen=True)
class EnumMap:
    """One map between a proto enum's numbers and the names or domain values kept for it."""

    name: str  # module.MAP, as a failure names it
    enum: EnumDescriptor
    mapping: Mapping[Any, Any]
    to_proto: bool  # keys are names or domain values, values are enum numbers
    spelled: Callable[[str], Any]  # the name or domain value a proto value's name stands for
    domain: Collection[Any] | None = None  # every name or domain value the map must reach
    not_mapped: tuple[str, ...] = ()  # proto values left out on purpose (the table says why)
    unspecified_means: str | None = None  # a from-proto map may read the unset value as this


@dataclass(frozen=True)
class Inverse:
    """Two maps that must undo each other, but for the keys named as one-way."""

    name: str
    from_proto: Mapping[Any, Any]
    to_proto: Mapping[Any, Any]
    one_way: tuple[Any, ...] = ()  # keys of to_proto without a way back, with a reason


def problems(case: EnumMap, enum: EnumDescriptor | None = None) -> list[str]:
    """What is wrong with a map against its enum (or against `enum`, a variant of it)."""
    enum = enum or case.enum
    numbers = {v.number: v.name for v in enum.values}
    by_name = {v.name: v.number for v in enum.values}
    pairs = [(v, k) for k, v in case.mapping.items()] if case.to_proto else case.mapping.items()
    found: list[str] = []
    for name in case.not_mapped:
        if name not in by_name:
            found.append(f"{case.name}: leaves out {name}, which {enum.full_name} lacks")
    if case.unspecified_means is not None and case.unspecified_means not in by_name:
        found.append(f"{case.name}: reads unset as {case.unspecified_means}, which is gone")
    mapped: set[int] = set()
    for number, value in pairs:
        if number not in numbers:
            found.append(f"{case.name}: maps {value!r} to {number}, which {enum.full_name} lacks")
            continue
        mapped.add(number)
        name = numbers[number]
        if number == 0:
            means = case.unspecified_means
            if case.to_proto or means is None:
                found.append(f"{case.name}: maps {value!r} to the unset value {name}")
            elif means in by_name and value != case.spelled(means):
                found.append(f"{case.name}: reads unset as {value!r}, not as {means}")
        elif name in case.not_mapped:
            found.append(f"{case.name}: maps {name}, which it says it leaves out")
        elif value != case.spelled(name):
            found.append(f"{case.name}: maps {name} to {value!r}, not {case.spelled(name)!r}")
    expected = {n for n, name in numbers.items() if n != 0 and name not in case.not_mapped}
    for number in sorted(expected - mapped):
        found.append(f"{case.name}: {enum.full_name}.{numbers[number]} is not mapped")
    names = [value for number, value in pairs if number != 0]
    if len(set(names)) != len(names):
        found.append(f"{case.name}: two proto values map to the same name: {sorted(names)}")
    if case.domain is not None:
        for value in case.domain:
            if value not in names:
                found.append(f"{case.name}: domain value {value!r} is not reachable")
        for value in names:
            if value not in case.domain:
                found.append(f"{case.name}: maps to {value!r}, which the domain lacks")
    return found


def inverse_problems(pair: Inverse) -> list[str]:
    found = []
    for number, value in pair.from_proto.items():
        if number != 0 and pair.to_proto.get(value) != number:
            found.append(f"{pair.name}: {number} → {value!r} → {pair.to_proto.get(value)}")
    for value, number in pair.to_proto.items():
        if value not in pair.one_way and pair.from_proto.get(number) != value:
            found.append(f"{pair.name}: {value!r} → {number} → {pair.from_proto.get(number)!r}")
    for value in pair.one_way:
        if value not in pair.to_proto:
            found.append(f"{pair.name}: one-way key {value!r} is not in the map")
    return found


ObjectType = common_pb2.ObjectType.DESCRIPTOR
TimeBasis = common_pb2.TimeBasis.DESCRIPTOR
ReadKind = graph_pb2.ReadKind.DESCRIPTOR
ContextMode = graph_pb2.ContextMode.DESCRIPTOR
read_kind_name = {"CURRENT_CONTENT": "current"}.get
searched_types = (*vocabulary.OBJECT_TYPE_NAMES,)
canonical_scope = member_of(
    domain.CanonicalScope, {"REHEARSAL_RECORD": domain.CanonicalScope.REHEARSAL}
)

MAPS = (
    # tree_service/convert.py
    EnumMap(
        "tree_service.convert.REALM_FROM_PROTO",
        tree_pb2.Realm.DESCRIPTOR,
        tree_convert.REALM_FROM_PROTO,
        False,
        member_of(domain.Realm),
        tuple(domain.Realm),
    ),
    EnumMap(
        "tree_service.convert.REALM_TO_PROTO",
        tree_pb2.Realm.DESCRIPTOR,
        tree_convert.REALM_TO_PROTO,
        True,
        member_of(domain.Realm),
        tuple(domain.Realm),
    ),
    EnumMap(
        "tree_service.convert.CONTINUATION_FROM_PROTO",
        tree_pb2.ContinuationKind.DESCRIPTOR,
        tree_convert.CONTINUATION_FROM_PROTO,
        False,
        member_of(domain.ContinuationKind),
        tuple(domain.ContinuationKind),
    ),
    EnumMap(
        "tree_service.convert.CONTINUATION_TO_PROTO",
        tree_pb2.ContinuationKind.DESCRIPTOR,
        tree_convert.CONTINUATION_TO_PROTO,
        True,
        member_of(domain.ContinuationKind),
        tuple(domain.ContinuationKind),
    ),
    EnumMap(
        "tree_service.convert.ANSWER_STATE_TO_PROTO",
        tree_pb2.AnswerState.DESCRIPTOR,
        tree_convert.ANSWER_STATE_TO_PROTO,
        True,
        member_of(domain.AnswerState),
        tuple(domain.AnswerState),
    ),
    EnumMap(
        "tree_service.canon.messages.SCOPE_TO_PROTO",
        tree_pb2.CanonicalScope.DESCRIPTOR,
        canon_messages.SCOPE_TO_PROTO,
        True,
        canonical_scope,
        tuple(domain.CanonicalScope),
    ),
    EnumMap(
        "tree_service.canon.messages.SCOPE_FROM_PROTO",
        tree_pb2.CanonicalScope.DESCRIPTOR,
        canon_messages.SCOPE_FROM_PROTO,
        False,
        canonical_scope,
        tuple(domain.CanonicalScope),
    ),
    EnumMap(
        "tree_service.convert.KIND_TO_PROTO",
        tree_pb2.NodeKind.DESCRIPTOR,
        tree_convert.KIND_TO_PROTO,
        True,
        member_of(domain.NodeKind),
        tuple(domain.NodeKind),
    ),
    # tree_service/ingestion/review_input.py
    EnumMap(
        "tree_service.ingestion.review_input.EVENT_KINDS",
        tree_pb2.EventKind.DESCRIPTOR,
        review_input.EVENT_KINDS,
        False,
        lower,
    ),
    EnumMap(
        "tree_service.ingestion.review_input.RELATION_KINDS",
        tree_pb2.RelationKind.DESCRIPTOR,
        review_input.RELATION_KINDS,
        False,
        lower,
    ),
    EnumMap(
        "tree_service.ingestion.review_input.COVERAGE_BASES",
        common_pb2.CoverageBasis.DESCRIPTOR,
        review_input.COVERAGE_BASES,
        False,
        coverage_basis_name,
        unspecified_means="COVERAGE_INTERVAL",
    ),
    EnumMap(
        "graph_service.convert.COVERAGE_BASIS_TO_PROTO",
        common_pb2.CoverageBasis.DESCRIPTOR,
        graph_convert.COVERAGE_BASIS_TO_PROTO,
        True,
        coverage_basis_name,
    ),
    # graph_service/convert.py; preferences are background, never searched graph objects
    EnumMap(
        "graph_service.convert.OBJECT_TYPES",
        ObjectType,
        graph_convert.OBJECT_TYPES,
        False,
        lower,
        searched_types,
        not_mapped=("PREFERENCE",),
    ),
    EnumMap(
        "graph_service.convert.OBJECT_TYPE_TO_PROTO",
        ObjectType,
        graph_convert.OBJECT_TYPE_TO_PROTO,
        True,
        lower,
        (*searched_types, "preference"),
    ),
    EnumMap(
        "graph_service.convert.TIME_BASES",
        TimeBasis,
        graph_convert.TIME_BASES,
        False,
        lower,
        unspecified_means="EVENT_TIME",
    ),
    EnumMap(
        "graph_service.convert.TIME_BASIS_TO_PROTO",
        TimeBasis,
        graph_convert.TIME_BASIS_TO_PROTO,
        True,
        lower,
    ),
    EnumMap(
        "graph_service.source_convert.READ_KINDS",
        ReadKind,
        source_convert.READ_KINDS,
        False,
        lambda name: read_kind_name(name) or name.lower(),
        unspecified_means="SNAPSHOT",
    ),
    EnumMap(
        "graph_service.source_convert.READ_KIND_TO_PROTO",
        ReadKind,
        source_convert.READ_KIND_TO_PROTO,
        True,
        lambda name: read_kind_name(name) or name.lower(),
    ),
    EnumMap(
        "graph_service.convert.VALIDITY_VALUES",
        common_pb2.ValidityState.DESCRIPTOR,
        graph_convert.VALIDITY_VALUES,
        True,
        lambda name: name.removeprefix("VALIDITY_").lower(),
    ),
    EnumMap(
        "graph_service.source_convert.SOURCE_AVAILABILITY",
        graph_pb2.SourceAvailability.DESCRIPTOR,
        source_convert.SOURCE_AVAILABILITY,
        True,
        lower,
    ),
    EnumMap(
        "graph_service.convert.CONTEXT_MODES",
        ContextMode,
        graph_convert.CONTEXT_MODES,
        False,
        lower,
        unspecified_means="CURRENT",
    ),
    EnumMap(
        "graph_service.convert.CONTEXT_MODE_TO_PROTO",
        ContextMode,
        graph_convert.CONTEXT_MODE_TO_PROTO,
        True,
        lower,
    ),
    # mirrortree/vocabulary.py: the names tree_service stores and graph_service reads back
    EnumMap(
        "mirrortree.vocabulary.CONFIRMATION_NAMES",
        common_pb2.ConfirmationState.DESCRIPTOR,
        vocabulary.CONFIRMATION_NAMES,
        False,
        lower,
    ),
    EnumMap(
        "mirrortree.vocabulary.CONFIRMATION_VALUES",
        common_pb2.ConfirmationState.DESCRIPTOR,
        vocabulary.CONFIRMATION_VALUES,
        True,
        lower,
    ),
    EnumMap(
        "mirrortree.vocabulary.PRECISION_NAMES",
        common_pb2.TimePrecision.DESCRIPTOR,
        vocabulary.PRECISION_NAMES,
        False,
        lower,
    ),
    EnumMap(
        "mirrortree.vocabulary.PRECISION_VALUES",
        common_pb2.TimePrecision.DESCRIPTOR,
        vocabulary.PRECISION_VALUES,
        True,
        lower,
    ),
    # tree_service/realms, context_assembly, citations, lifecycle
    EnumMap(
        "tree_service.convert.LIFECYCLE_TO_PROTO",
        tree_pb2.AnswerLifecycle.DESCRIPTOR,
        tree_convert.LIFECYCLE_TO_PROTO,
        True,
        member_of(domain.AnswerLifecycle),
        tuple(domain.AnswerLifecycle),
    ),
    EnumMap(
        "tree_service.canon.messages.INVITATION_STATE_TO_PROTO",
        tree_pb2.InvitationState.DESCRIPTOR,
        canon_messages.INVITATION_STATE_TO_PROTO,
        True,
        lambda name: canon_rules.InvitationState(name.removeprefix("INVITATION_").lower()),
        tuple(canon_rules.InvitationState),
    ),
    EnumMap(
        "tree_service.lifecycle.merge_rpc.SOURCE_STATE_TO_PROTO",
        tree_pb2.MergeSourceState.DESCRIPTOR,
        merge_rpc.SOURCE_STATE_TO_PROTO,
        True,
        lambda name: lifecycle_rules.MergeSourceState(name.removeprefix("SOURCE_").lower()),
        tuple(lifecycle_rules.MergeSourceState),
    ),
    EnumMap(
        "tree_service.convert.BRANCH_STATE_TO_PROTO",
        tree_pb2.BranchState.DESCRIPTOR,
        tree_convert.BRANCH_STATE_TO_PROTO,
        True,
        member_of(domain.BranchState),
        tuple(domain.BranchState),
    ),
    EnumMap(
        "tree_service.realms.messages.KIND_FROM_PROTO",
        tree_pb2.CommitmentKind.DESCRIPTOR,
        realm_messages.KIND_FROM_PROTO,
        False,
        member_of(commitments.CommitmentKind),
        tuple(commitments.CommitmentKind),
    ),
    EnumMap(
        "tree_service.realms.messages.STATE_TO_PROTO",
        tree_pb2.CommitmentState.DESCRIPTOR,
        realm_messages.STATE_TO_PROTO,
        True,
        member_of(commitments.CommitmentState),
        tuple(commitments.CommitmentState),
    ),
    EnumMap(
        "tree_service.context_assembly.messages.LAYER_TO_PROTO",
        tree_pb2.ContextLayer.DESCRIPTOR,
        context_messages.LAYER_TO_PROTO,
        True,
        member_of(context_layers.Layer),
        tuple(context_layers.Layer),
    ),
    EnumMap(
        "tree_service.context_assembly.messages.INCLUSION_TO_PROTO",
        tree_pb2.ContextInclusion.DESCRIPTOR,
        context_messages.INCLUSION_TO_PROTO,
        True,
        member_of(
            context_layers.Inclusion,
            {
                "INCLUDED_VERBATIM": context_layers.Inclusion.VERBATIM,
                "INCLUDED_AS_SUMMARY": context_layers.Inclusion.SUMMARY,
                "INCLUDED_AS_FRAGMENT": context_layers.Inclusion.FRAGMENT,
            },
        ),
        tuple(context_layers.Inclusion),
    ),
    EnumMap(
        "tree_service.convert.CITATION_STATUS_TO_PROTO",
        tree_pb2.CitationStatus.DESCRIPTOR,
        tree_convert.CITATION_STATUS_TO_PROTO,
        True,
        lambda name: name.lower().removeprefix("citation_"),
        not_mapped=("CITATION_CURRENT",),  # a stored citation without a status is current
    ),
    # tree_service/tasks/messages.py
    EnumMap(
        "tree_service.tasks.messages.STATE_TO_PROTO",
        tasks_pb2.TaskState.DESCRIPTOR,
        task_messages.STATE_TO_PROTO,
        True,
        lambda name: task_rules.TaskState(name.removeprefix("TASK_").lower()),
        tuple(task_rules.TaskState),
    ),
    EnumMap(
        "tree_service.tasks.messages.STOP_TO_PROTO",
        tasks_pb2.TaskStopReason.DESCRIPTOR,
        task_messages.STOP_TO_PROTO,
        True,
        lambda name: task_rules.StopReason(name.removeprefix("TASK_").lower()),
        tuple(task_rules.StopReason),
    ),
    EnumMap(
        "tree_service.tasks.messages.REPORT_TO_PROTO",
        tasks_pb2.TaskReportKind.DESCRIPTOR,
        task_messages.REPORT_TO_PROTO,
        True,
        lambda name: (
            task_rules.ReportKind.CANCELLED
            if name == "REPORT_CANCELLATION"
            else task_rules.ReportKind(name.removeprefix("REPORT_").lower())
        ),
        tuple(task_rules.ReportKind),
    ),
    EnumMap(
        "tree_service.tasks.messages.INSTRUCTION_FROM_PROTO",
        tasks_pb2.TaskInstruction.DESCRIPTOR,
        task_messages.INSTRUCTION_FROM_PROTO,
        False,
        lambda name: task_rules.Instruction(name.removeprefix("TASK_").lower()),
        tuple(task_rules.Instruction),
    ),
)

INVERSES = (
    Inverse(
        "tree_service.convert.REALM_FROM_PROTO / REALM_TO_PROTO",
        tree_convert.REALM_FROM_PROTO,
        tree_convert.REALM_TO_PROTO,
    ),
    Inverse(
        "tree_service.convert.CONTINUATION_FROM_PROTO / CONTINUATION_TO_PROTO",
        tree_convert.CONTINUATION_FROM_PROTO,
        tree_convert.CONTINUATION_TO_PROTO,
    ),
    Inverse(
        "tree_service.canon.messages.SCOPE_FROM_PROTO / SCOPE_TO_PROTO",
        canon_messages.SCOPE_FROM_PROTO,
        canon_messages.SCOPE_TO_PROTO,
    ),
    # preference is named in refs (get_context) but never searched, so OBJECT_TYPES lacks it
    Inverse(
        "graph_service.convert.OBJECT_TYPES / OBJECT_TYPE_TO_PROTO",
        graph_convert.OBJECT_TYPES,
        graph_convert.OBJECT_TYPE_TO_PROTO,
        one_way=("preference",),
    ),
    Inverse(
        "graph_service.convert.TIME_BASES / TIME_BASIS_TO_PROTO",
        graph_convert.TIME_BASES,
        graph_convert.TIME_BASIS_TO_PROTO,
    ),
    Inverse(
        "graph_service.source_convert.READ_KINDS / READ_KIND_TO_PROTO",
        source_convert.READ_KINDS,
        source_convert.READ_KIND_TO_PROTO,
    ),
    Inverse(
        "graph_service.convert.CONTEXT_MODES / CONTEXT_MODE_TO_PROTO",
        graph_convert.CONTEXT_MODES,
        graph_convert.CONTEXT_MODE_TO_PROTO,
    ),
    Inverse(
        "mirrortree.vocabulary.CONFIRMATION_NAMES / CONFIRMATION_VALUES",
        vocabulary.CONFIRMATION_NAMES,
        vocabulary.CONFIRMATION_VALUES,
    ),
    Inverse(
        "mirrortree.vocabulary.PRECISION_NAMES / PRECISION_VALUES",
        vocabulary.PRECISION_NAMES,
        vocabulary.PRECISION_VALUES,
    ),
)


@pytest.mark.parametrize("case", MAPS, ids=lambda case: case.name)
def test_every_enum_map_covers_its_proto_enum_exactly(case: EnumMap) -> None:
    assert problems(case) == []


@pytest.mark.parametrize("pair", INVERSES, ids=lambda pair: pair.name)
def test_every_inverse_map_undoes_its_map(pair: Inverse) -> None:
    assert inverse_problems(pair) == []


def test_the_domain_object_types_are_the_searched_proto_object_types() -> None:
    assert {t.value for t in domain.ObjectType} == set(graph_convert.OBJECT_TYPES.values())
    assert set(vocabulary.OBJECT_TYPE_RANKS) == set(vocabulary.OBJECT_TYPE_NAMES)
    assert sorted(vocabulary.OBJECT_TYPE_RANKS.values()) == list(
        range(1, len(vocabulary.OBJECT_TYPE_NAMES) + 1)
    )


def test_tree_service_names_object_types_as_graph_service_reads_them() -> None:
    """review_input.type_name spells every proto object type; graph_service reads it back."""
    for value in ObjectType.values:
        name = review_input.type_name(value.number)
        if value.number == 0:
            assert name is None
        else:
            assert graph_convert.OBJECT_TYPE_TO_PROTO[str(name)] == value.number


def test_the_evidenced_relations_are_relation_kinds() -> None:
    assert set(review_input.EVIDENCED_RELATIONS) <= set(review_input.RELATION_KINDS.values())
    assert review_input.PREFERENCE == "preference" == review_input.type_name(common_pb2.PREFERENCE)


def test_every_renamed_tool_enum_value_exists_and_clashes_with_no_other_value() -> None:
    pool = descriptor_pool.Default()
    for (enum_name, proto_name), tool_name in protoschema.TOOL_ENUM_NAMES.items():
        enum = pool.FindEnumTypeByName(enum_name)
        assert proto_name in enum.values_by_name
        others = [v.name.lower() for v in enum.values if v.name != proto_name]
        assert tool_name not in others
    assert len(protoschema.PROTO_ENUM_NAMES) == len(protoschema.TOOL_ENUM_NAMES)


def test_every_tool_enum_name_leads_back_to_its_proto_value() -> None:
    """What an answer names (to_json) is what a call may pass back (translate._enum)."""
    files = (common_pb2.DESCRIPTOR, graph_pb2.DESCRIPTOR)
    enums = [e for f in files for e in f.enum_types_by_name.values()]
    for enum in enums:
        for value in enum.values:
            tool_name = protoschema.tool_enum_name(enum.full_name, value.name)
            assert protoschema.proto_enum_name(enum.full_name, tool_name) == value.name


def test_the_tools_accept_the_names_graph_service_knows() -> None:
    search = tools.SEARCH_INPUT["properties"]
    context = tools.GET_CONTEXT_INPUT["properties"]
    read = tools.READ_SOURCE_INPUT["properties"]
    assert search["object_types"]["items"]["enum"] == list(graph_convert.OBJECT_TYPES.values())
    assert set(context["object_ref"]["properties"]["type"]["enum"]) == set(
        graph_convert.OBJECT_TYPE_TO_PROTO
    )
    assert set(search["time_basis"]["enum"]) == set(graph_convert.TIME_BASIS_TO_PROTO)
    assert set(context["mode"]["enum"]) == set(graph_convert.CONTEXT_MODE_TO_PROTO)
    assert set(read["read_kind"]["enum"]) == set(source_convert.READ_KIND_TO_PROTO)
    # A gRPC caller who leaves the field unset gets what a tool caller who omits it gets.
    unset_basis = graph_convert.TIME_BASES[common_pb2.TIME_BASIS_UNSPECIFIED]
    unset_mode = graph_convert.CONTEXT_MODES[graph_pb2.CONTEXT_MODE_UNSPECIFIED]
    unset_kind = source_convert.READ_KINDS[graph_pb2.READ_KIND_UNSPECIFIED]
    assert search["time_basis"]["default"] == unset_basis
    assert context["mode"]["default"] == unset_mode
    assert read["read_kind"]["default"] == unset_kind


def test_the_tools_offer_graph_service_limits() -> None:
    assert tools.MAX_QUERY == graph_convert.MAX_QUERY
    assert tools.DEFAULT_PAGE == graph_convert.DEFAULT_PAGE
    assert tools.MAX_PAGE == graph_convert.MAX_PAGE
    assert tools.DEFAULT_CONTENT_PAGE == graph_convert.DEFAULT_CONTENT_PAGE
    assert tools.MAX_CONTENT_PAGE == graph_convert.MAX_CONTENT_PAGE
    assert tools.MAX_CURSOR_CHARS == graph_cursors.MAX_CURSOR_CHARS
    assert (scopes.MAX_PROJECT_ID, scopes.MAX_PROJECTS, validation.MAX_ID) == (200, 50, 200)


# ---- each check can fail ------------------------------------------------------------------


def enum_variant(
    enum: EnumDescriptor, *, add: str = "", drop: str = "", rename: tuple[str, str] = ("", "")
) -> EnumDescriptor:
    """A copy of `enum` under its own full name, in a pool of its own, with one value added
    (numbered after the last), dropped or renamed."""
    file = descriptor_pb2.FileDescriptorProto(
        name=f"drift/{enum.full_name}.proto", package=enum.file.package, syntax="proto3"
    )
    proto = file.enum_type.add()
    enum.CopyToProto(proto)
    proto.name = enum.full_name.removeprefix(f"{enum.file.package}.").replace(".", "_")
    if add:
        proto.value.add(name=add, number=max(v.number for v in enum.values) + 1)
    if drop:
        kept = [v for v in proto.value if v.name != drop]
        del proto.value[:]
        proto.value.extend(kept)
    for value in proto.value:
        if value.name == rename[0]:
            value.name = rename[1]
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool.FindEnumTypeByName(f"{enum.file.package}.{proto.name}")


@pytest.mark.parametrize("case", MAPS, ids=lambda case: case.name)
def test_a_value_added_to_the_proto_enum_and_not_to_the_map_fails(case: EnumMap) -> None:
    found = problems(case, enum_variant(case.enum, add="DRIFT_ADDED_VALUE"))
    assert any("DRIFT_ADDED_VALUE is not mapped" in problem for problem in found), found


@pytest.mark.parametrize("case", MAPS, ids=lambda case: case.name)
def test_a_map_naming_a_value_the_proto_enum_lost_fails(case: EnumMap) -> None:
    numbers = {v.number: v.name for v in case.enum.values}
    mapped = case.mapping.values() if case.to_proto else case.mapping.keys()
    last = numbers[max(mapped)]
    found = problems(case, enum_variant(case.enum, drop=last))
    assert any("which" in problem and "lacks" in problem for problem in found), found


@pytest.mark.parametrize("case", [c for c in MAPS if c.name.endswith("TIME_BASIS_TO_PROTO")])
def test_a_renamed_proto_value_fails_where_names_are_spelled_from_it(case: EnumMap) -> None:
    found = problems(case, enum_variant(case.enum, rename=("RECORDED_AT", "WRITTEN_AT")))
    assert any("maps WRITTEN_AT to 'recorded_at'" in problem for problem in found), found


def test_a_map_leaving_out_a_domain_value_fails() -> None:
    case = next(c for c in MAPS if c.name.endswith(".REALM_TO_PROTO"))
    partial = {k: v for k, v in case.mapping.items() if k is not domain.Realm.WORLD}
    found = problems(EnumMap(**{**case.__dict__, "mapping": partial}))
    assert "domain value <Realm.WORLD: 'world'> is not reachable" in " ".join(found)
    assert any("mirrortree.v1.Realm.WORLD is not mapped" in problem for problem in found)


def test_a_map_to_a_name_the_domain_lacks_or_the_unset_value_fails() -> None:
    case = next(c for c in MAPS if c.name.endswith(".OBJECT_TYPES"))
    widened = {**case.mapping, common_pb2.PREFERENCE: "preference"}
    found = problems(EnumMap(**{**case.__dict__, "mapping": widened}))
    assert any("maps PREFERENCE, which it says it leaves out" in p for p in found), found
    assert any("'preference', which the domain lacks" in p for p in found), found
    unset = {**case.mapping, common_pb2.OBJECT_TYPE_UNSPECIFIED: "event"}
    found = problems(EnumMap(**{**case.__dict__, "mapping": unset}))
    assert any("to the unset value" in p for p in found), found


def test_two_values_mapped_to_one_name_fail() -> None:
    case = next(c for c in MAPS if c.name.endswith("EVENT_KINDS"))
    doubled = {**case.mapping, tree_pb2.MILESTONE: "change"}
    found = problems(EnumMap(**{**case.__dict__, "mapping": doubled}))
    assert any("to the same name" in p for p in found), found


def test_an_inverse_that_is_not_one_fails() -> None:
    pair = next(p for p in INVERSES if p.name.startswith("graph_service.source_convert.READ_KINDS"))
    swapped = {**pair.to_proto, "version": graph_pb2.SNAPSHOT, "snapshot": graph_pb2.VERSION}
    assert len(inverse_problems(Inverse(pair.name, pair.from_proto, swapped))) == 4
    stale = Inverse(pair.name, pair.from_proto, pair.to_proto, one_way=("gone",))
    assert inverse_problems(stale) == [f"{pair.name}: one-way key 'gone' is not in the map"]


# ---- error reasons ----------------------------------------------------------------------


def proto_reasons() -> set[str]:
    """ErrorReason's values as sent in ErrorInfo: lower case, without the _reason suffix that
    keeps some names apart from the status codes'."""
    values = common_pb2.ErrorReason.DESCRIPTOR.values
    return {v.name.lower().removesuffix("_reason") for v in values if v.number != 0}


def sent_reasons(base: type[Exception], also: tuple[str, ...] = ()) -> set[str]:
    """The `reason` of an error class and of all its subclasses, plus `also`."""
    classes: list[Any] = [base]
    reasons = set(also)
    while classes:
        error = classes.pop()
        reasons.add(str(error.reason))
        classes += error.__subclasses__()
    return reasons


# The server plumbing both services share answers a lost database itself (mirrortree.server).
GRAPH_REASONS = sent_reasons(graph_errors.GraphError, ("as_of_unsupported", "database_unavailable"))
TREE_REASONS = sent_reasons(
    tree_errors.TreeServiceError, ("database_unavailable", "outcome_unknown")
)


# Sent by the servers' interceptors (mirrortree.callers, mirrortree.limits) and the gateway.
GUARD_REASONS = {"permission_denied", "confirmation_required", "overloaded", "rate_limited"}


def test_every_reason_the_services_send_is_an_error_reason() -> None:
    assert GRAPH_REASONS - proto_reasons() == set()
    assert TREE_REASONS - proto_reasons() == set()
    assert GUARD_REASONS - proto_reasons() == set()


def test_the_gateway_tells_a_model_what_to_do_after_every_story_graph_reason() -> None:
    situational = {"scope_required", "scope_mismatch"}  # translate.scope_next_step
    assert GRAPH_REASONS - situational <= set(translate.NEXT_STEP)
    assert set(translate.NEXT_STEP) <= GRAPH_REASONS | GUARD_REASONS | {
        code.name.lower() for code in grpc.StatusCode
    }
    assert {"overloaded", "rate_limited"} <= set(translate.NEXT_STEP)
