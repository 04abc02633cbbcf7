"""Leaf facts extracted once from a source version and reused by every scope (G9): matching
leaves are linked, not stored again; a new version or a re-analysis stores new leaves beside
the old ones; what a scope may extract is bounded by the source's real project."""

from __future__ import annotations

import uuid

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, leaves_pb2, tree_pb2
from tests.conftest import unique
from tests.leaves import leaf_review, message, part, plan_request, ranges
from tests.tree_service.reviews import refused

TEXT = "We chose PostgreSQL for the ledger. Budget is 12k. Ship by March."
FACTS = [(0, 35, "The ledger uses PostgreSQL"), (36, 50, "The budget is 12k")]


async def leaf_rows(db, msg) -> list[tuple[str, str, int]]:
    rows = await db.fetch(
        "SELECT l.source_version, l.text, l.analysis FROM leaves l"
        " JOIN source_revisions s ON s.source_id::text = l.source_id"
        " WHERE s.node_id = $1 ORDER BY l.leaf_id",
        uuid.UUID(msg.node_id),
    )
    return [(r["source_version"], r["text"], r["analysis"]) for r in rows]


async def test_global_and_project_reviews_of_one_message_share_one_set_of_leaves(tree_stub, db):
    g, a = unique("g"), unique("a")
    msg = await message(tree_stub, TEXT)
    first = await tree_stub.RecordReview(leaf_review(None, msg, FACTS, prefix=g))
    again = await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS, prefix=a))
    assert (first.object_count, again.object_count) == (4, 4)
    assert await leaf_rows(db, msg) == [("1", t, 1) for _, _, t in FACTS]
    # The project's result stored no copies (the leaves keep their source and range): it links.
    stored = await db.fetchval(
        "SELECT count(*) FROM graph_objects WHERE result_id = $1", again.result_id
    )
    assert stored == 0
    uses = await db.fetch(
        "SELECT scope_key, object_id, linked FROM leaf_uses WHERE result_id = any($1::text[])"
        " ORDER BY scope_key, object_id",
        [first.result_id, again.result_id],
    )
    # A first extraction is its leaf; only the project's use of it is a row of its own.
    assert [(u["scope_key"], u["object_id"], u["linked"]) for u in uses] == [
        (f"projects:{msg.project}", f"{a}-leaf-0", True),
        (f"projects:{msg.project}", f"{a}-leaf-1", True),
    ]


async def test_a_partial_overlap_stores_only_the_missing_leaves_and_range(tree_stub, db):
    g, a = unique("g"), unique("a")
    msg = await message(tree_stub, TEXT)
    await tree_stub.RecordReview(
        leaf_review(None, msg, FACTS[:1], parts=[part(msg, 0, 35)], prefix=g)
    )
    wider = await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS, prefix=a))
    assert await leaf_rows(db, msg) == [("1", t, 1) for _, _, t in FACTS]
    added = await db.fetch(
        "SELECT lower(covered) AS lo, upper(covered) AS hi FROM leaf_extractions"
        " WHERE result_id = $1",
        wider.result_id,
    )
    assert [(r["lo"], r["hi"]) for r in added] == [(35, len(TEXT))]
    linked = await db.fetch(
        "SELECT object_id, linked FROM leaf_uses WHERE result_id = $1 ORDER BY object_id",
        wider.result_id,
    )
    assert [(r["object_id"], r["linked"]) for r in linked] == [(f"{a}-leaf-0", True)]
    kept = await db.fetch(
        "SELECT object_id FROM graph_objects WHERE result_id = $1 ORDER BY object_id",
        wider.result_id,
    )
    assert [r["object_id"] for r in kept] == [f"{a}-leaf-1", f"{a}-src-1"]


async def test_a_source_edit_stores_new_leaves_and_the_confirmed_old_ones_stay(tree_stub, db):
    msg = await message(tree_stub, TEXT)
    await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS, confirmed=True))
    edited = await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=msg.node_id,
            expected_revision=1,
            text=TEXT.replace("12k", "15k"),
        )
    )
    newer = type(msg)(msg.project, msg.tree_id, edited.node.id, "2", TEXT.replace("12k", "15k"))
    await tree_stub.RecordReview(
        leaf_review(msg.project, newer, [(0, 35, FACTS[0][2]), (36, 50, "The budget is 15k")])
    )
    assert await leaf_rows(db, msg) == [
        ("1", FACTS[0][2], 1),
        ("1", FACTS[1][2], 1),
        ("2", FACTS[0][2], 1),
        ("2", "The budget is 15k", 1),
    ]
    confirmed = await db.fetch(
        "SELECT confirmation_state FROM leaves l JOIN source_revisions s"
        " ON s.source_id::text = l.source_id WHERE s.node_id = $1 AND l.source_version = '1'",
        uuid.UUID(msg.node_id),
    )
    assert {r["confirmation_state"] for r in confirmed} == {"confirmed"}


async def test_a_reanalysis_adds_leaves_beside_the_old_ones(tree_stub, db):
    msg = await message(tree_stub, TEXT)
    await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS))
    await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS[:1], reanalysis=True))
    # Without re-analysis the same leaves link to the newest analysis.
    await tree_stub.RecordReview(leaf_review(None, msg, FACTS[:1]))
    assert await leaf_rows(db, msg) == [
        ("1", FACTS[0][2], 1),
        ("1", FACTS[1][2], 1),
        ("1", FACTS[0][2], 2),
    ]


async def test_a_later_result_of_the_scope_may_name_a_linked_leaf(tree_stub):
    g, a = unique("g"), unique("a")
    msg = await message(tree_stub, TEXT)
    await tree_stub.RecordReview(leaf_review(None, msg, FACTS, prefix=g))
    await tree_stub.RecordReview(leaf_review(msg.project, msg, FACTS, prefix=a))
    summary = tree_pb2.SummaryInput(
        id=unique("sum"),
        title="Ledger",
        text="PostgreSQL",
        fact_refs=[common_pb2.ObjectRef(type=common_pb2.LEAF_FACT, id=f"{a}-leaf-0")],
    )
    written = await tree_stub.RecordReview(
        tree_pb2.RecordReviewRequest(
            idempotency_key=unique("k"),
            result_id=unique("res"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[msg.project])),
            phase="daily",
            review_generated_at="2026-10-03T00:00:00Z",
            summaries=[summary],
        )
    )
    assert written.object_count == 1


async def test_a_scope_may_not_extract_another_projects_source(tree_stub, db):
    msg = await message(tree_stub, TEXT)
    other = unique("proj")
    fields, message_text = await refused(tree_stub, leaf_review(other, msg, FACTS))
    assert "leaf_extraction.parts[0].source_id" in fields
    assert msg.project in message_text
    assert await leaf_rows(db, msg) == []
    assert "parts[0].source_id" in await plan_refused(tree_stub, plan_request(other, [part(msg)]))


def set_version_seven(request: tree_pb2.RecordReviewRequest) -> None:
    request.leaf_extraction.parts[0].source_version = "7"
    for ref in request.source_references:
        ref.source_version = "7"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            lambda r: r.leaf_extraction.ClearField("contract_version"),
            "leaf_extraction.contract_version",
        ),
        (lambda r: r.leaf_extraction.ClearField("parts"), "leaf_extraction.parts"),
        (
            lambda r: r.source_references[0].CopyFrom(
                tree_pb2.SourceReferenceInput(
                    id=r.source_references[0].id,
                    source_type="message",
                    source_id=r.source_references[0].source_id,
                    source_version="1",
                )
            ),
            "leaf_facts[0].source_reference_ids",
        ),
        (
            lambda r: r.leaf_extraction.parts[0].range.CopyFrom(
                leaves_pb2.CodePointRange(start=0, end=10)
            ),
            "leaf_facts[0].source_reference_ids",
        ),
        (
            lambda r: r.leaf_extraction.parts[0].range.CopyFrom(
                leaves_pb2.CodePointRange(start=5, end=2)
            ),
            "leaf_extraction.parts[0].range",
        ),
        (
            lambda r: r.leaf_extraction.parts[0].range.CopyFrom(
                leaves_pb2.CodePointRange(start=0, end=999)
            ),
            "leaf_extraction.parts[0].range",
        ),
        (
            set_version_seven,
            "leaf_extraction.parts[0].source_version",
        ),
        (
            lambda r: setattr(r.leaf_extraction.parts[0], "source_type", "email"),
            "leaf_extraction.parts[0].source_type",
        ),
    ],
)
async def test_a_bad_leaf_extraction_is_refused_naming_the_field(tree_stub, db, change, field):
    msg = await message(tree_stub, TEXT)
    request = leaf_review(msg.project, msg, FACTS)
    change(request)
    fields, _ = await refused(tree_stub, request)
    assert field in fields
    assert await leaf_rows(db, msg) == []


async def test_the_plan_names_what_is_extracted_and_what_is_missing(tree_stub):
    msg = await message(tree_stub, TEXT)
    await tree_stub.RecordReview(
        leaf_review(None, msg, FACTS[:1], parts=[part(msg, 0, 35), part(msg, 50, 55)])
    )
    answer = await tree_stub.PlanExtraction(
        plan_request(msg.project, [part(msg), part(msg, 10, 52)])
    )
    whole, partial = answer.parts
    assert ranges(whole.extracted) == [(0, 35), (50, 55)]
    assert ranges(whole.missing) == [(35, 50), (55, len(TEXT))]
    assert (whole.requested.range.end, whole.leaf_count) == (len(TEXT), 1)
    assert ranges(partial.extracted) == [(10, 35), (50, 52)]
    assert ranges(partial.missing) == [(35, 50)]
    assert whole.source_project == msg.project
    other_contract = await tree_stub.PlanExtraction(
        plan_request(msg.project, [part(msg)], contract="leaf-extraction/2")
    )
    assert ranges(other_contract.parts[0].missing) == [(0, len(TEXT))]


async def plan_refused(tree_stub, request) -> list[str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.PlanExtraction(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return [v.field for v in describe(caught.value).violations]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: setattr(r, "contract_version", ""), "contract_version"),
        (lambda r: r.ClearField("parts"), "parts"),
        (lambda r: r.ClearField("scope"), "scope"),
        (lambda r: setattr(r.parts[0], "source_id", "no-such-node"), "parts[0].source_id"),
        (lambda r: setattr(r.parts[0].range, "end", 10_000), "parts[0].range"),
        (lambda r: setattr(r.parts[0].range, "start", -1), "parts[0].range"),
    ],
)
async def test_a_bad_plan_request_is_refused_naming_the_field(tree_stub, change, field):
    msg = await message(tree_stub, TEXT)
    request = plan_request(msg.project, [part(msg)])
    change(request)
    assert field in await plan_refused(tree_stub, request)
