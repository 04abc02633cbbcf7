"""The tree service's rules on plain domain values: no database, no server."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mirrortree.scopes import ScopeValue
from tree_service import rules
from tree_service.citations import anchors
from tree_service.domain import (
    AnswerState,
    CanonicalScope,
    CitationRequest,
    EndReference,
    Node,
    NodeKind,
    ObjectType,
    Realm,
    RealmChoice,
    ReviewResult,
    StoryObject,
)
from tree_service.errors import InvalidInput, PreconditionFailed, RevisionConflict

TREE = str(uuid.uuid4())
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def node(kind: NodeKind = NodeKind.ANSWER, **values: Any) -> Node:
    fields: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "tree_id": TREE,
        "parent_id": None,
        "kind": kind,
        "realm": Realm.REAL,
        "text": "some text",
        "revision": 1,
        "ordinal": 1,
        "created_at": NOW,
    }
    fields.update(values)
    return Node(**fields)


def review(**values: Any) -> ReviewResult:
    fields: dict[str, Any] = {
        "result_id": "r",
        "scope": ScopeValue.of_projects(["p"]),
        "phase": "daily",
        "covered_from": None,
        "covered_to": None,
        "review_generated_at": NOW,
        "objects": (),
        "excluded_source_types": (),
    }
    fields.update(values)
    return ReviewResult(**fields)


def test_the_rules_and_domain_load_neither_the_driver_nor_grpc_nor_generated_code():
    # A fresh interpreter, so that what the test session already imported does not hide what
    # these modules pull in, directly or through the modules they import.
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tree_service.rules, tree_service.domain, tree_service.errors; "
            "print(' '.join(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    ).stdout.split()
    forbidden = [
        name
        for name in loaded
        if name.split(".")[0] in ("asyncpg", "grpc", "google") or name.startswith("mirrortree.v1")
    ]
    assert forbidden == []


def test_a_malformed_id_names_its_field():
    with pytest.raises(InvalidInput) as caught:
        rules.parse_id("nope", "parent_id")
    assert caught.value.violations[0].field == "parent_id"
    assert rules.parse_id(TREE, "tree_id") == uuid.UUID(TREE)


def test_a_node_of_another_kind_is_refused_with_its_kind():
    question = node(NodeKind.QUESTION)
    rules.expect_kind(question, "question_id", NodeKind.QUESTION)
    with pytest.raises(PreconditionFailed) as caught:
        rules.expect_kind(question, "parent_id", NodeKind.ANSWER, NodeKind.CONTINUATION)
    assert caught.value.metadata == {"field": "parent_id", "kind": "question"}
    assert "answer or continuation" in caught.value.message


def test_nothing_builds_on_a_streaming_bud():
    for state in (None, AnswerState.SEALED, AnswerState.FROZEN):
        rules.expect_settled(node(answer_state=state), "answer_id")
    with pytest.raises(PreconditionFailed, match="still streaming"):
        rules.expect_settled(node(answer_state=AnswerState.STREAMING), "answer_id")


def test_a_node_of_another_tree_is_refused():
    rules.expect_same_tree(node(), TREE, "parent_id")
    with pytest.raises(PreconditionFailed, match="another tree"):
        rules.expect_same_tree(node(), str(uuid.uuid4()), "parent_id")


def test_a_new_node_takes_the_explicit_realm_else_its_parents_else_the_tree_default():
    default = RealmChoice(Realm.REHEARSAL, None)
    parent = node(realm=Realm.WORLD, world="w")
    unset = RealmChoice(None, None)
    assert rules.node_realm(RealmChoice(Realm.REAL, None), parent, default) == (Realm.REAL, None)
    assert rules.node_realm(unset, parent, default) == (Realm.WORLD, "w")
    assert rules.node_realm(unset, None, default) == (Realm.REHEARSAL, None)
    # Only a world realm keeps a world.
    assert rules.node_realm(unset, None, RealmChoice(Realm.REAL, "w")) == (Realm.REAL, None)


def test_an_extension_continues_a_frozen_answer_of_the_same_question_in_its_realm():
    question = node(NodeKind.QUESTION)
    frozen = node(
        parent_id=question.id, answer_state=AnswerState.FROZEN, realm=Realm.WORLD, world="w"
    )
    inherited = rules.extension_realm(question, frozen, RealmChoice(None, None))
    assert inherited == RealmChoice(Realm.WORLD, "w")
    assert rules.extension_realm(question, frozen, inherited) == inherited
    with pytest.raises(PreconditionFailed) as caught:
        rules.extension_realm(question, frozen, RealmChoice(Realm.REAL, None))
    assert caught.value.metadata == {"field": "open.realm"}
    sealed = dataclasses.replace(frozen, answer_state=AnswerState.SEALED)
    with pytest.raises(PreconditionFailed, match="only a frozen"):
        rules.extension_realm(question, sealed, RealmChoice(None, None))
    elsewhere = dataclasses.replace(frozen, parent_id=str(uuid.uuid4()))
    with pytest.raises(PreconditionFailed, match="not an answer of question"):
        rules.extension_realm(question, elsewhere, RealmChoice(None, None))


def test_only_a_settled_answer_of_the_question_with_text_is_adopted():
    question = node(NodeKind.QUESTION)
    rules.expect_adoptable(question, node(parent_id=question.id))
    refused = {
        "answers another question": node(),
        "still streaming": node(parent_id=question.id, answer_state=AnswerState.STREAMING),
        "holds no text": node(parent_id=question.id, text="", answer_state=AnswerState.FROZEN),
    }
    for message, answer in refused.items():
        with pytest.raises(PreconditionFailed, match=message):
            rules.expect_adoptable(question, answer)


def test_a_citation_snapshots_its_range_and_the_whole_text_when_no_end_is_given():
    cited = node(text="0123456789")
    part = anchors.citation_snapshot(0, CitationRequest(cited.id, 2, 5, "n"), cited, True, 0)
    assert (part["snapshot"], part["start"], part["end"]) == ("234", 2, 5)
    whole = anchors.citation_snapshot(0, CitationRequest(cited.id, 0, 0, ""), cited, True, 0)
    assert whole["snapshot"] == "0123456789"


def test_a_citation_is_refused_across_people_outside_the_text_or_past_the_budget():
    cited = node(text="0123456789")
    with pytest.raises(PreconditionFailed, match="another person's"):
        anchors.citation_snapshot(0, CitationRequest(cited.id, 0, 0, ""), cited, False, 0)
    with pytest.raises(InvalidInput, match="outside the cited text"):
        anchors.citation_snapshot(1, CitationRequest(cited.id, 4, 11, ""), cited, True, 0)
    with pytest.raises(InvalidInput) as caught:
        anchors.citation_snapshot(
            2, CitationRequest(cited.id, 0, 0, ""), cited, True, anchors.MAX_CITED - 9
        )
    assert caught.value.violations[0].field == "citations[2].end"


def test_a_path_longer_than_the_canon_limit_is_refused():
    leaf = node()
    rules.expect_path_within_limit(leaf, rules.MAX_CANON_NODES)
    with pytest.raises(PreconditionFailed, match="longer than"):
        rules.expect_path_within_limit(leaf, rules.MAX_CANON_NODES + 1)


def test_selected_nodes_must_lie_on_one_path():
    leaf = node()
    on_path = {leaf.id}
    rules.expect_on_one_path([leaf.id], on_path, leaf)
    with pytest.raises(InvalidInput) as caught:
        rules.expect_on_one_path([leaf.id, str(uuid.uuid4())], on_path, leaf)
    assert caught.value.violations[0].field == "nodes.node_ids[1]"


def test_an_extension_brings_its_frozen_parts_right_before_it():
    question = node(NodeKind.QUESTION)
    first = node(answer_state=AnswerState.FROZEN)
    second = node(answer_state=AnswerState.FROZEN, extends_answer_id=first.id)
    extension = node(extends_answer_id=second.id)
    whole, parts = rules.with_extended_parts(
        [question, extension], {question.id: [], extension.id: [first, second]}
    )
    assert [n.id for n in whole] == [question.id, first.id, second.id, extension.id]
    assert parts == {first.id, second.id}
    assert rules.canonical_scope(whole, parts) == (CanonicalScope.REAL_EXPERIENCE, "")


def test_only_complete_answers_of_one_realm_and_world_are_canonicalized():
    with pytest.raises(PreconditionFailed, match="only complete"):
        rules.canonical_scope([node(answer_state=AnswerState.FROZEN)], set())
    with pytest.raises(PreconditionFailed) as caught:
        rules.canonical_scope([node(), node(realm=Realm.REHEARSAL)], set())
    assert caught.value.metadata == {"reason": "realm_policy"}
    worlds = [node(realm=Realm.WORLD, world="a"), node(realm=Realm.WORLD, world="b")]
    with pytest.raises(PreconditionFailed, match="spans worlds"):
        rules.canonical_scope(worlds, set())
    assert rules.canonical_scope(worlds[:1], set()) == (CanonicalScope.WORLD_CANON, "a")


def test_a_source_is_created_at_zero_replaced_at_its_revision_and_keeps_its_type():
    rules.expect_source_write("s", "document", 0, None)
    rules.expect_source_write("s", "document", 3, ("document", 3))
    with pytest.raises(RevisionConflict) as conflict:
        rules.expect_source_write("s", "document", 2, None)
    assert conflict.value.current == 0
    with pytest.raises(RevisionConflict) as stale:
        rules.expect_source_write("s", "document", 2, ("document", 3))
    assert stale.value.current == 3
    with pytest.raises(InvalidInput, match="keeps its type"):
        rules.expect_source_write("s", "knowledge", 3, ("document", 3))


def test_a_preference_is_created_at_zero_and_replaced_at_its_revision():
    rules.expect_preference_write("p", 0, None)
    rules.expect_preference_write("p", 2, 2)
    for expected, current in ((1, None), (0, 2), (1, 2)):
        with pytest.raises(RevisionConflict):
            rules.expect_preference_write("p", expected, current)


def test_a_preference_applies_to_its_own_project_and_globally():
    project = ScopeValue.of_projects(["p"])
    assert rules.preference_applies(project, "global")
    assert rules.preference_applies(project, project.key)
    assert not rules.preference_applies(project, ScopeValue.of_projects(["q"]).key)
    assert rules.preference_applies(ScopeValue.global_scope(), project.key)


def test_each_field_naming_a_missing_end_is_a_violation():
    result = review(
        external_references=(
            EndReference("events[0].entity_ids[0]", "entity", "e1"),
            EndReference("relations[0].to", "preference", "p1"),
        )
    )
    assert rules.missing_ends(result, {("entity", "e1"), ("preference", "p1")}) == []
    missing = rules.missing_ends(result, set())
    assert [v.field for v in missing] == ["events[0].entity_ids[0]", "relations[0].to"]
    assert "does not exist or does not apply" in missing[1].description


def test_a_reused_reference_id_names_what_differs():
    mine = StoryObject(
        ObjectType.SOURCE_REFERENCE,
        "s",
        "",
        "new fragment",
        details={"source_type": "document", "source_id": "d", "locator": {"page": "2"}},
    )
    result = review(objects=(mine,), fields={("source_reference", "s"): "source_references[0]"})
    earlier = {"source_type": "document", "source_id": "d", "locator": {"page": "1"}}
    violation = rules.reference_conflict(result, mine, "r0", "old fragment", earlier)
    assert violation.field == "source_references[0].id"
    assert "fragment; locator.page ('1' there, '2' here)" in violation.description
    assert rules.source_reference_differences("new fragment", mine.details, mine) == ["content"]


def test_relation_ends_are_pinned_to_the_given_or_the_recorded_version():
    details = {
        "relation_kind": "causes",
        "from": {"type": "event", "id": "e1", "revision": "3"},
        "to": {"type": "event", "id": "e2"},
    }
    recorded = {("event", "e2"): {"recorded_in": "r0", "object_revision": "1"}}
    pinned = rules.pin_ends(details, recorded)
    assert pinned["from"]["version"] == {"revision": "3", "given_by": "review"}
    assert pinned["to"]["version"] == {
        "recorded_in": "r0",
        "object_revision": "1",
        "given_by": "recorded_copy",
    }
    assert rules.pin_ends({"no": "relation"}, recorded) == {"no": "relation"}
