"""Citation anchors (T12): every anchor kind round-trips and is checked against its target;
snapshots are immutable, a superseded source points to its successor; cross-person citations
need a grant, are stored redacted, and a revocation leaves only tombstones."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import answer, ask, canonicalize, new_tree

ATTACHMENTS = [
    tree_pb2.Attachment(id="photo", name="p.png", media_type="image/png", width=800, height=600),
    tree_pb2.Attachment(id="paper", name="a.pdf", media_type="application/pdf", page_count=12),
    tree_pb2.Attachment(id="notes", name="n.txt", media_type="text/plain", text_length=5000),
    tree_pb2.Attachment(id="call", name="c.mp3", media_type="audio/mpeg", duration_ms=90_000),
    tree_pb2.Attachment(id="clip", name="c.mp4", media_type="video/mp4", duration_ms=5_000),
]

GOOD_ANCHORS = {
    "image": tree_pb2.CitationAnchor(
        attachment_id="photo",
        image_region=tree_pb2.ImageRegion(x=10, y=20, width=790, height=580),
        excerpt="a red door",
    ),
    "pdf": tree_pb2.CitationAnchor(
        attachment_id="paper",
        pdf_area=tree_pb2.PdfPageArea(page=12, x=0.1, y=0.5, width=0.9, height=0.5),
    ),
    "fragment": tree_pb2.CitationAnchor(
        attachment_id="notes", fragment=tree_pb2.FragmentRange(start=4000, end=5000)
    ),
    "audio": tree_pb2.CitationAnchor(
        attachment_id="call", media_span=tree_pb2.MediaSpan(start_ms=0, end_ms=90_000)
    ),
    "video": tree_pb2.CitationAnchor(
        attachment_id="clip", media_span=tree_pb2.MediaSpan(start_ms=1_000, end_ms=2_000)
    ),
}


async def source(stub, **tree: Any):
    owned = await new_tree(stub, **tree)
    cited = await ask(stub, owned.id, "Look at these files", attachments=ATTACHMENTS)
    return owned, cited


async def cite(stub, tree_id: str, *citations: tree_pb2.Citation, parent: str = ""):
    return await ask(stub, tree_id, "About that", parent_id=parent, citations=list(citations))


async def test_every_anchor_kind_round_trips(tree_stub):
    tree, cited = await source(tree_stub)
    citations = [
        tree_pb2.Citation(node_id=cited.id, anchor=anchor, note=name)
        for name, anchor in GOOD_ANCHORS.items()
    ]
    citations.append(tree_pb2.Citation(node_id=cited.id, start=0, end=4, note="text"))
    citing = await cite(tree_stub, tree.id, *citations)
    read = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=citing.id))).node
    assert read == citing
    for got, (name, anchor) in zip(read.citations, GOOD_ANCHORS.items(), strict=False):
        expected = tree_pb2.CitationAnchor()
        expected.CopyFrom(anchor)
        expected.excerpt = ""  # kept as the snapshot
        assert (got.anchor, got.note) == (expected, name)
        assert got.snapshot == anchor.excerpt
        assert got.status == tree_pb2.CITATION_CURRENT
        assert cited.id in got.source_description
    assert read.citations[-1].snapshot == "Look"
    assert "code points [0, 4)" in read.citations[-1].source_description
    listed = await tree_stub.ListCitations(tree_pb2.ListCitationsRequest(node_id=citing.id))
    assert [c.citation for c in listed.citations] == list(read.citations)
    assert [c.position for c in listed.citations] == list(range(6))


BAD_ANCHORS = [
    ("photo", {"image_region": {"x": 10, "y": 0, "width": 791, "height": 1}}, "image_region.width"),
    ("photo", {"image_region": {"x": -1, "y": 0, "width": 1, "height": 1}}, "image_region.x"),
    ("photo", {"image_region": {"x": 0, "y": 1, "width": 1, "height": 600}}, "image_region.height"),
    ("paper", {"image_region": {"x": 0, "y": 0, "width": 1, "height": 1}}, "attachment_id"),
    ("paper", {"pdf_area": {"page": 13, "width": 0.1, "height": 0.1}}, "pdf_area.page"),
    ("paper", {"pdf_area": {"page": 0, "width": 0.1, "height": 0.1}}, "pdf_area.page"),
    ("paper", {"pdf_area": {"page": 1, "x": 0.5, "width": 0.6, "height": 0.1}}, "pdf_area.width"),
    ("paper", {"pdf_area": {"page": 1, "y": 1.5, "width": 0.1, "height": 0.1}}, "pdf_area.y"),
    ("notes", {"fragment": {"start": 10, "end": 5001}}, "fragment.end"),
    ("notes", {"fragment": {"start": 10, "end": 10}}, "fragment.end"),
    ("photo", {"fragment": {"start": 0, "end": 1}}, "fragment"),  # declares no text length
    ("call", {"media_span": {"start_ms": 0, "end_ms": 90_001}}, "media_span.end_ms"),
    ("call", {"media_span": {"start_ms": -5, "end_ms": 10}}, "media_span.start_ms"),
    ("notes", {"media_span": {"start_ms": 0, "end_ms": 1}}, "attachment_id"),
    ("missing", {"media_span": {"start_ms": 0, "end_ms": 1}}, "attachment_id"),
]


@pytest.mark.parametrize(("attachment", "kind", "field"), BAD_ANCHORS)
async def test_bad_coordinates_are_refused_naming_the_field(tree_stub, db, attachment, kind, field):
    tree, cited = await source(tree_stub)
    anchor = tree_pb2.CitationAnchor(attachment_id=attachment, **kind)
    before = await db.fetchval("SELECT node_count FROM trees WHERE id = $1", tree.id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cite(tree_stub, tree.id, tree_pb2.Citation(node_id=cited.id, anchor=anchor))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in describe(caught.value).violations] == [f"citations[0].anchor.{field}"]
    assert await db.fetchval("SELECT node_count FROM trees WHERE id = $1", tree.id) == before


async def test_an_anchor_needs_a_kind_and_no_text_range(tree_stub):
    tree, cited = await source(tree_stub)
    cases = [
        (
            tree_pb2.Citation(node_id=cited.id, anchor=tree_pb2.CitationAnchor(attachment_id="x")),
            "citations[0].anchor.kind",
        ),
        (
            tree_pb2.Citation(node_id=cited.id, start=1, anchor=GOOD_ANCHORS["image"]),
            "citations[0].start",
        ),
        (
            tree_pb2.Citation(node_id=cited.id, status=tree_pb2.CITATION_REVOKED),
            "citations[0].status",
        ),
    ]
    for citation, field in cases:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await cite(tree_stub, tree.id, citation)
        assert field in [v.field for v in describe(caught.value).violations]


async def test_a_superseded_source_keeps_the_snapshot_and_points_to_its_successor(tree_stub):
    tree, cited = await source(tree_stub)
    citing = await cite(tree_stub, tree.id, tree_pb2.Citation(node_id=cited.id, end=4))
    edited = (
        await tree_stub.EditQuestion(
            tree_pb2.EditQuestionRequest(
                idempotency_key=unique("k"),
                question_id=cited.id,
                text="Now look at this",
                expected_revision=cited.revision,
            )
        )
    ).node
    (read,) = (
        await tree_stub.ListCitations(tree_pb2.ListCitationsRequest(node_id=citing.id))
    ).citations
    assert read.citation.snapshot == "Look"
    assert read.citation.status == tree_pb2.CITATION_SUPERSEDED
    assert read.superseded_by == edited.id


async def grant(stub, tree_id: str, grantor: str, grantee: str, *redactions: str):
    response = await stub.GrantCitationAuthorization(
        tree_pb2.GrantCitationAuthorizationRequest(
            idempotency_key=unique("k"),
            tree_id=tree_id,
            grantor=grantor,
            grantee=grantee,
            redactions=list(redactions),
        )
    )
    return response.authorization


async def test_cross_person_citations_need_a_grant_and_are_redacted(tree_stub):
    theirs = await new_tree(tree_stub, owner="ana")
    secret = await ask(tree_stub, theirs.id, "Ask Bruno Lima at bruno@example.org about it")
    mine = await new_tree(tree_stub, owner="me")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cite(tree_stub, mine.id, tree_pb2.Citation(node_id=secret.id))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert describe(caught.value).metadata["field"] == "citations[0].authorization_id"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await grant(tree_stub, theirs.id, "me", "ana")
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    to_someone_else = await grant(tree_stub, theirs.id, "ana", "carla")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cite(
            tree_stub,
            mine.id,
            tree_pb2.Citation(node_id=secret.id, authorization_id=to_someone_else.id),
        )
    assert [v.field for v in describe(caught.value).violations] == ["citations[0].authorization_id"]
    granted = await grant(tree_stub, theirs.id, "ana", "me", "bruno lima")
    citing = await cite(
        tree_stub, mine.id, tree_pb2.Citation(node_id=secret.id, authorization_id=granted.id)
    )
    (citation,) = citing.citations
    assert citation.snapshot == "Ask [redacted] at [redacted] about it"
    assert citation.redacted


async def test_revoking_a_grant_leaves_only_tombstones(tree_stub, db):
    theirs = await new_tree(tree_stub, owner="ana")
    secret = await ask(tree_stub, theirs.id, "The launch date is 4 May")
    mine = await new_tree(tree_stub, owner="me")
    granted = await grant(tree_stub, theirs.id, "ana", "me")
    citing = await cite(
        tree_stub,
        mine.id,
        tree_pb2.Citation(node_id=secret.id, authorization_id=granted.id, note="their date"),
    )
    reply = await answer(tree_stub, citing.id, "Noted")
    version = await canonicalize(tree_stub, mine.id, leaf=reply.id)
    context = await tree_stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=citing.id, budget=10_000
        )
    )
    assert any("4 May" in i.text for i in context.items)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RevokeCitationAuthorization(
            tree_pb2.RevokeCitationAuthorizationRequest(
                idempotency_key=unique("k"), authorization_id=granted.id, revoked_by="me"
            )
        )
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    revoked = await tree_stub.RevokeCitationAuthorization(
        tree_pb2.RevokeCitationAuthorizationRequest(
            idempotency_key=unique("k"), authorization_id=granted.id, revoked_by="ana"
        )
    )
    assert revoked.tombstoned_citations == 1 and revoked.authorization.revoked_by == "ana"

    (read,) = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=citing.id))).node.citations
    assert read.status == tree_pb2.CITATION_REVOKED
    assert read.snapshot == "" and read.note == "their date"
    assert secret.id in read.source_description
    stored = await db.fetchval("SELECT citations::text FROM nodes WHERE id = $1", citing.id)
    assert "4 May" not in stored  # the original is gone, not merely hidden
    (listed,) = (
        await tree_stub.ListCitations(tree_pb2.ListCitationsRequest(node_id=citing.id))
    ).citations
    assert listed.citation.status == tree_pb2.CITATION_REVOKED
    snapshot = await tree_stub.GetMainLineSnapshot(
        tree_pb2.GetMainLineSnapshotRequest(version_id=version.id)
    )
    assert snapshot.nodes[0].citations[0].status == tree_pb2.CITATION_REVOKED
    assert snapshot.nodes[0].citations[0].snapshot == ""
    old = await tree_stub.GetContextVersion(
        tree_pb2.GetContextVersionRequest(context_version_id=context.context_version_id)
    )
    assert all("4 May" not in i.text for i in old.items)
    fresh = await tree_stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=citing.id, budget=10_000
        )
    )
    (anchor,) = [i for i in fresh.items if i.layer == tree_pb2.EXPLICIT_ANCHOR]
    assert anchor.inclusion == tree_pb2.OMITTED and anchor.omitted_reason.startswith("revoked")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cite(
            tree_stub, mine.id, tree_pb2.Citation(node_id=secret.id, authorization_id=granted.id)
        )
    assert "revoked" in describe(caught.value).violations[0].description
