"""Validation of the story graph's other inputs: non-message sources and confirmed
preferences."""

from __future__ import annotations

from mirrortree.v1 import tree_pb2
from tree_service.convert import Checker
from tree_service.domain import MAX_GRAPH_TEXT, MAX_TITLE, NewPreference, NewSourceRevision
from tree_service.ingestion.review_builder import PREFERENCE, RESERVED_PREFIX, type_name

SOURCE_TYPES = ("task_status", "knowledge", "document")
MAX_SUBJECT = 500
MAX_PREFERENCE = 4_000


def source_revision(request: tree_pb2.RecordSourceRequest) -> NewSourceRevision:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("source_id", request.source_id)
    if request.source_type not in SOURCE_TYPES:
        check.fail(
            "source_type",
            f"must be one of {', '.join(SOURCE_TYPES)} (messages are tree nodes: write them "
            "with the tree RPCs)",
        )
    check.identifier("project_id", request.project_id, required=False)
    check.text("title", request.title, MAX_TITLE, required=False)
    if request.deleted:
        if request.text:
            check.fail("text", "must be empty when deleting a source")
    else:
        check.text("text", request.text, MAX_GRAPH_TEXT)
    if request.expected_revision < 0:
        check.fail("expected_revision", "must be >= 0 (0 creates the source)")
    check.done()
    return NewSourceRevision(
        source_id=request.source_id,
        source_type=request.source_type,
        project_id=request.project_id or None,
        title=request.title,
        text=None if request.deleted else request.text,
        expected_revision=request.expected_revision,
    )


def preference(request: tree_pb2.SetPreferenceRequest) -> NewPreference:
    check = Checker()
    check.idempotency_key(request.idempotency_key)
    check.identifier("preference_id", request.preference_id)
    if request.preference_id.startswith(RESERVED_PREFIX):
        check.fail(
            "preference_id",
            f"ids starting with {RESERVED_PREFIX!r} are reserved for memories accepted from "
            "canon candidates (AcceptCanonCandidate)",
        )
    scope = check.scope("scope", request.scope, required=True)
    if scope is not None and not scope.is_global and len(scope.projects) != 1:
        check.fail("scope", "a preference applies globally or to exactly one project")
    check.text("subject", request.subject, MAX_SUBJECT)
    check.text("text", request.text, MAX_PREFERENCE)
    check.identifier("confirmed_by", request.confirmed_by)
    about = []
    for i, ref in enumerate(request.about):
        name = type_name(ref.type)
        if name is None or name == PREFERENCE:
            check.fail(f"about[{i}].type", "must be a story-graph object type")
            continue
        check.identifier(f"about[{i}].id", ref.id)
        about.append({"type": name, "id": ref.id})
    if request.expected_revision < 0:
        check.fail("expected_revision", "must be >= 0 (0 creates the preference)")
    check.done()
    assert scope is not None
    return NewPreference(
        preference_id=request.preference_id,
        scope=scope,
        subject=request.subject,
        text=request.text,
        about=tuple(about),
        confirmed_by=request.confirmed_by,
        expected_revision=request.expected_revision,
    )
