"""StoryGraph.ReadSource: saved snapshots, named versions and the current source, in
code-point pages, with ownership checked on every read (G3)."""

from __future__ import annotations

import grpc
import pytest

from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import load_acceptance_story, record
from tests.tree_service.helpers import ask, new_tree


async def referenced_question(tree_stub, text: str, fragment: str, project: str = ""):
    """A question in a fresh project, and a review whose source reference saved `fragment`."""
    project = project or unique("proj")
    tree = await new_tree(tree_stub, project_id=project)
    question = await ask(tree_stub, tree.id, text)
    start = text.index(fragment)
    reference_id = unique("src")
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=project_scope([project]),
            phase="daily",
            review_generated_at="2026-10-02T01:00:00Z",
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id=reference_id,
                    source_type="message",
                    source_id=question.id,
                    source_version=str(question.version),
                    fragment=fragment,
                    fragment_start=start,
                    fragment_end=start + len(fragment),
                    locator=common_pb2.SourceLocator(
                        project_id=project,
                        session_id=tree.id,
                        message_id=question.id,
                        order=question.ordinal,
                        role="user",
                        known=True,
                    ),
                )
            ],
        )
    )
    return project, question, reference_id, written.consistency


def read(reference_id: str, project: str, token, **fields) -> graph_pb2.ReadSourceRequest:
    return graph_pb2.ReadSourceRequest(
        source_reference_id=reference_id,
        scope=project_scope([project]),
        options=graph_pb2.ReadOptions(min_consistency=token),
        **fields,
    )


async def test_a_snapshot_is_the_saved_fragment_with_its_ranges(tree_stub, graph_stub):
    text = "Decision: we move the sync server to PostgreSQL next sprint."
    project, question, ref, token = await referenced_question(
        tree_stub, text, "move the sync server to PostgreSQL"
    )
    response = await graph_stub.ReadSource(read(ref, project, token))
    assert response.text == "move the sync server to PostgreSQL"
    assert response.content_kind == "saved_fragment"
    assert (response.fragment_start, response.fragment_end) == (13, 47)
    assert response.returned_version == "1"
    assert response.source_length.exact == len(text)
    assert response.location.message_id == question.id and response.location.known
    assert list(response.available_read_kinds) == [
        graph_pb2.SNAPSHOT,
        graph_pb2.VERSION,
        graph_pb2.CURRENT_CONTENT,
    ]
    assert response.page.complete and not response.page.has_more


async def test_pages_count_code_points_including_astral_characters(tree_stub, graph_stub):
    fragment = "Plan 𝔸 → plan 𝔹 🚀 done"
    project, _, ref, token = await referenced_question(tree_stub, f"Note: {fragment}", fragment)
    pieces, offsets, cursor = [], [], ""
    while True:
        page = await graph_stub.ReadSource(read(ref, project, token, page_size=4, cursor=cursor))
        pieces.append(page.text)
        offsets.append((page.start, page.end))
        assert page.content_length == len(fragment)
        if not page.page.has_more:
            break
        cursor = page.page.next_cursor
    assert "".join(pieces) == fragment
    assert offsets[0] == (0, 4) and offsets[-1][1] == len(fragment)
    assert all(len(p) <= 4 for p in pieces)


async def test_current_reads_the_source_as_it_is_now_and_says_it_differs(tree_stub, graph_stub):
    project, question, ref, _ = await referenced_question(tree_stub, "Budget: 10k", "10k")
    edited = await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=question.id,
            expected_revision=question.revision,
            text="Budget: 12k, approved",
        )
    )
    response = await graph_stub.ReadSource(
        read(ref, project, edited.consistency, read_kind=graph_pb2.CURRENT_CONTENT)
    )
    assert (response.text, response.content_kind) == ("Budget: 12k, approved", "whole_source")
    assert (response.returned_version, response.differs_from_reference) == ("2", True)
    # The snapshot's whole-source length is that of the revision it saved, not of the newest.
    snapshot = await graph_stub.ReadSource(read(ref, project, edited.consistency))
    assert snapshot.source_length.exact == len("Budget: 10k")
    assert snapshot.availability == graph_pb2.AVAILABLE
    version_one = await graph_stub.ReadSource(
        read(ref, project, edited.consistency, read_kind=graph_pb2.VERSION, source_version="1")
    )
    assert version_one.text == "Budget: 10k" and version_one.returned_version == "1"


async def test_a_missing_version_is_unavailable_with_the_read_kinds_that_exist(
    tree_stub, graph_stub
):
    project, _, ref, token = await referenced_question(tree_stub, "Budget: 10k", "10k")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(
            read(ref, project, token, read_kind=graph_pb2.VERSION, source_version="7")
        )
    failure = describe(caught.value)
    assert failure.reason == "historical_version_unavailable"
    assert failure.metadata["available_read_kinds"] == "snapshot,current"


async def test_a_reference_from_another_scope_is_refused_by_stable_id(tree_stub, graph_stub):
    project, _, ref, token = await referenced_question(tree_stub, "Secret plan", "plan")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(read(ref, unique("other"), token))
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (grpc.StatusCode.PERMISSION_DENIED, "scope_mismatch")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(read(unique("nope"), project, token))
    assert describe(caught.value).reason == "not_found"


async def test_a_cursor_goes_stale_when_the_current_source_changes(tree_stub, graph_stub):
    project, question, ref, token = await referenced_question(
        tree_stub, "A long enough message to page through", "long"
    )
    first = await graph_stub.ReadSource(
        read(ref, project, token, read_kind=graph_pb2.CURRENT_CONTENT, page_size=5)
    )
    edited = await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=question.id,
            expected_revision=question.revision,
            text="Changed in between",
        )
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(
            read(
                ref,
                project,
                edited.consistency,
                read_kind=graph_pb2.CURRENT_CONTENT,
                page_size=5,
                cursor=first.page.next_cursor,
            )
        )
    assert describe(caught.value).reason == "stale_cursor"


async def test_sources_that_are_not_messages_have_only_their_snapshot(tree_stub, graph_stub):
    project = unique("proj")
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=project_scope([project]),
            phase="daily",
            review_generated_at="2026-10-02T01:00:00Z",
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id="task-src",
                    source_type="task_status",
                    source_id="task-9",
                    fragment="Migration: in progress",
                )
            ],
        )
    )
    snapshot = await graph_stub.ReadSource(read("task-src", project, written.consistency))
    assert snapshot.text == "Migration: in progress"
    assert snapshot.source_length.WhichOneof("value") == "unknown"
    assert not snapshot.location.known
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(
            read("task-src", project, written.consistency, read_kind=graph_pb2.CURRENT_CONTENT)
        )
    assert describe(caught.value).reason == "source_unavailable"


async def test_reading_past_the_end_is_refused(tree_stub, graph_stub):
    project, _, ref, token = await referenced_question(tree_stub, "short", "short")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(read(ref, project, token, offset=99))
    assert describe(caught.value).violations[0].field == "offset"


async def test_recorded_source_keeps_only_its_current_revision(tree_service, tree_stub, graph_stub):
    """A document reference saved at revision 1 of a source now at revision 3: the saved
    snapshot reads, the current text reads (and says it differs), the old revision is
    reported unavailable with the read kinds that do exist — never reconstructed."""
    story = await load_acceptance_story(f"127.0.0.1:{tree_service.port}")

    async def read(**fields):
        return await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(
                source_reference_id="src-notes-v1",
                scope=story.scope,
                options=story.options(),
                **fields,
            )
        )

    snapshot = await read()
    assert snapshot.content_kind == "saved_fragment"
    assert snapshot.text.startswith("Decision A") and snapshot.returned_version == "1"
    current = await read(read_kind=graph_pb2.CURRENT_CONTENT)
    assert current.returned_version == "3" and current.differs_from_reference
    assert current.text[snapshot.fragment_start : snapshot.fragment_end] == snapshot.text
    assert (await read(read_kind=graph_pb2.VERSION, source_version="3")).text == current.text
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await read(read_kind=graph_pb2.VERSION, source_version="1")
    error = describe(caught.value)
    assert error.reason == "historical_version_unavailable"
    assert error.metadata["available_read_kinds"] == "snapshot,current"

    # Deleting the source leaves the saved snapshot readable and says the source is deleted.
    deleted = await tree_stub.RecordSource(
        tree_pb2.RecordSourceRequest(
            idempotency_key=unique("k"),
            source_id=story.ids["doc-storage-notes"],
            source_type="document",
            deleted=True,
            expected_revision=3,
        )
    )
    options = graph_pb2.ReadOptions(min_consistency=deleted.consistency)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(
                source_reference_id="src-notes-v1",
                scope=story.scope,
                read_kind=graph_pb2.CURRENT_CONTENT,
                options=options,
            )
        )
    assert describe(caught.value).metadata["availability"] == "deleted"
    still = await graph_stub.ReadSource(
        graph_pb2.ReadSourceRequest(
            source_reference_id="src-notes-v1", scope=story.scope, options=options
        )
    )
    assert still.text == snapshot.text


async def test_a_snapshot_says_whether_its_source_can_still_be_read(tree_stub, graph_stub):
    """Every read reports the source's availability and only the read kinds that work: a
    deleted source, one that moved to another project and one that is not known leave only
    the snapshot. The whole-source length is that of the version the reference saved."""
    project = unique("proj")
    source_id = unique("doc")
    text = "Notes: we chose PostgreSQL for the sync server."

    async def source(**fields) -> tree_pb2.RecordSourceResponse:
        response: tree_pb2.RecordSourceResponse = await tree_stub.RecordSource(
            tree_pb2.RecordSourceRequest(
                idempotency_key=unique("k"), source_id=source_id, source_type="document", **fields
            )
        )
        return response

    await source(project_id=project, title="Notes", text=text)
    written = await record(
        tree_stub,
        project,
        sources=[
            tree_pb2.SourceReferenceInput(
                id=f"{source_id}-ref",
                source_type="document",
                source_id=source_id,
                source_version="1",
                fragment="we chose PostgreSQL",
                fragment_start=7,
                fragment_end=26,
            ),
            tree_pb2.SourceReferenceInput(
                id=f"{source_id}-unknown",
                source_type="document",
                source_id=unique("never-recorded"),
                fragment="a document nobody recorded",
            ),
        ],
    )

    async def snapshot(token, reference: str = f"{source_id}-ref") -> graph_pb2.ReadSourceResponse:
        response: graph_pb2.ReadSourceResponse = await graph_stub.ReadSource(
            read(reference, project, token)
        )
        return response

    SNAPSHOT_ONLY = [graph_pb2.SNAPSHOT]
    now = await snapshot(written.consistency)
    assert now.availability == graph_pb2.AVAILABLE
    assert now.source_length.exact == len(text)
    unknown = await snapshot(written.consistency, f"{source_id}-unknown")
    assert (unknown.availability, list(unknown.available_read_kinds)) == (
        graph_pb2.INACCESSIBLE,
        SNAPSHOT_ONLY,
    )

    edited = await source(
        project_id=project, title="Notes", text=text + " Revised.", expected_revision=1
    )
    later = await snapshot(edited.consistency)
    # Only the current revision of a document is kept: the saved one's length is not known.
    assert later.availability == graph_pb2.AVAILABLE
    assert later.source_length.WhichOneof("value") == "unknown"

    moved = await source(
        project_id=unique("elsewhere"), title="Notes", text=text, expected_revision=2
    )
    away = await snapshot(moved.consistency)
    assert away.text == "we chose PostgreSQL"
    assert (away.availability, list(away.available_read_kinds)) == (
        graph_pb2.MOVED_OUT_OF_SCOPE,
        SNAPSHOT_ONLY,
    )
    assert away.source_length.WhichOneof("value") == "unknown"

    deleted = await source(deleted=True, expected_revision=3)
    gone = await snapshot(deleted.consistency)
    assert (gone.availability, list(gone.available_read_kinds)) == (
        graph_pb2.DELETED,
        SNAPSHOT_ONLY,
    )
