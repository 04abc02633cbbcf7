"""Context assembly (T11): the ancestor path, approved memory and explicit citations, never a
sibling branch; layered, deterministic, traceable compression with caller-written versioned
summaries; recorded context versions that read back identically; a mandatory part over budget
is an error that names what did not fit and records nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.tree_service.helpers import answer, ask

SECRET = "SIBLING-SECRET"
ROOT_TEXT = "Where should the team offsite be held this spring? " * 4


@dataclass
class Conversation:
    project: str
    tree: str
    root: Any
    first: Any
    follow_up: Any
    reply: Any
    current: Any
    sibling: Any


async def conversation(stub) -> Conversation:
    project = unique("ctx")
    tree = (await create_tree(stub, project)).tree
    root = await ask(
        stub,
        tree.id,
        ROOT_TEXT,
        attachments=[
            tree_pb2.Attachment(id="venues", name="venues.pdf", media_type="application/pdf")
        ],
    )
    first = await answer(
        stub,
        root.id,
        "Lisbon or Porto, both reachable by train. " * 3,
        content=tree_pb2.GeneratedContent(
            tool_trace=[
                tree_pb2.ToolTraceEntry(
                    tool="search", input_summary="venues", output_summary="twelve venues " * 8
                )
            ]
        ),
    )
    sibling = await answer(stub, root.id, f"{SECRET}: Madrid. Budget is 10k")
    follow_up = await ask(
        stub,
        tree.id,
        "What about the budget?",
        parent_id=first.id,
        citations=[tree_pb2.Citation(node_id=sibling.id, start=len(SECRET) + 2, end=0)],
    )
    await ask(stub, tree.id, f"{SECRET} second branch", parent_id=first.id)
    reply = await answer(stub, follow_up.id, "The budget holds for Porto.")
    current = await ask(
        stub,
        tree.id,
        "Book it?",
        parent_id=reply.id,
        citations=[tree_pb2.Citation(node_id=first.id, start=0, end=6, note="the city")],
    )
    await stub.SetPreference(
        tree_pb2.SetPreferenceRequest(
            idempotency_key=unique("k"),
            preference_id=unique("pref"),
            scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project])),
            subject="travel",
            text="prefers trains over planes",
            confirmed_by="user-1",
        )
    )
    return Conversation(project, tree.id, root, first, follow_up, reply, current, sibling)


def assemble(node_id: str, budget: int = 100_000, **fields: Any):
    return tree_pb2.AssembleContextRequest(
        idempotency_key=unique("k"), node_id=node_id, budget=budget, **fields
    )


async def summarize(stub, subject: str, text: str, expected: int = 0, **fields: Any):
    return (
        await stub.RecordContextSummary(
            tree_pb2.RecordContextSummaryRequest(
                idempotency_key=unique("k"),
                subject=subject,
                text=text,
                expected_version=expected,
                written_by="summarizer-1",
                **fields,
            )
        )
    ).summary


def by_subject(response) -> dict[str, Any]:
    return {i.subject: i for i in response.items}


async def test_a_context_holds_the_path_memory_and_citations_never_a_sibling(tree_stub):
    c = await conversation(tree_stub)
    context = await tree_stub.AssembleContext(
        assemble(c.current.id, boundaries=["Never book without asking."])
    )
    items = by_subject(context)
    path = [c.root, c.first, c.follow_up, c.reply, c.current]
    assert [i.node_id for i in context.items if i.subject.startswith("node:")] == [
        n.id for n in path
    ]
    assert all(SECRET not in i.text for i in context.items)
    assert c.sibling.id not in {i.node_id for i in context.items}
    # The sibling is reached only through the explicit citation's snapshot, never whole.
    assert items[f"citation:{c.follow_up.id}:0"].text == "Madrid. Budget is 10k"
    assert items[f"citation:{c.current.id}:0"].text == "Lisbon\nnote: the city"
    layers = {i.subject: i.layer for i in context.items}
    assert layers[f"node:{c.current.id}"] == tree_pb2.CURRENT_NODE
    assert layers[f"node:{c.reply.id}"] == tree_pb2.PARENT_CHAIN
    assert layers[f"node:{c.follow_up.id}"] == tree_pb2.PARENT_CHAIN
    assert layers[f"node:{c.first.id}"] == tree_pb2.OLDER_ANCESTOR
    assert layers[f"citation:{c.current.id}:0"] == tree_pb2.EXPLICIT_ANCHOR
    assert layers[f"citation:{c.follow_up.id}:0"] == tree_pb2.SIDE_BRANCH_CITATION
    assert layers[f"tool:{c.first.id}:0"] == tree_pb2.TOOL_RESULT
    (memory,) = [i for i in context.items if i.layer == tree_pb2.LONG_TERM_MEMORY]
    assert memory.text == "travel: prefers trains over planes"
    assert context.items[0].layer == tree_pb2.HARD_BOUNDARY
    assert context.items[-1].subject == f"node:{c.current.id}"
    assert {i.inclusion for i in context.items if i.layer != tree_pb2.ATTACHMENT} == {
        tree_pb2.INCLUDED_VERBATIM
    }
    assert context.used == sum(i.code_points for i in context.items) <= context.budget


async def test_compression_goes_layer_by_layer_and_reads_back_identically(tree_stub, db):
    c = await conversation(tree_stub)
    root_summary = await summarize(tree_stub, f"node:{c.root.id}", "Offsite location?")
    await summarize(tree_stub, f"node:{c.first.id}", "Lisbon or Porto (old)")
    first_summary = await summarize(tree_stub, f"node:{c.first.id}", "Lisbon/Porto", expected=1)
    assert first_summary.version == 2
    tool_summary = await summarize(tree_stub, f"tool:{c.first.id}:0", "12 venues")
    fragment = tree_pb2.AttachmentFragment(
        node_id=c.root.id, attachment_id="venues", start=100, end=112, text="Hall A, 80 p"
    )
    fields: dict[str, Any] = {"boundaries": ["No bookings."], "fragments": [fragment]}
    full = await tree_stub.AssembleContext(assemble(c.current.id, **fields))
    mandatory = sum(i.code_points for i in full.items if i.mandatory)
    # Room for the mandatory part, the memory, the summaries and the fragment, not for the
    # citation of a side branch (which has no summary): every layer is used.
    summaries = len("Offsite location?") + len("Lisbon/Porto") + len("12 venues")
    budget = mandatory + len("travel: prefers trains over planes") + summaries + 12
    request = assemble(c.current.id, budget, **fields)
    context = await tree_stub.AssembleContext(request)
    items = by_subject(context)
    assert items[f"node:{c.root.id}"].inclusion == tree_pb2.INCLUDED_AS_SUMMARY
    assert items[f"node:{c.root.id}"].summary_version == root_summary.version == 1
    assert items[f"node:{c.first.id}"].summary_version == 2
    assert items[f"node:{c.first.id}"].text == "Lisbon/Porto"
    assert items[f"tool:{c.first.id}:0"].summary_version == tool_summary.version
    side = items[f"citation:{c.follow_up.id}:0"]
    assert side.inclusion == tree_pb2.OMITTED and "over budget" in side.omitted_reason
    (attached,) = [i for i in context.items if i.layer == tree_pb2.ATTACHMENT]
    assert attached.inclusion == tree_pb2.INCLUDED_AS_FRAGMENT
    assert (attached.fragment_start, attached.fragment_end) == (100, 112)
    # One code point less and the oldest ancestor's summary gives way too.
    tighter = by_subject(
        await tree_stub.AssembleContext(assemble(c.current.id, budget - 1, **fields))
    )
    assert tighter[f"tool:{c.first.id}:0"].inclusion == tree_pb2.OMITTED
    assert tighter[f"node:{c.root.id}"].inclusion == tree_pb2.INCLUDED_AS_SUMMARY
    assert all(i.inclusion == tree_pb2.INCLUDED_VERBATIM for i in context.items if i.mandatory)
    assert context.used <= budget
    # Deterministic: the same inputs give the same items; the version reads back as it was.
    again = await tree_stub.AssembleContext(assemble(c.current.id, budget, **fields))
    assert again.context_version_id != context.context_version_id
    assert (list(again.items), again.digest) == (list(context.items), context.digest)
    recorded = await tree_stub.GetContextVersion(
        tree_pb2.GetContextVersionRequest(context_version_id=context.context_version_id)
    )
    context.ClearField("consistency")
    assert recorded == context
    # A later summary changes later contexts, never a recorded version.
    await summarize(tree_stub, f"node:{c.root.id}", "Where?", expected=1)
    assert (
        await tree_stub.GetContextVersion(
            tree_pb2.GetContextVersionRequest(context_version_id=context.context_version_id)
        )
    ) == recorded
    # A retry replays the recorded context instead of recording another.
    replay = await tree_stub.AssembleContext(request)
    assert replay.context_version_id == context.context_version_id
    count = await db.fetchval(
        "SELECT count(*) FROM context_versions WHERE node_id = $1", c.current.id
    )
    assert count == 4  # full, budget, tighter and again; the retry recorded nothing


async def test_a_fragment_is_kept_while_it_fits(tree_stub):
    c = await conversation(tree_stub)
    fragment = tree_pb2.AttachmentFragment(
        node_id=c.root.id, attachment_id="venues", start=0, end=5, text="Hall "
    )
    context = await tree_stub.AssembleContext(assemble(c.current.id, fragments=[fragment]))
    (attached,) = [i for i in context.items if i.layer == tree_pb2.ATTACHMENT]
    assert attached.inclusion == tree_pb2.INCLUDED_AS_FRAGMENT
    assert (attached.text, attached.fragment_start, attached.fragment_end) == ("Hall ", 0, 5)
    plain = await tree_stub.AssembleContext(assemble(c.current.id))
    (listed,) = [i for i in plain.items if i.layer == tree_pb2.ATTACHMENT]
    assert listed.inclusion == tree_pb2.OMITTED and "no retrieved fragment" in listed.omitted_reason


async def test_a_token_budget_compresses_by_the_callers_estimates(tree_stub):
    c = await conversation(tree_stub)
    await summarize(tree_stub, f"node:{c.root.id}", "Offsite?", token_estimate=2)
    estimates = {f"node:{c.root.id}": 500}
    loose = await tree_stub.AssembleContext(assemble(c.current.id, token_estimates=estimates))
    total = loose.used_tokens
    assert by_subject(loose)[f"node:{c.root.id}"].tokens == 500
    tight = await tree_stub.AssembleContext(
        assemble(c.current.id, token_budget=total - 400, token_estimates=estimates)
    )
    root = by_subject(tight)[f"node:{c.root.id}"]
    assert (root.inclusion, root.tokens) == (tree_pb2.INCLUDED_AS_SUMMARY, 2)
    assert tight.used_tokens <= total - 400


async def test_a_mandatory_part_over_budget_is_an_error_naming_it(tree_stub, db):
    c = await conversation(tree_stub)
    before = await db.fetchval("SELECT count(*) FROM context_versions")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AssembleContext(assemble(c.current.id, 10))
    failure = describe(caught.value)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert failure.reason == "context_over_budget"
    assert f"current_node node:{c.current.id}" in failure.message
    assert f"explicit_anchor citation:{c.current.id}:0" in failure.message
    assert failure.metadata["field"] == "budget"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AssembleContext(assemble(c.current.id, token_budget=3))
    assert describe(caught.value).metadata["field"] == "token_budget"
    assert await db.fetchval("SELECT count(*) FROM context_versions") == before


async def test_an_answer_records_the_context_version_it_came_from(tree_stub):
    c = await conversation(tree_stub)
    context = await tree_stub.AssembleContext(assemble(c.current.id))
    reply = await answer(
        tree_stub, c.current.id, "Booked.", context_version_id=context.context_version_id
    )
    assert reply.context_version_id == context.context_version_id
    read = await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=reply.id))
    assert read.node.context_version_id == context.context_version_id
    elsewhere = await tree_stub.AssembleContext(assemble(c.follow_up.id))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await answer(tree_stub, c.current.id, "x", context_version_id=elsewhere.context_version_id)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert describe(caught.value).metadata["field"] == "context_version_id"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await answer(
            tree_stub, c.current.id, "x", context_version_id="00000000-0000-4000-8000-000000000000"
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"budget": 0}, "budget"),
        ({"token_budget": -1}, "token_budget"),
        ({"boundaries": [""]}, "boundaries[0]"),
        ({"parent_chain": -1}, "parent_chain"),
        (
            {"fragments": [tree_pb2.AttachmentFragment(attachment_id="venues", text="ab", end=3)]},
            "fragments[0].node_id",
        ),
    ],
)
async def test_bad_context_requests_name_the_field(tree_stub, db, change, field):
    c = await conversation(tree_stub)
    before = await db.fetchval("SELECT count(*) FROM context_versions")
    request = assemble(c.current.id)
    for name, value in change.items():
        if isinstance(value, list):
            getattr(request, name).extend(value)
        else:
            setattr(request, name, value)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AssembleContext(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in [v.field for v in describe(caught.value).violations]
    assert await db.fetchval("SELECT count(*) FROM context_versions") == before


async def test_fragments_are_checked_against_their_attachment(tree_stub):
    c = await conversation(tree_stub)
    cases = [
        (
            tree_pb2.AttachmentFragment(
                node_id=c.root.id, attachment_id="venues", start=2, end=3, text="ab"
            ),
            "fragments[0].end",
        ),
        (
            tree_pb2.AttachmentFragment(
                node_id=c.root.id, attachment_id="other", start=0, end=2, text="ab"
            ),
            "fragments[0].attachment_id",
        ),
        (
            tree_pb2.AttachmentFragment(
                node_id=c.sibling.id, attachment_id="venues", start=0, end=2, text="ab"
            ),
            "fragments[0].node_id",
        ),
    ]
    for fragment, field in cases:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tree_stub.AssembleContext(assemble(c.current.id, fragments=[fragment]))
        assert [v.field for v in describe(caught.value).violations] == [field]


async def test_summaries_are_versioned_and_checked(tree_stub, db):
    c = await conversation(tree_stub)
    await summarize(tree_stub, f"node:{c.root.id}", "v1")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await summarize(tree_stub, f"node:{c.root.id}", "stale", expected=0)
    assert caught.value.code() == grpc.StatusCode.ABORTED
    assert describe(caught.value).metadata["current_revision"] == "1"
    for subject in ("node:nope", "tool:x", f"tool:{c.first.id}:1", f"citation:{c.root.id}:0"):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await summarize(tree_stub, subject, "s")
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, subject
        assert [v.field for v in describe(caught.value).violations] == ["subject"]
    rows = await db.fetchval("SELECT count(*) FROM context_summaries WHERE tree_id = $1", c.tree)
    assert rows == 1


async def test_a_streamed_answer_records_its_context_version_too(tree_stub):
    c = await conversation(tree_stub)
    context = await tree_stub.AssembleContext(assemble(c.current.id))
    req = tree_pb2.StreamAnswerRequest
    messages = [
        req(
            open=req.Open(
                idempotency_key=unique("k"),
                question_id=c.current.id,
                context_version_id=context.context_version_id,
            )
        ),
        req(chunk=req.Chunk(seq=1, text="Booking ")),
        req(complete=req.Complete()),
    ]
    opened = ""
    async for response in tree_stub.StreamAnswer(iter(messages)):
        if response.HasField("opened"):
            opened = response.opened.id
    node = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=opened))).node
    assert (node.text, node.context_version_id) == ("Booking ", context.context_version_id)


async def test_a_context_write_retried_with_its_key_for_another_request_is_refused(tree_stub):
    c = await conversation(tree_stub)
    request = assemble(c.current.id)
    await tree_stub.AssembleContext(request)
    request.budget = 99
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.AssembleContext(request)
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
