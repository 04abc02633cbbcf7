"""T12 as plain functions: a citation's anchor checked against what it cites, its immutable
snapshot, redaction under a cross-person grant, and the tombstone a revocation leaves.

A citation points at a range of the cited node's text (code points) or, with an anchor, at a
region of one of the cited node's attachments: an image region (pixels), a PDF page area
(page and fractions of the page), a text fragment (code points) or an audio/video span
(milliseconds). Each is checked against the facts the attachment declares; a bad coordinate
is refused naming its field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tree_service import rules
from tree_service.domain import CitationRequest, Node
from tree_service.errors import InvalidInput, PreconditionFailed

REDACTED = "[redacted]"
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")

ANCHOR_KINDS = ("image_region", "pdf_area", "fragment", "media_span")
# The cited ranges of one question together, in code points: as long as the longest answer, so
# a question with its snapshots fits in one response as an answer does.
MAX_CITED = 1_000_000


@dataclass(frozen=True)
class Grant:
    """A cross-person citation authorization as the citation checks it."""

    id: str
    tree_id: str
    grantor: str
    grantee: str
    redactions: tuple[str, ...]
    revoked: bool


def _bad(field: str, description: str) -> InvalidInput:
    return InvalidInput.one(field, description)


def _attachment(cited: Node, attachment_id: str, field: str) -> Mapping[str, Any]:
    for attachment in cited.attachments:
        if attachment.get("id") == attachment_id:
            return attachment
    raise _bad(f"{field}.attachment_id", f"node {cited.id!r} has no attachment {attachment_id!r}")


def _declared(attachment: Mapping[str, Any], fact: str, field: str, kind: str) -> int:
    value = int(attachment.get(fact) or 0)
    if value <= 0:
        raise _bad(
            field,
            f"attachment {attachment.get('id')!r} declares no {fact}, so a {kind} cannot be "
            "checked against it",
        )
    return value


def _media(attachment: Mapping[str, Any], prefixes: Sequence[str], field: str, kind: str) -> None:
    media_type = str(attachment.get("media_type", ""))
    if not media_type.startswith(tuple(prefixes)):
        raise _bad(
            f"{field}.attachment_id",
            f"a {kind} needs an attachment of type {' or '.join(prefixes)}, not {media_type!r}",
        )


def check_anchor(cited: Node, anchor: Mapping[str, Any], field: str) -> str:
    """Refuse an anchor outside its attachment; returns a description of what it points at."""
    attachment = _attachment(cited, str(anchor["attachment_id"]), field)
    name = attachment.get("name", attachment.get("id"))
    if "image_region" in anchor:
        f, r = f"{field}.image_region", anchor["image_region"]
        _media(attachment, ("image/",), field, "image region")
        width = _declared(attachment, "width", f, "image region")
        height = _declared(attachment, "height", f, "image region")
        if r["x"] < 0 or r["y"] < 0:
            raise _bad(f"{f}.x" if r["x"] < 0 else f"{f}.y", "must be >= 0")
        if r["width"] <= 0 or r["x"] + r["width"] > width:
            raise _bad(f"{f}.width", f"the region must lie within the image's {width} px width")
        if r["height"] <= 0 or r["y"] + r["height"] > height:
            raise _bad(f"{f}.height", f"the region must lie within the image's {height} px height")
        return f"region {r['width']}x{r['height']}+{r['x']}+{r['y']} of image {name!r}"
    if "pdf_area" in anchor:
        f, a = f"{field}.pdf_area", anchor["pdf_area"]
        _media(attachment, ("application/pdf",), field, "PDF page area")
        pages = _declared(attachment, "page_count", f, "PDF page area")
        if not 1 <= a["page"] <= pages:
            raise _bad(f"{f}.page", f"must be 1..{pages}, the PDF's pages")
        for key in ("x", "y", "width", "height"):
            if not math.isfinite(a[key]) or not 0 <= a[key] <= 1:
                raise _bad(f"{f}.{key}", "must be a fraction of the page, 0..1")
        if a["width"] <= 0 or a["x"] + a["width"] > 1:
            raise _bad(f"{f}.width", "the area must lie within the page (x + width <= 1)")
        if a["height"] <= 0 or a["y"] + a["height"] > 1:
            raise _bad(f"{f}.height", "the area must lie within the page (y + height <= 1)")
        return f"an area of page {a['page']} of PDF {name!r}"
    if "fragment" in anchor:
        f, g = f"{field}.fragment", anchor["fragment"]
        length = _declared(attachment, "text_length", f, "fragment")
        if g["start"] < 0:
            raise _bad(f"{f}.start", "must be >= 0")
        if not g["start"] < g["end"] <= length:
            raise _bad(
                f"{f}.end", f"must be after start and at most the text's {length} code points"
            )
        return f"code points [{g['start']}, {g['end']}) of attachment {name!r}"
    f, s = f"{field}.media_span", anchor["media_span"]
    _media(attachment, ("audio/", "video/"), field, "time span")
    duration = _declared(attachment, "duration_ms", f, "time span")
    if s["start_ms"] < 0:
        raise _bad(f"{f}.start_ms", "must be >= 0")
    if not s["start_ms"] < s["end_ms"] <= duration:
        raise _bad(f"{f}.end_ms", f"must be after start_ms and at most the {duration} ms length")
    return f"{s['start_ms']}–{s['end_ms']} ms of {name!r}"


def redact(text: str, terms: Sequence[str]) -> str:
    """`text` with each term (case-insensitive) and every e-mail address replaced."""
    for term in sorted(terms, key=len, reverse=True):
        text = re.sub(re.escape(term), REDACTED, text, flags=re.IGNORECASE)
    return _EMAIL.sub(REDACTED, text)


def expect_grant(
    grant: Grant | None,
    authorization_id: str,
    *,
    cited_tree: str,
    cited_owner: str,
    citing_owner: str,
    field: str,
) -> Grant:
    """The grant a cross-person citation names, when it covers this citation."""
    problem = None
    if grant is None:
        problem = f"there is no citation authorization {authorization_id!r}"
    elif grant.revoked:
        problem = f"authorization {authorization_id!r} was revoked"
    elif grant.tree_id != cited_tree or grant.grantor != cited_owner:
        problem = f"authorization {authorization_id!r} does not cover the cited tree"
    elif grant.grantee != citing_owner:
        problem = f"authorization {authorization_id!r} was granted to someone else"
    if problem is not None or grant is None:
        raise _bad(field, f"{problem}; citing another person's conversation needs their grant")
    return grant


def tombstone(citation: Mapping[str, Any]) -> dict[str, Any]:
    """What a citation keeps once its authorization is revoked: no cited content at all."""
    kept = {
        k: citation[k]
        for k in (
            "node_id",
            "start",
            "end",
            "note",
            "anchor",
            "authorization_id",
            "source_description",
        )
        if k in citation
    }
    return {**kept, "snapshot": "", "redacted": True, "status": "revoked"}


def citation_subject(node_id: str, position: int) -> str:
    """The subject a context summary of a node's citation at `position` is kept under."""
    return f"citation:{node_id}:{position}"


def tombstone_revoked(
    citations: Sequence[Mapping[str, Any]], revoked: set[str]
) -> tuple[dict[str, Any], ...]:
    """`citations` with those made under a revoked authorization turned into tombstones."""
    return tuple(
        tombstone(c) if c.get("authorization_id") in revoked else dict(c) for c in citations
    )


def citation_snapshot(
    i: int,
    citation: CitationRequest,
    cited: Node,
    same_owner: bool,
    cited_before: int,
    *,
    redactions: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """The snapshot of one cited range or anchor (`cited_before`: code points the earlier
    citations of the request hold); refused across people without a grant (`redactions`, the
    grant's terms, None when there is none), outside its target, or past MAX_CITED in all."""
    field = f"citations[{i}].node_id"
    rules.expect_settled(cited, field)
    if not same_owner and redactions is None:
        raise PreconditionFailed(
            f"citations[{i}] cites another person's conversation; name their grant in "
            f"citations[{i}].authorization_id (GrantCitationAuthorization)",
            {"field": f"citations[{i}].authorization_id"},
        )
    owner = "another person's" if not same_owner else "this owner's"
    if citation.anchor is not None:
        what = check_anchor(cited, citation.anchor, f"citations[{i}].anchor")
        start, end, text = 0, 0, citation.excerpt
    else:
        start, end = citation.start, citation.end or len(cited.text)
        if not 0 <= start <= end <= len(cited.text):
            raise InvalidInput.one(
                f"citations[{i}].end",
                f"range [{start}, {end}) is outside the cited text "
                f"(length {len(cited.text)} code points)",
            )
        what, text = f"code points [{start}, {end})", cited.text[start:end]
    if cited_before + len(text) > MAX_CITED:
        raise InvalidInput.one(
            f"citations[{i}].end",
            f"the cited ranges together pass {MAX_CITED:,} code points (the length of "
            "the longest answer); cite narrower ranges",
        )
    snapshot: dict[str, Any] = {
        "node_id": cited.id,
        "start": start,
        "end": end,
        "note": citation.note,
        "snapshot": text if redactions is None else redact(text, redactions),
        "source_description": (
            f"{what} of {cited.kind.value} {cited.id} in {owner} tree {cited.tree_id}"
        ),
    }
    if citation.anchor is not None:
        snapshot["anchor"] = citation.anchor
    if redactions is not None:
        snapshot["authorization_id"] = citation.authorization_id
        snapshot["redacted"] = True
    return snapshot
