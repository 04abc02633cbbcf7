"""Where a source lives (seed 000 §5): a message keeps its place in the conversation, local
material its document and chunk, an external fragment the locator it came with — through
RecordReview, Search's sources, ReadSource and the MCP tools; a missing location is marked,
never invented, and a locator naming two places or an unknown one is refused, naming the field."""

from __future__ import annotations

import grpc
import pytest

from gateway import results
from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique

DOCUMENT = common_pb2.SourceLocator(
    document_id="handbook.pdf", chunk_id="p12-c3", chunk_start=4_000, chunk_end=4_600, known=True
)
EXTERNAL = common_pb2.SourceLocator(external="https://example.org/rfc/sync#section-4.2", known=True)


def reference(ref_id: str, source_type: str, fragment: str, locator=None):
    return tree_pb2.SourceReferenceInput(
        id=ref_id,
        source_type=source_type,
        source_id=unique("src"),
        fragment=fragment,
        locator=locator,
    )


def recorded(project: str, *references: tree_pb2.SourceReferenceInput, word: str = ""):
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=unique("res"),
        scope=project_scope([project]),
        phase="daily",
        review_generated_at="2026-10-02T01:00:00Z",
        source_references=list(references),
        events=[
            tree_pb2.EventInput(
                id=unique("ev"),
                kind=tree_pb2.DECISION,
                title=f"Adopt the {word} sync protocol",
                source_reference_ids=[r.id for r in references],
            )
        ],
    )


async def test_each_kind_of_place_is_kept_as_given_and_read_back(tree_stub, graph_stub):
    project, word = unique("loc"), unique("Tidewater")
    doc, ext, bare = unique("doc"), unique("ext"), unique("bare")
    written = await tree_stub.RecordReview(
        recorded(
            project,
            reference(doc, "document", "Section 4 says so", DOCUMENT),
            reference(ext, "knowledge", "RFC: sync by log shipping", EXTERNAL),
            reference(bare, "knowledge", "someone said it"),
            word=word,
        )
    )
    options = graph_pb2.ReadOptions(min_consistency=written.consistency)
    scope = project_scope([project])

    async def location(ref_id: str) -> common_pb2.SourceLocator:
        read = await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(source_reference_id=ref_id, scope=scope, options=options)
        )
        found: common_pb2.SourceLocator = read.location
        return found

    assert await location(doc) == DOCUMENT
    assert await location(ext) == EXTERNAL
    unknown = await location(bare)
    assert not unknown.known and unknown == common_pb2.SourceLocator()  # marked, not invented

    search = await graph_stub.Search(
        graph_pb2.SearchRequest(query=word, scope=scope, options=options)
    )
    (hit,) = search.hits
    by_ref = {s.source_reference_id: s.locator for s in hit.sources}
    assert (by_ref[doc], by_ref[ext], by_ref[bare].known) == (DOCUMENT, EXTERNAL, False)
    # As the MCP tools write it.
    (shown,) = results.result_json(search)["hits"]
    located = {s["source_reference_id"]: s["locator"] for s in shown["sources"]}
    assert located[doc]["document_id"] == "handbook.pdf"
    assert (located[doc]["chunk_id"], located[doc]["chunk_start"]) == ("p12-c3", "4000")
    assert located[ext]["external"] == EXTERNAL.external


@pytest.mark.parametrize(
    ("locator", "field"),
    [
        (common_pb2.SourceLocator(document_id="a.pdf"), "locator.known"),
        (common_pb2.SourceLocator(external="https://x", known=False), "locator.known"),
        (
            common_pb2.SourceLocator(document_id="a.pdf", external="https://x", known=True),
            "locator",
        ),
        (common_pb2.SourceLocator(message_id="m1", document_id="a.pdf", known=True), "locator"),
        (common_pb2.SourceLocator(chunk_id="c1", known=True), "locator.document_id"),
        (
            common_pb2.SourceLocator(document_id="a.pdf", chunk_start=9, chunk_end=3, known=True),
            "locator.chunk_end",
        ),
        (common_pb2.SourceLocator(external="x" * 2_001, known=True), "locator.external"),
    ],
)
async def test_a_locator_naming_no_single_known_place_is_refused(tree_stub, locator, field):
    project = unique("loc")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordReview(
            recorded(project, reference(unique("r"), "document", "text", locator))
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert f"source_references[0].{field}" in [v.field for v in failure.violations]
