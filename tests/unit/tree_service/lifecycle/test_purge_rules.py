"""The rules of purging (T16) without a database: the preview token, the choices a purge needs,
what tombstones and retractions say, how quoted content is found and what is left of records
and stored responses that held it."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mirrortree.v1 import purge_pb2
from tree_service.errors import InvalidInput
from tree_service.lifecycle.purge_rules import (
    QUOTE_RUN,
    Quotes,
    Token,
    Tombstone,
    expect_token_for,
    in_purged_branch,
    parse_token,
    purged_citation,
    purged_entry,
    purged_item,
    source_purged,
    token_of,
)

BRANCH = "3f2b8c1e-7a4d-4e5f-9b6a-0c1d2e3f4a5b"
OTHER = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
DIGEST = "0123456789abcdef" * 4
# Two hours east of UTC: tombstones state the time in UTC whatever zone it was given in.
PURGED_AT = datetime(2026, 12, 5, 9, 30, tzinfo=timezone(timedelta(hours=2)))
STONE = Tombstone("purge-1", BRANCH, "tree-1", "ana", "leaked a password", PURGED_AT)
LONG = "The quarterly numbers were wrong in the second table"  # longer than QUOTE_RUN


def impact(**fields) -> purge_pb2.PurgeImpact:
    return purge_pb2.PurgeImpact(branch_id=BRANCH, tree_id="tree-1", branch_revision=4, **fields)


# ---- the preview token ---------------------------------------------------------------------


@given(
    branch=st.uuids().map(str),
    revision=st.integers(min_value=1, max_value=2**63 - 1),
    include_copies=st.booleans(),
    sub_branches=st.lists(st.uuids().map(str), max_size=3),
)
def test_a_preview_token_parses_back_to_its_branch_revision_choice_and_impact_digest(
    branch, revision, include_copies, sub_branches
):
    previewed = purge_pb2.PurgeImpact(
        branch_id=branch, tree_id="t", branch_revision=revision, sub_branch_ids=sub_branches
    )
    parsed = parse_token(token_of(previewed, include_copies))
    digest = hashlib.sha256(previewed.SerializeToString(deterministic=True)).hexdigest()
    assert parsed == Token(branch, revision, include_copies, digest)


def test_the_token_changes_with_anything_the_preview_lists_and_with_the_copies_choice():
    base = token_of(impact(), False)
    assert token_of(impact(), False) == base
    assert token_of(impact(), True) != base
    changed = [
        impact(sub_branch_ids=[OTHER]),
        impact(citations=[purge_pb2.InboundCitation(citing_node_id=OTHER)]),
        impact(context_copies=[purge_pb2.ContextCopyImpact(subject="node:x")]),
        purge_pb2.PurgeImpact(branch_id=BRANCH, tree_id="tree-1", branch_revision=5),
    ]
    tokens = {token_of(other, False) for other in changed}
    assert base not in tokens and len(tokens) == len(changed)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not-a-token",
        f"purge2.{BRANCH}.4.0.{DIGEST}",  # another version
        f"purge1.{BRANCH}.0.0.{DIGEST}",  # revisions start at 1
        f"purge1.{BRANCH}.04.0.{DIGEST}",  # no leading zero
        f"purge1.{BRANCH}.{'1' * 20}.0.{DIGEST}",  # past int64
        f"purge1.{BRANCH}.-4.0.{DIGEST}",
        f"purge1.{BRANCH}.4.2.{DIGEST}",  # the copies flag is 0 or 1
        f"purge1.{BRANCH}.4.true.{DIGEST}",
        f"purge1.{BRANCH}.4.0.{DIGEST[:-1]}",  # a digest of 63 hex digits
        f"purge1.{BRANCH}.4.0.{DIGEST}0",
        f"purge1.{BRANCH}.4.0.{DIGEST.upper()}",
        f"purge1.{BRANCH[:-1]}.4.0.{DIGEST}",  # a branch id one short
        f"purge1.{BRANCH.upper()}.4.0.{DIGEST}",
        f"purge1.{BRANCH}.4.0.{DIGEST}.extra",
        f" purge1.{BRANCH}.4.0.{DIGEST}",
    ],
)
def test_a_malformed_token_is_not_parsed(text):
    assert parse_token(text) is None


def test_a_token_with_a_trailing_newline_is_not_parsed():
    assert parse_token(f"purge1.{BRANCH}.4.0.{DIGEST}\n") is None


def test_a_token_for_another_branch_is_refused_naming_the_token_and_both_branches():
    with pytest.raises(InvalidInput) as caught:
        expect_token_for(Token(OTHER, 4, False, DIGEST), BRANCH, False)
    (violation,) = caught.value.violations
    assert violation.field == "preview_token"
    assert OTHER in violation.description and BRANCH in violation.description


@pytest.mark.parametrize(("previewed", "said"), [(True, "included"), (False, "kept")])
def test_a_copies_choice_other_than_the_previews_is_refused_saying_what_the_preview_did(
    previewed, said
):
    with pytest.raises(InvalidInput) as caught:
        expect_token_for(Token(BRANCH, 4, previewed, DIGEST), BRANCH, not previewed)
    (violation,) = caught.value.violations
    assert violation.field == "choice.transplant_copies"
    assert f"which {said} the transplanted copies" in violation.description


def test_the_branch_is_checked_before_the_copies_choice_and_a_matching_token_passes():
    with pytest.raises(InvalidInput) as caught:
        expect_token_for(Token(OTHER, 4, True, DIGEST), BRANCH, False)
    assert caught.value.violations[0].field == "preview_token"
    for copies in (False, True):
        expect_token_for(Token(BRANCH, 4, copies, DIGEST), BRANCH, copies)


# ---- tombstones and retractions -------------------------------------------------------------


def test_a_tombstone_record_keeps_who_when_and_why_in_utc():
    assert STONE.record() == {
        "purge_id": "purge-1",
        "branch_id": BRANCH,
        "purged_by": "ana",
        "purged_at": "2026-12-05T07:30:00Z",
        "reason": "leaked a password",
    }


def test_a_tombstone_describes_the_node_and_a_retraction_names_the_purge():
    assert STONE.description("node-7") == (
        f"node node-7 was purged with branch {BRANCH} by ana at 2026-12-05T07:30:00Z: "
        "leaked a password"
    )
    assert STONE.retraction() == (
        f"Retracted: this rested on content purged with branch {BRANCH} by ana at "
        "2026-12-05T07:30:00Z (leaked a password)."
    )


def test_a_tombstone_message_carries_every_field_and_the_node_only_when_asked_about():
    assert STONE.to_proto("node-7") == purge_pb2.PurgeTombstone(
        purge_id="purge-1",
        branch_id=BRANCH,
        tree_id="tree-1",
        purged_by="ana",
        reason="leaked a password",
        purged_at="2026-12-05T07:30:00Z",
        node_id="node-7",
    )
    assert STONE.to_proto().node_id == ""
    precise = Tombstone("p", BRANCH, "t", "ana", "r", datetime(2026, 1, 2, 3, 4, 5, 600, UTC))
    assert precise.to_proto().purged_at == "2026-01-02T03:04:05.000600Z"


# ---- quotes of purged text ------------------------------------------------------------------


def test_a_short_text_is_found_only_whole():
    quotes = Quotes(["Bruno Lima"])
    assert quotes("she said: bruno lima? No, Bruno Lima.")
    assert not quotes("she said Bruno Lim")
    assert not quotes("bruno lima")  # quoting is exact


@pytest.mark.parametrize("start", [0, 1, 13, len(LONG) - QUOTE_RUN])
def test_a_long_text_is_found_by_any_run_of_quote_run_code_points(start):
    run = LONG[start : start + QUOTE_RUN]
    assert Quotes([LONG])(f"as the report put it, «{run}», and more")


def test_a_partial_quote_shorter_than_the_run_is_not_found():
    quotes = Quotes([LONG])
    assert not quotes(LONG[5 : 5 + QUOTE_RUN - 1])
    # Two runs each one short, together not one run of the text, are not found either.
    assert not quotes(LONG[: QUOTE_RUN - 1] + "…" + LONG[QUOTE_RUN : 2 * QUOTE_RUN - 1])


def test_any_of_the_fields_may_quote_and_no_field_quotes_nothing():
    quotes = Quotes(["Bruno Lima", LONG])
    assert quotes("a title", "", f"a body: {LONG[10:40]}")
    assert quotes("Bruno Lima", "")
    assert not quotes()
    assert not quotes("", "an unrelated body")
    assert not Quotes([])("Bruno Lima " + LONG)


def test_non_ascii_text_is_counted_in_code_points():
    # 24 code points of three UTF-8 bytes each: a long text, searched for by runs.
    long = "日本語のテキストを引用する部分が長すぎる場合の例です"
    assert len(long) >= QUOTE_RUN and len(long.encode()) > 2 * QUOTE_RUN
    quotes = Quotes([long])
    assert quotes("前置き" + long[2 : 2 + QUOTE_RUN] + "後書き")
    assert not quotes(long[2 : 2 + QUOTE_RUN - 1])
    # 23 emoji (four bytes each) are still a short text: found whole, not by a part.
    short = "😀" * (QUOTE_RUN - 1)
    assert Quotes([short])(f"x{short}x")
    assert not Quotes([short])(short[1:])


def naive_quotes(texts: list[str], field: str) -> bool:
    for text in texts:
        if len(text) < QUOTE_RUN:
            if text in field:
                return True
        elif any(text[i : i + QUOTE_RUN] in field for i in range(len(text) - QUOTE_RUN + 1)):
            return True
    return False


@given(
    texts=st.lists(st.text("ab", min_size=4, max_size=40), min_size=1, max_size=3),
    field=st.text("abc", max_size=60),
    data=st.data(),
)
def test_quotes_find_exactly_what_a_naive_search_finds(texts, field, data):
    # Half the time, splice a slice of one of the texts into the field.
    if data.draw(st.booleans()):
        text = data.draw(st.sampled_from(texts))
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        at = data.draw(st.integers(0, len(field)))
        field = field[:at] + text[start:end] + field[at:]
    assert Quotes(texts)(field) == naive_quotes(texts, field)


# ---- what is left of records that held purged content ---------------------------------------


def test_a_purged_main_line_entry_keeps_its_frame_and_no_content():
    entry = {
        "node_id": "n",
        "kind": "answer",
        "revision": 3,
        "ordinal": 2,
        "text": "the secret plan",
        "reasoning_summary": "because of the secret plan",
        "evidence": ["the secret plan, p. 3"],
        "tool_trace": [{"tool": "search", "output": "the secret plan"}],
        "attachments": [{"id": "a", "name": "plan.pdf"}],
        "citations": [{"node_id": "m", "snapshot": "the secret plan"}],
        "conditions": {"model_strategy": "m"},
        "stop_reason": "length",
        "branch_id": "an-inner-branch",
        "branch_state": "archived",
    }
    original = json.dumps(entry, sort_keys=True)
    purged = purged_entry(entry, BRANCH)
    assert json.dumps(entry, sort_keys=True) == original  # the entry given is left as it was
    assert {k: purged[k] for k in ("node_id", "kind", "revision", "ordinal")} == {
        "node_id": "n",
        "kind": "answer",
        "revision": 3,
        "ordinal": 2,
    }
    assert (purged["branch_id"], purged["branch_state"]) == (BRANCH, "purged")
    assert purged["stop_reason"] is None and purged["conditions"] == {}
    assert "secret" not in json.dumps(purged)
    assert purged.keys() == entry.keys()


def test_a_purged_comparison_entry_keeps_what_was_compared_and_loses_its_criteria():
    entry: dict[str, Any] = {
        "node_id": "n",
        "comparison": {"answer_ids": ["a", "b"], "criteria": ["cost"]},
    }
    purged = purged_entry(entry, BRANCH)
    assert purged["comparison"] == {"answer_ids": ["a", "b"], "criteria": []}
    assert entry["comparison"]["criteria"] == ["cost"]
    assert purged_entry({"node_id": "n", "comparison": None}, BRANCH)["comparison"] is None


def test_a_kept_copy_of_a_purged_node_says_it_lies_in_a_purged_branch():
    assert in_purged_branch(BRANCH) == {"branch_id": BRANCH, "branch_state": "purged"}


def test_a_kept_citation_keeps_its_copy_and_says_its_source_was_purged():
    citation = {"node_id": "n", "snapshot": "their plan", "status": "superseded"}
    kept = source_purged(citation, STONE)
    assert kept == {
        "node_id": "n",
        "snapshot": "their plan",
        "status": "source_purged",
        "source_description": STONE.description("n"),
    }
    assert citation["status"] == "superseded"


def test_an_entry_without_content_fields_gets_them_blank():
    purged = purged_entry({"node_id": "n"}, BRANCH)
    assert purged["text"] == "" and purged["citations"] == [] and purged["evidence"] == []


def test_a_purged_citation_keeps_where_it_pointed_and_says_why_it_is_gone():
    citation = {
        "node_id": "n",
        "start": 2,
        "end": 9,
        "note": "their plan",
        "snapshot": "secret plan",
        "anchor": {"attachment_id": "a", "fragment": {"start": 0, "end": 4}},
        "authorization_id": "g",
        "source_description": "code points [2, 9) of answer n",
    }
    assert purged_citation(citation, STONE) == {
        "node_id": "n",
        "start": 2,
        "end": 9,
        "note": "their plan",
        "snapshot": "",
        "redacted": True,
        "status": "purged",
        "source_description": STONE.description("n"),
    }


def test_a_purged_citation_invents_none_of_the_fields_it_lacked():
    purged = purged_citation({"snapshot": "secret", "end": 6}, STONE)
    assert set(purged) == {"end", "snapshot", "redacted", "status", "source_description"}
    assert purged["snapshot"] == "" and purged["source_description"].startswith("node  was")


def test_a_purged_context_item_reads_as_omitted_naming_its_subject():
    item = {
        "subject": "node:n",
        "layer": "direct_parent",
        "text": "secret plan",
        "inclusion": "summary",
        "summary_version": 3,
        "code_points": 11,
    }
    assert purged_item(item) == {
        "subject": "node:n",
        "layer": "direct_parent",
        "text": "",
        "inclusion": "omitted",
        "summary_version": 0,
        "code_points": 11,
        "omitted_reason": "purged: node:n",
    }
    assert purged_item({"text": "x"})["omitted_reason"] == "purged: "
