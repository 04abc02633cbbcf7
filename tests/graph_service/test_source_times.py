"""read_source states the times a source has — created, updated (the version returned) and
captured (the saved fragment) — each with its basis, and unknown with why where the stored
data does not say."""

from __future__ import annotations

from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import load_acceptance_story
from tests.graph_service.test_read_source import read, referenced_question


async def test_a_message_source_has_all_three_times_with_their_basis(tree_stub, graph_stub):
    project, question, ref, token = await referenced_question(tree_stub, "Budget: 10k", "10k")
    snapshot = (await graph_stub.ReadSource(read(ref, project, token))).time_metadata
    assert snapshot.created.at and "first revision" in snapshot.created.basis
    assert snapshot.updated.at == snapshot.created.at  # the saved version is the first one
    assert "revision 1 of the message" in snapshot.updated.basis
    assert snapshot.captured.at >= snapshot.created.at
    assert "saved the fragment" in snapshot.captured.basis

    edited = await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=question.id,
            expected_revision=question.revision,
            text="Budget: 12k, approved",
        )
    )
    current = (
        await graph_stub.ReadSource(
            read(ref, project, edited.consistency, read_kind=graph_pb2.CURRENT_CONTENT)
        )
    ).time_metadata
    assert current.created.at == snapshot.created.at
    assert current.updated.at > snapshot.updated.at
    assert "revision 2 of the message" in current.updated.basis
    assert current.captured == snapshot.captured  # the fragment was captured once


async def test_a_recorded_source_states_what_it_does_not_keep_as_unknown(
    tree_service, tree_stub, graph_stub
):
    story = await load_acceptance_story(f"127.0.0.1:{tree_service.port}")

    async def times(**fields) -> graph_pb2.SourceTimes:
        response: graph_pb2.ReadSourceResponse = await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(
                source_reference_id="src-notes-v1",
                scope=story.scope,
                options=story.options(),
                **fields,
            )
        )
        return response.time_metadata

    snapshot = await times()  # saved at revision 1; the source is at revision 3
    assert snapshot.created.WhichOneof("value") == "unknown"
    assert "only the current revision" in snapshot.created.unknown.reason
    assert snapshot.updated.WhichOneof("value") == "unknown"
    assert snapshot.captured.at
    current = await times(read_kind=graph_pb2.CURRENT_CONTENT)
    assert current.updated.at and "revision 3 of the source" in current.updated.basis
    assert current.created.WhichOneof("value") == "unknown"

    deleted = await tree_stub.RecordSource(
        tree_pb2.RecordSourceRequest(
            idempotency_key=unique("k"),
            source_id=story.ids["doc-storage-notes"],
            source_type="document",
            deleted=True,
            expected_revision=3,
        )
    )
    gone = (
        await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(
                source_reference_id="src-notes-v1",
                scope=story.scope,
                options=graph_pb2.ReadOptions(min_consistency=deleted.consistency),
            )
        )
    ).time_metadata
    assert "deleted" in gone.created.unknown.reason
    assert "deleted" in gone.updated.unknown.reason
    assert gone.captured == snapshot.captured
