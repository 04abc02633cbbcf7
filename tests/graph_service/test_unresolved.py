"""get_context's current projection lists what is unresolved about the object — open
questions, pending differences with confirmed preferences, coverage gaps — and its work state
with the evidence for it (decided is not completed)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.contexts import collection, content
from tests.graph_service.story import LoadedStory, ref, relation_input
from tests.tree_service.reviews import EVIDENCE, review, scope_of

EVENT = common_pb2.EVENT


async def projection(graph_stub, object_ref, scope, options) -> dict[str, Any]:
    response = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(object_ref=object_ref, scope=scope, options=options)
    )
    document: dict[str, Any] = content(collection(response, "current").items[0])
    return document


async def test_an_unsettled_conflict_is_an_open_question_on_both_ends(tree_stub, graph_stub):
    project = unique("open")
    # Ids of their own: other tests rely on ids like "a" existing nowhere.
    a, b, relation = unique("open-a"), unique("open-b"), unique("open-r")
    written = await tree_stub.RecordReview(
        review(
            project,
            events=[
                tree_pb2.EventInput(id=a, kind=tree_pb2.DECISION, title="Use SQLite"),
                tree_pb2.EventInput(id=b, kind=tree_pb2.DECISION, title="Use PostgreSQL"),
            ],
            source_references=EVIDENCE,
            relations=[
                relation_input(
                    relation,
                    tree_pb2.CONTRADICTS,
                    ref(EVENT, b),
                    ref(EVENT, a),
                    reason="the load test",
                    source_reference_ids=["src"],
                )
            ],
        )
    )
    options = graph_pb2.ReadOptions(min_consistency=written.consistency)
    for me, other in ((a, b), (b, a)):
        current = await projection(graph_stub, ref(EVENT, me), scope_of(project), options)
        (question,) = current["unresolved"]["open_questions"]
        assert question["relation_id"] == relation
        assert question["with"] == {"type": "event", "id": other}
        assert current["unresolved"]["pending_differences"] == []
        # A decision, with its evidence; not claimed done.
        work = current["work_state"]
        assert work["decision"]["state"] == "decided"
        assert work["decision"]["evidence"]["event_id"] == me
        assert work["decision"]["evidence"]["result_id"] == written.result_id
        assert work["completion"]["state"] == "unknown"


async def test_a_conflict_with_a_preference_is_a_pending_difference_not_a_question(
    graph_stub, story: LoadedStory
):
    option = await projection(graph_stub, ref(EVENT, "ev-option-c"), story.scope, story.options())
    unresolved = option["unresolved"]
    assert unresolved["open_questions"] == []
    (difference,) = unresolved["pending_differences"]
    assert difference["relation_id"] == "rel-c-vs-preference"
    preference_id = story.ids["pref-boring-tech"]
    assert difference["preference"] == {"type": "preference", "id": preference_id}
    assert difference["state"].startswith("pending")
    assert "not claim that nothing is open" in unresolved["note"]

    preference = await projection(
        graph_stub,
        ref(common_pb2.PREFERENCE, preference_id),
        story.scope,
        story.options(),
    )
    (difference,) = preference["unresolved"]["pending_differences"]
    assert difference["graph_fact"] == {"type": "event", "id": "ev-option-c"}


async def test_an_undecided_description_is_an_open_question(tree_stub, graph_stub):
    project = unique("open")
    written = None
    # Neither gives a revision or a covered interval: nothing decides which plan is current.
    for text, generated in (
        ("Plan one", "2026-10-02T00:00:00Z"),
        ("Plan two", "2026-11-02T00:00:00Z"),
    ):
        request = review(
            project, entities=[tree_pb2.EntityInput(id="plan", label="Plan", description=text)]
        )
        request.review_generated_at = generated
        written = await tree_stub.RecordReview(request)
    assert written is not None
    current = await projection(
        graph_stub,
        ref(common_pb2.ENTITY, "plan"),
        scope_of(project),
        graph_pb2.ReadOptions(min_consistency=written.consistency),
    )
    assert current["description"]["state"] == "undecided"
    (question,) = current["unresolved"]["open_questions"]
    assert question["question"] == "which stored description is current"
    assert "decision" not in current["work_state"]
