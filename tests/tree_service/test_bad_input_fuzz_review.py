"""Fuzzed story-graph ingestion — RecordReview (generated whole, and a valid result with one or
two bad fields), RecordSource and SetPreference — is answered OK or with a documented, named
refusal that writes nothing (see `fuzzing`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.fuzzing import (
    FUZZ,
    KEYS,
    TIMES,
    Code,
    Conversation,
    answered,
    enums,
    ids,
    ints,
    scopes,
    strings,
    unary,
)


def review_request(conversation: Conversation, data) -> tree_pb2.RecordReviewRequest:
    object_ids = st.one_of(st.sampled_from(["e1", "n1", "r1", "mainline-x"]), strings())
    refs = st.lists(st.one_of(st.sampled_from(["r1", "r2"]), strings()), max_size=2)
    object_refs = st.builds(common_pb2.ObjectRef, type=enums(list(range(10))), id=object_ids)
    event_times = st.builds(
        common_pb2.EventTime,
        start=TIMES,
        end=TIMES,
        precision=enums(list(range(7))),
        basis=strings(),
        known=st.booleans(),
    )
    confirmations = enums([0, 1, 2, 3, 4])
    source = st.builds(
        tree_pb2.SourceReferenceInput,
        id=st.one_of(st.sampled_from(["r1", "r2"]), object_ids),
        source_type=st.one_of(st.just("message"), strings()),
        source_id=st.one_of(ids(conversation), st.just("")),
        source_version=strings(),
        fragment=strings(),
        fragment_start=st.one_of(st.integers(-1, 5), ints()),
        fragment_end=st.one_of(st.integers(-1, 5), ints()),
        locator=st.builds(
            common_pb2.SourceLocator,
            project_id=strings(),
            session_id=ids(conversation),
            message_id=ids(conversation),
            order=ints(),
            role=strings(),
            known=st.booleans(),
        ),
    )
    relation = st.builds(
        lambda i, kind, a, b, reason, cited, state, effective, fr, tr: tree_pb2.RelationInput(
            id=i,
            kind=kind,
            to=b,
            reason=reason,
            source_reference_ids=cited,
            confirmation_state=state,
            effective_at=effective,
            from_revision=fr,
            to_revision=tr,
            **{"from": a},
        ),
        object_ids,
        enums([0, 1, 2, 3, 4]),
        object_refs,
        object_refs,
        strings(),
        refs,
        confirmations,
        TIMES,
        st.one_of(st.just(""), strings()),
        st.one_of(st.just(""), strings()),
    )
    return tree_pb2.RecordReviewRequest(
        idempotency_key=data.draw(KEYS),
        result_id=data.draw(st.one_of(st.builds(lambda: unique("result")), object_ids)),
        scope=data.draw(scopes()),
        phase=data.draw(st.one_of(st.just("daily"), strings())),
        covered=common_pb2.TimeRange(**{"from": data.draw(TIMES), "to": data.draw(TIMES)}),
        review_generated_at=data.draw(TIMES),
        story_lines=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.StoryLineInput,
                    id=object_ids,
                    title=strings(),
                    event_ids=st.lists(object_ids, max_size=2),
                    entity_ids=st.lists(object_ids, max_size=2),
                ),
                max_size=1,
            )
        ),
        events=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.EventInput,
                    id=object_ids,
                    kind=enums([0, 1, 2, 3, 4]),
                    title=strings(),
                    description=strings(),
                    event_time=event_times,
                    confirmation_state=confirmations,
                    entity_ids=st.lists(object_ids, max_size=2),
                    source_reference_ids=refs,
                ),
                max_size=2,
            )
        ),
        entities=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.EntityInput,
                    id=object_ids,
                    label=strings(),
                    description=strings(),
                    revision=strings(),
                    confirmation_state=confirmations,
                    source_reference_ids=refs,
                ),
                max_size=2,
            )
        ),
        summaries=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.SummaryInput,
                    id=object_ids,
                    title=strings(),
                    text=strings(),
                    fact_refs=st.lists(object_refs, max_size=2),
                ),
                max_size=1,
            )
        ),
        source_references=data.draw(st.lists(source, max_size=2)),
        excluded_source_types=data.draw(st.lists(strings(), max_size=2)),
        relations=data.draw(st.lists(relation, max_size=2)),
        entity_changes=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.EntityChangeInput,
                    id=object_ids,
                    entity_id=object_ids,
                    event_id=st.one_of(st.just(""), object_ids),
                    change_type=st.one_of(st.just("completed"), strings()),
                    description=strings(),
                    entity_revision=strings(),
                    applies_at=event_times,
                    source_reference_ids=refs,
                    confirmation_state=confirmations,
                ),
                max_size=1,
            )
        ),
        leaf_facts=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.LeafFactInput,
                    id=object_ids,
                    text=strings(),
                    about=st.lists(object_refs, max_size=2),
                    source_reference_ids=refs,
                    event_time=event_times,
                    confirmation_state=confirmations,
                ),
                max_size=2,
            )
        ),
        coverage_gaps=data.draw(st.lists(strings(), max_size=2)),
    )


@FUZZ
@given(data=st.data())
async def test_record_review(tree_stub, conversation, db, server_errors, data):
    request = review_request(conversation, data)
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ALREADY_EXISTS}
    await answered(db, server_errors, unary(tree_stub.RecordReview, request), allowed, writes=True)


@FUZZ
@given(data=st.data())
async def test_record_source_and_set_preference(tree_stub, conversation, db, server_errors, data):
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ABORTED, Code.ALREADY_EXISTS}
    source = tree_pb2.RecordSourceRequest(
        idempotency_key=data.draw(KEYS),
        source_id=data.draw(st.one_of(st.sampled_from(["s1", "s2"]), ids(conversation))),
        source_type=data.draw(
            st.one_of(st.sampled_from(["task_status", "knowledge", "document"]), strings())
        ),
        project_id=data.draw(st.one_of(st.just(""), strings())),
        title=data.draw(strings()),
        text=data.draw(strings()),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
        deleted=data.draw(st.booleans()),
    )
    await answered(db, server_errors, unary(tree_stub.RecordSource, source), allowed, writes=True)
    preference = tree_pb2.SetPreferenceRequest(
        idempotency_key=data.draw(KEYS),
        preference_id=data.draw(st.one_of(st.sampled_from(["p1", "p2"]), strings())),
        scope=data.draw(scopes()),
        subject=data.draw(strings()),
        text=data.draw(strings()),
        about=data.draw(
            st.lists(
                st.builds(common_pb2.ObjectRef, type=enums(list(range(10))), id=strings()),
                max_size=2,
            )
        ),
        confirmed_by=data.draw(st.one_of(st.just("user-1"), strings())),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
    )
    await answered(
        db, server_errors, unary(tree_stub.SetPreference, preference), allowed, writes=True
    )


def valid_review(conversation: Conversation) -> tree_pb2.RecordReviewRequest:
    """A result that is recorded as it is: one of each kind of object, in one fixed project,
    so that later results may link to (and conflict with) earlier ones."""
    e, n, r = common_pb2.EVENT, common_pb2.ENTITY, common_pb2.SOURCE_REFERENCE
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("fuzz"),
        result_id=unique("result"),
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=["fuzz-project"])),
        phase="daily",
        review_generated_at="2024-05-01T10:00:00Z",
        covered=common_pb2.TimeRange(**{"from": "2024-04-30T00:00:00Z"}),
        source_references=[
            tree_pb2.SourceReferenceInput(
                id="r1",
                source_type="message",
                source_id=conversation.answer,
                fragment="Plan A",
                fragment_end=6,
            )
        ],
        events=[
            tree_pb2.EventInput(
                id="e1",
                kind=tree_pb2.DECISION,
                title="Plan A",
                entity_ids=["n1"],
                source_reference_ids=["r1"],
                event_time=common_pb2.EventTime(start="2024-04-30T12:00:00+08:00", known=True),
            ),
            tree_pb2.EventInput(id="e0", kind=tree_pb2.DECISION, title="Plan 0"),
        ],
        entities=[tree_pb2.EntityInput(id="n1", label="The plan", source_reference_ids=["r1"])],
        story_lines=[tree_pb2.StoryLineInput(id="l1", title="Plans", event_ids=["e1"])],
        relations=[
            tree_pb2.RelationInput(
                id="x1",
                kind=tree_pb2.REPLACES,
                to=common_pb2.ObjectRef(type=e, id="e0"),
                reason="decided",
                source_reference_ids=["r1"],
                effective_at="2024-04-30T12:00:00Z",
                **{"from": common_pb2.ObjectRef(type=e, id="e1")},  # type: ignore[arg-type]
            )
        ],
        entity_changes=[
            tree_pb2.EntityChangeInput(
                id="c1", entity_id="n1", event_id="e1", change_type="decided"
            )
        ],
        leaf_facts=[
            tree_pb2.LeafFactInput(
                id="f1",
                text="Plan A was chosen",
                about=[common_pb2.ObjectRef(type=n, id="n1")],
                source_reference_ids=["r1"],
            )
        ],
        summaries=[
            tree_pb2.SummaryInput(
                id="s1", title="Day", text="t", fact_refs=[common_pb2.ObjectRef(type=r, id="r1")]
            )
        ],
        excluded_source_types=["attachment"],
        coverage_gaps=["none"],
    )


def _set(path: str) -> Callable[[tree_pb2.RecordReviewRequest, str], None]:
    """A setter of one string field (`events[0].title`) or list (`coverage_gaps[]`)."""

    def setter(request: tree_pb2.RecordReviewRequest, value: str) -> None:
        target: Any = request
        *parents, last = path.split(".")
        for part in parents:
            name, _, index = part.partition("[")
            target = getattr(target, name)
            if index:
                target = target[int(index.rstrip("]"))]
        if last.endswith("[]"):
            getattr(target, last[:-2]).append(value)
        else:
            setattr(target, last, value)

    return setter


REVIEW_FIELDS = [
    "result_id",
    "phase",
    "review_generated_at",
    "covered.to",
    "scope.projects.project_ids[]",
    "source_references[0].id",
    "source_references[0].source_type",
    "source_references[0].source_id",
    "source_references[0].source_version",
    "source_references[0].fragment",
    "source_references[0].locator.session_id",
    "events[0].id",
    "events[0].title",
    "events[0].event_time.start",
    "events[0].event_time.end",
    "events[0].entity_ids[]",
    "events[0].source_reference_ids[]",
    "entities[0].id",
    "entities[0].label",
    "entities[0].revision",
    "story_lines[0].event_ids[]",
    "relations[0].id",
    "relations[0].to.id",
    "relations[0].reason",
    "relations[0].from_revision",
    "relations[0].effective_at",
    "entity_changes[0].entity_id",
    "entity_changes[0].change_type",
    "leaf_facts[0].text",
    "leaf_facts[0].about[0].id",
    "summaries[0].fact_refs[0].id",
    "excluded_source_types[]",
    "coverage_gaps[]",
]


@FUZZ
@given(data=st.data())
async def test_record_review_with_one_bad_field(tree_stub, conversation, db, server_errors, data):
    request = valid_review(conversation)
    for path in data.draw(st.lists(st.sampled_from(REVIEW_FIELDS), min_size=1, max_size=2)):
        value = data.draw(
            st.one_of(strings(), TIMES, ids(conversation), st.sampled_from(["e0", "e1", "r1"]))
        )
        _set(path)(request, value)
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ALREADY_EXISTS}
    await answered(db, server_errors, unary(tree_stub.RecordReview, request), allowed, writes=True)
