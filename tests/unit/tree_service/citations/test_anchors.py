"""Citation anchors, redaction, grants and tombstones (T12) without a database: each anchor kind
checked against the facts its attachment declares, each refusal naming its field; redaction of
a grant's terms and of e-mail addresses; what a revocation leaves; the snapshot a citation
keeps. (tests/unit/tree_service/test_rules.py checks a plain range, the whole text, a foreign
node without a grant, a range outside the text and a budget overrun.)"""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tree_service.citations.anchors import (
    MAX_CITED,
    REDACTED,
    Grant,
    check_anchor,
    citation_snapshot,
    expect_grant,
    redact,
    tombstone,
    tombstone_revoked,
)
from tree_service.domain import AnswerState, CitationRequest, Node, NodeKind, Realm
from tree_service.errors import InvalidInput, PreconditionFailed

NOW = datetime(2026, 12, 4, tzinfo=UTC)
ATTACHMENTS = (
    {"id": "photo", "name": "p.png", "media_type": "image/png", "width": 800, "height": 600},
    {"id": "paper", "name": "a.pdf", "media_type": "application/pdf", "page_count": 12},
    {"id": "notes", "name": "n.txt", "media_type": "text/plain", "text_length": 5000},
    {"id": "call", "name": "c.mp3", "media_type": "audio/mpeg", "duration_ms": 90_000},
    {"id": "clip", "media_type": "video/mp4", "duration_ms": 5_000},  # no name
    {"id": "raw", "name": "r.png", "media_type": "image/png", "width": 0, "height": 10},
    {"id": "scan", "name": "s.pdf", "media_type": "application/pdf"},
    {"id": "silent", "name": "s.ogg", "media_type": "audio/ogg", "duration_ms": None},
)


def cited_node(text: str = "Ask Bruno Lima at bruno@example.org about it", **fields) -> Node:
    values: dict[str, Any] = {
        "id": "n1",
        "tree_id": "t1",
        "parent_id": None,
        "kind": NodeKind.QUESTION,
        "realm": Realm.REAL,
        "text": text,
        "revision": 1,
        "ordinal": 1,
        "created_at": NOW,
        "attachments": ATTACHMENTS,
        **fields,
    }
    return Node(**values)


def image(x: int = 0, y: int = 0, width: int = 1, height: int = 1) -> dict[str, Any]:
    return {"image_region": {"x": x, "y": y, "width": width, "height": height}}


def pdf(
    page: int = 1, x: float = 0.0, y: float = 0.0, width: float = 0.1, height: float = 0.1
) -> dict[str, Any]:
    return {"pdf_area": {"page": page, "x": x, "y": y, "width": width, "height": height}}


def fragment(start: int, end: int) -> dict[str, Any]:
    return {"fragment": {"start": start, "end": end}}


def span(start_ms: int, end_ms: int) -> dict[str, Any]:
    return {"media_span": {"start_ms": start_ms, "end_ms": end_ms}}


# ---- anchors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attachment", "kind", "described"),
    [
        ("photo", image(10, 20, 790, 580), "region 790x580+10+20 of image 'p.png'"),
        ("photo", image(799, 599, 1, 1), "region 1x1+799+599 of image 'p.png'"),
        ("paper", pdf(12, 0.1, 0.5, 0.9, 0.5), "an area of page 12 of PDF 'a.pdf'"),
        ("paper", pdf(1, 0.0, 0.0, 1.0, 1.0), "an area of page 1 of PDF 'a.pdf'"),
        ("notes", fragment(4000, 5000), "code points [4000, 5000) of attachment 'n.txt'"),
        ("notes", fragment(0, 1), "code points [0, 1) of attachment 'n.txt'"),
        ("call", span(0, 90_000), "0–90000 ms of 'c.mp3'"),
        ("clip", span(1_000, 2_000), "1000–2000 ms of 'clip'"),  # named by its id
    ],
)
def test_an_anchor_within_its_attachment_is_described(attachment, kind, described):
    assert check_anchor(cited_node(), {"attachment_id": attachment, **kind}, "a") == described


@pytest.mark.parametrize(
    ("attachment", "kind", "field"),
    [
        ("photo", image(-1, 0), "image_region.x"),
        ("photo", image(0, -1), "image_region.y"),
        ("photo", image(0, 0, 0, 1), "image_region.width"),
        ("photo", image(800, 0, 1, 1), "image_region.width"),
        ("photo", image(10, 0, 791, 1), "image_region.width"),
        ("photo", image(0, 0, 1, 0), "image_region.height"),
        ("photo", image(0, 1, 1, 600), "image_region.height"),
        ("paper", pdf(page=0), "pdf_area.page"),
        ("paper", pdf(page=13), "pdf_area.page"),
        ("paper", pdf(x=math.nan), "pdf_area.x"),
        ("paper", pdf(y=math.inf), "pdf_area.y"),
        ("paper", pdf(width=-0.1), "pdf_area.width"),
        ("paper", pdf(height=1.5), "pdf_area.height"),
        ("paper", pdf(width=0.0), "pdf_area.width"),
        ("paper", pdf(x=0.5, width=0.6), "pdf_area.width"),
        ("paper", pdf(height=0.0), "pdf_area.height"),
        ("paper", pdf(y=0.95, height=0.1), "pdf_area.height"),
        ("notes", fragment(-1, 4), "fragment.start"),
        ("notes", fragment(10, 10), "fragment.end"),
        ("notes", fragment(10, 9), "fragment.end"),
        ("notes", fragment(10, 5001), "fragment.end"),
        ("call", span(-5, 10), "media_span.start_ms"),
        ("call", span(10, 10), "media_span.end_ms"),
        ("call", span(0, 90_001), "media_span.end_ms"),
    ],
)
def test_an_anchor_outside_its_attachment_is_refused_naming_the_coordinate(attachment, kind, field):
    with pytest.raises(InvalidInput) as caught:
        check_anchor(cited_node(), {"attachment_id": attachment, **kind}, "citations[2].anchor")
    (violation,) = caught.value.violations
    assert violation.field == f"citations[2].anchor.{field}"


@pytest.mark.parametrize(
    ("attachment", "kind", "field", "fact"),
    [
        ("raw", image(), "image_region", "width"),  # declared as 0
        ("scan", pdf(), "pdf_area", "page_count"),  # not declared
        ("photo", fragment(0, 1), "fragment", "text_length"),
        ("silent", span(0, 1), "media_span", "duration_ms"),  # declared as null
    ],
)
def test_an_anchor_on_an_attachment_that_declares_no_extent_is_refused_naming_the_fact(
    attachment, kind, field, fact
):
    with pytest.raises(InvalidInput) as caught:
        check_anchor(cited_node(), {"attachment_id": attachment, **kind}, "a")
    (violation,) = caught.value.violations
    assert violation.field == f"a.{field}"
    assert f"declares no {fact}" in violation.description


@pytest.mark.parametrize(
    ("attachment", "kind", "wanted"),
    [
        ("paper", image(), "image/"),
        ("photo", pdf(), "application/pdf"),
        ("notes", span(0, 1), "audio/ or video/"),
        ("photo", span(0, 1), "audio/ or video/"),
        ("scan", image(), "image/"),  # the type is checked before the declared facts
    ],
)
def test_an_anchor_on_an_attachment_of_the_wrong_type_names_the_attachment(
    attachment, kind, wanted
):
    with pytest.raises(InvalidInput) as caught:
        check_anchor(cited_node(), {"attachment_id": attachment, **kind}, "a")
    (violation,) = caught.value.violations
    assert violation.field == "a.attachment_id"
    assert f"needs an attachment of type {wanted}, not" in violation.description


def test_an_anchor_on_an_attachment_the_node_lacks_names_the_attachment():
    with pytest.raises(InvalidInput) as caught:
        check_anchor(cited_node(), {"attachment_id": "gone", **span(0, 1)}, "a")
    (violation,) = caught.value.violations
    assert violation.field == "a.attachment_id"
    assert violation.description == "node 'n1' has no attachment 'gone'"


# ---- redaction ------------------------------------------------------------------------------


def test_terms_are_redacted_whatever_their_case():
    assert redact("BRUNO lima met bruno LIMA", ["Bruno Lima"]) == "[redacted] met [redacted]"
    assert redact("Élodie et ÉLODIE", ["élodie"]) == "[redacted] et [redacted]"


def test_every_e_mail_address_is_redacted_without_being_named():
    text = "write to ana.b+x@mail.example.org, or to bob_2@x-y.io."
    assert redact(text, []) == "write to [redacted], or to [redacted]."
    assert redact("no address @ here, nor a@b", []) == "no address @ here, nor a@b"


@pytest.mark.parametrize("terms", [["Bruno", "Bruno Lima"], ["Bruno Lima", "Bruno"]])
def test_a_longer_term_is_redacted_before_a_shorter_one_within_it(terms):
    assert redact("Ask Bruno Lima, not Bruno", terms) == "Ask [redacted], not [redacted]"


def test_a_term_is_matched_literally_not_as_a_pattern():
    assert redact("a.b axb (c) c", ["a.b", "(c)"]) == "[redacted] axb [redacted] c"


def test_text_without_terms_or_addresses_is_left_as_it_is():
    assert redact("nothing to hide here", ["Bruno"]) == "nothing to hide here"


# Letters that "[redacted]" does not contain, so that the marker cannot spell a term.
ALPHABET = "bfgBFG "


@given(
    text=st.text(ALPHABET, max_size=40),
    terms=st.lists(st.text(ALPHABET, min_size=1, max_size=5), max_size=4),
)
def test_redaction_never_leaves_a_term(text, terms):
    redacted = redact(text, terms)
    assert not any(term.lower() in redacted.lower() for term in terms)
    if not any(term.lower() in text.lower() for term in terms):
        assert redacted == text
    # Only whole markers were added: without them, nothing is left that was not in the text.
    assert set(redacted.replace(REDACTED, "")) <= set(text)


# ---- grants ---------------------------------------------------------------------------------

GRANT = Grant("g1", "t1", "ana", "me", ("bruno",), revoked=False)


def check_grant(grant: Grant | None) -> Grant:
    return expect_grant(
        grant, "g1", cited_tree="t1", cited_owner="ana", citing_owner="me", field="citations[0]"
    )


def test_a_grant_of_the_cited_tree_from_its_owner_to_the_citing_owner_covers_the_citation():
    assert check_grant(GRANT) is GRANT


@pytest.mark.parametrize(
    ("grant", "problem"),
    [
        (None, "there is no citation authorization 'g1'"),
        (dataclasses.replace(GRANT, revoked=True), "authorization 'g1' was revoked"),
        (dataclasses.replace(GRANT, tree_id="t2"), "does not cover the cited tree"),
        (dataclasses.replace(GRANT, grantor="bea"), "does not cover the cited tree"),
        (dataclasses.replace(GRANT, grantee="carla"), "was granted to someone else"),
        # A revoked grant is reported as revoked, whatever else is wrong with it.
        (dataclasses.replace(GRANT, revoked=True, grantee="carla"), "was revoked"),
    ],
)
def test_a_grant_that_does_not_cover_the_citation_is_refused_naming_the_field(grant, problem):
    with pytest.raises(InvalidInput) as caught:
        check_grant(grant)
    (violation,) = caught.value.violations
    assert violation.field == "citations[0]"
    assert problem in violation.description
    assert violation.description.endswith("citing another person's conversation needs their grant")


# ---- tombstones -----------------------------------------------------------------------------

CITATION = {
    "node_id": "n1",
    "start": 4,
    "end": 14,
    "note": "their name",
    "snapshot": "Bruno Lima",
    "anchor": {"attachment_id": "photo", **image()},
    "authorization_id": "g1",
    "source_description": "code points [4, 14) of question n1 in another person's tree t1",
    "redacted": False,
    "excerpt": "Bruno Lima",
}


def test_a_tombstone_keeps_where_the_citation_pointed_and_nothing_it_cited():
    assert tombstone(CITATION) == {
        "node_id": "n1",
        "start": 4,
        "end": 14,
        "note": "their name",
        "anchor": {"attachment_id": "photo", **image()},
        "authorization_id": "g1",
        "source_description": CITATION["source_description"],
        "snapshot": "",
        "redacted": True,
        "status": "revoked",
    }
    assert tombstone({"snapshot": "x"}) == {"snapshot": "", "redacted": True, "status": "revoked"}


def test_only_citations_under_a_revoked_grant_become_tombstones_in_their_order():
    mine = {"node_id": "n0", "snapshot": "my own words"}
    other = {**CITATION, "authorization_id": "g2"}
    result = tombstone_revoked([mine, CITATION, other], {"g1", "g9"})
    assert [c.get("status") for c in result] == [None, "revoked", None]
    assert result[0] == mine and result[2] == other
    assert result[1]["snapshot"] == "" and "Bruno" not in str(result[1])  # nor its excerpt
    assert result[0] is not mine  # copies: changing the result leaves the stored list alone
    assert tombstone_revoked([], {"g1"}) == ()


# ---- snapshots ------------------------------------------------------------------------------


def snapshot(
    citation: CitationRequest,
    cited: Node | None = None,
    *,
    same_owner: bool = True,
    before: int = 0,
    redactions: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    return citation_snapshot(
        3, citation, cited or cited_node(), same_owner, before, redactions=redactions
    )


def test_a_streaming_node_cannot_be_cited():
    streaming = cited_node(kind=NodeKind.ANSWER, answer_state=AnswerState.STREAMING)
    with pytest.raises(PreconditionFailed, match="still streaming") as caught:
        snapshot(CitationRequest("n1", 0, 0, ""), streaming)
    assert caught.value.metadata["field"] == "citations[3].node_id"


def test_an_anchored_citation_keeps_its_anchor_and_the_excerpt_given():
    anchor = {"attachment_id": "photo", **image(10, 20, 30, 40)}
    kept = snapshot(CitationRequest("n1", 0, 0, "the door", anchor=anchor, excerpt="a red door"))
    assert kept == {
        "node_id": "n1",
        "start": 0,
        "end": 0,
        "note": "the door",
        "snapshot": "a red door",
        "anchor": anchor,
        "source_description": (
            "region 30x40+10+20 of image 'p.png' of question n1 in this owner's tree t1"
        ),
    }


def test_an_anchor_outside_its_attachment_is_refused_naming_the_citation():
    anchor = {"attachment_id": "photo", **image(0, 0, 801, 1)}
    with pytest.raises(InvalidInput) as caught:
        snapshot(CitationRequest("n1", 0, 0, "", anchor=anchor))
    assert caught.value.violations[0].field == "citations[3].anchor.image_region.width"


def test_a_range_is_cut_in_code_points():
    cited = cited_node("日本語のテキスト😀です")
    kept = snapshot(CitationRequest("n1", 2, 9, ""), cited)
    assert (kept["snapshot"], kept["start"], kept["end"]) == ("語のテキスト😀", 2, 9)
    assert snapshot(CitationRequest("n1", 9, 11, ""), cited)["snapshot"] == "です"
    with pytest.raises(InvalidInput, match="length 11 code points"):
        snapshot(CitationRequest("n1", 2, 12, ""), cited)


def test_a_citation_under_a_grant_is_redacted_and_names_the_grant():
    kept = snapshot(
        CitationRequest("n1", 0, 0, "", authorization_id="g1"),
        same_owner=False,
        redactions=("bruno lima",),
    )
    assert kept["snapshot"] == "Ask [redacted] at [redacted] about it"
    assert (kept["authorization_id"], kept["redacted"]) == ("g1", True)
    assert "in another person's tree t1" in kept["source_description"]


def test_a_grant_without_terms_still_redacts_addresses_and_an_anchor_excerpt_too():
    anchor = {"attachment_id": "notes", **fragment(0, 10)}
    kept = snapshot(
        CitationRequest(
            "n1", 0, 0, "", anchor=anchor, excerpt="mail x@y.org", authorization_id="g"
        ),
        same_owner=False,
        redactions=(),
    )
    assert (kept["snapshot"], kept["redacted"]) == ("mail [redacted]", True)


def test_an_own_citation_is_neither_redacted_nor_marked():
    kept = snapshot(CitationRequest("n1", 0, 0, ""))
    assert kept["snapshot"] == cited_node().text
    assert "redacted" not in kept and "authorization_id" not in kept


def test_the_cited_length_budget_is_reached_exactly_and_not_passed():
    cited = cited_node("0123456789")
    whole = CitationRequest("n1", 0, 0, "")
    assert snapshot(whole, cited, before=MAX_CITED - 10)["snapshot"] == "0123456789"
    with pytest.raises(InvalidInput) as caught:
        snapshot(whole, cited, before=MAX_CITED - 9)
    assert caught.value.violations[0].field == "citations[3].end"
    # An anchored citation's excerpt counts as well.
    anchor = {"attachment_id": "notes", **fragment(0, 10)}
    with pytest.raises(InvalidInput, match=re.escape(f"{MAX_CITED:,} code points")):
        snapshot(
            CitationRequest("n1", 0, 0, "", anchor=anchor, excerpt="x" * 10),
            cited,
            before=MAX_CITED - 9,
        )
