"""Search reads the leaf facts a scope linked rather than stored (G9): under the id the scope's
result gave them, labelled with where they were first extracted, with evidence ReadSource
reads in that scope — and never in a scope the source does not belong to."""

from __future__ import annotations

import grpc
import pytest

from graph_service import leaf_reads
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.leaves import leaf_review, message, scope

TEXT = "We chose PostgreSQL for the ledger. Budget is 12k. Ship by March."


def search(project: str | None, query: str, token, **fields) -> graph_pb2.SearchRequest:
    return graph_pb2.SearchRequest(
        query=query,
        scope=scope(project),
        options=graph_pb2.ReadOptions(min_consistency=token),
        **fields,
    )


async def reviewed_twice(tree_stub):
    """One message reviewed under Global (the first extraction) and under its project
    (linking): the leaf's text is unique to this test."""
    word = unique("Ledger")
    facts = [(0, 35, f"{word} uses PostgreSQL")]
    msg = await message(tree_stub, TEXT)
    g, a = unique("g"), unique("a")
    under_global = await tree_stub.RecordReview(leaf_review(None, msg, facts, prefix=g))
    under_a = await tree_stub.RecordReview(leaf_review(msg.project, msg, facts, prefix=a))
    return msg, word, g, a, under_global, under_a


async def test_a_project_finds_the_leaf_it_linked_under_its_own_id(tree_stub, graph_stub):
    msg, word, g, a, under_global, under_a = await reviewed_twice(tree_stub)
    found = await graph_stub.Search(search(msg.project, word.lower(), under_a.consistency))
    # The project stored no copy, so no ordinary hit holds it; the linked leaf does.
    assert list(found.hits) == []
    [hit] = found.linked_leaves
    assert (hit.ref.type, hit.ref.id, hit.result_id) == (
        common_pb2.LEAF_FACT,
        f"{a}-leaf-0",
        under_a.result_id,
    )
    assert hit.leaf.text == f"{word} uses PostgreSQL"
    # Global's extraction, labelled as such: never the project's own conclusion.
    assert hit.leaf.extracted_in.WhichOneof("kind") == "global"
    assert hit.leaf.extracted_in_result_id == under_global.result_id
    assert (hit.leaf.source_project, hit.leaf.range.start, hit.leaf.range.end) == (
        msg.project,
        0,
        35,
    )
    assert list(hit.source_reference_ids) == [f"{g}-src-0"]
    # Its evidence reads in the project that linked it.
    read = await graph_stub.ReadSource(
        graph_pb2.ReadSourceRequest(
            source_reference_id=f"{g}-src-0",
            scope=scope(msg.project),
            options=graph_pb2.ReadOptions(min_consistency=under_a.consistency),
        )
    )
    assert read.text == TEXT[0:35]
    # It has no stored copy in the project, so there is no context of its own to read.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=hit.ref,
                scope=scope(msg.project),
                options=graph_pb2.ReadOptions(min_consistency=under_a.consistency),
            )
        )
    assert describe(caught.value).reason == "not_found"


async def test_another_project_finds_nothing_and_may_not_read_the_evidence(tree_stub, graph_stub):
    _, word, g, _, _, under_a = await reviewed_twice(tree_stub)
    other = unique("proj")
    found = await graph_stub.Search(search(other, word, under_a.consistency))
    assert (list(found.hits), list(found.linked_leaves)) == ([], [])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await graph_stub.ReadSource(
            graph_pb2.ReadSourceRequest(
                source_reference_id=f"{g}-src-0",
                scope=scope(other),
                options=graph_pb2.ReadOptions(min_consistency=under_a.consistency),
            )
        )
    assert describe(caught.value).reason == "scope_mismatch"


async def test_global_finds_the_leaf_once(tree_stub, graph_stub):
    _, word, g, _, under_global, under_a = await reviewed_twice(tree_stub)
    found = await graph_stub.Search(search(None, word, under_a.consistency))
    # Global's own copy is its hit; the project's use of it is not Global's to list.
    assert [(h.ref.id, h.result_id) for h in found.hits] == [
        (f"{g}-leaf-0", under_global.result_id)
    ]
    assert list(found.linked_leaves) == []


async def test_global_finds_a_leaf_it_linked_from_a_project_extraction(tree_stub, graph_stub):
    word = unique("Budget")
    facts = [(36, 50, f"{word} is 12k")]
    msg = await message(tree_stub, TEXT)
    g, a = unique("g"), unique("a")
    await tree_stub.RecordReview(leaf_review(msg.project, msg, facts, prefix=a))
    under_global = await tree_stub.RecordReview(leaf_review(None, msg, facts, prefix=g))
    found = await graph_stub.Search(search(None, word, under_global.consistency))
    assert list(found.hits) == []
    [hit] = found.linked_leaves
    assert (hit.ref.id, hit.result_id) == (f"{g}-leaf-0", under_global.result_id)
    assert list(hit.leaf.extracted_in.projects.project_ids) == [msg.project]
    as_project = await graph_stub.Search(search(msg.project, word, under_global.consistency))
    assert [h.ref.id for h in as_project.hits] == [f"{a}-leaf-0"]
    assert list(as_project.linked_leaves) == []


async def test_a_scope_reads_linked_leaves_only_once_it_has_linked_one(
    tree_stub, graph_stub, monkeypatch
):
    """Search and GetContext leave out the read of the leaves their scope linked while the
    scope has linked none (their openings ask): a project that only recorded its own leaves
    finds and reads them as its own, and no read of linked leaves is made."""
    reads: list[str] = []

    def noting(name: str):
        read = getattr(leaf_reads, name)

        async def noted(*args, **kwargs):
            reads.append(name)
            return await read(*args, **kwargs)

        monkeypatch.setattr(leaf_reads, name, noted)

    noting("linked")
    noting("linked_about")
    word = unique("Ship")
    facts = [(51, 65, f"{word} by March")]
    msg = await message(tree_stub, TEXT)
    a, g = unique("a"), unique("g")
    own = await tree_stub.RecordReview(leaf_review(msg.project, msg, facts, prefix=a))
    found = await graph_stub.Search(search(msg.project, word, own.consistency))
    assert [h.ref.id for h in found.hits] == [f"{a}-leaf-0"]
    context = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=found.hits[0].ref,
            scope=scope(msg.project),
            options=graph_pb2.ReadOptions(min_consistency=own.consistency),
        )
    )
    assert (list(found.linked_leaves), list(context.linked_leaves), reads) == ([], [], [])
    # Global links the project's leaf: its search reads the leaves it linked, and finds it.
    under_global = await tree_stub.RecordReview(leaf_review(None, msg, facts, prefix=g))
    found = await graph_stub.Search(search(None, word, under_global.consistency))
    assert [h.ref.id for h in found.linked_leaves] == [f"{g}-leaf-0"]
    assert reads == ["linked"]


async def test_filters_apply_to_linked_leaves(tree_stub, graph_stub):
    msg, word, _, _, _, under_a = await reviewed_twice(tree_stub)
    token = under_a.consistency
    summaries_only = await graph_stub.Search(
        search(msg.project, word, token, object_types=[common_pb2.SUMMARY])
    )
    assert list(summaries_only.linked_leaves) == []
    other_text = await graph_stub.Search(search(msg.project, unique("nothing"), token))
    assert list(other_text.linked_leaves) == []
    later = graph_pb2.SearchRequest(
        query=word,
        scope=scope(msg.project),
        options=graph_pb2.ReadOptions(min_consistency=token),
        time_basis=common_pb2.RECORDED_AT,
    )
    setattr(later.time_range, "from", "2100-01-01T00:00:00Z")
    assert list((await graph_stub.Search(later)).linked_leaves) == []
    setattr(later.time_range, "from", "2000-01-01T00:00:00Z")
    assert len((await graph_stub.Search(later)).linked_leaves) == 1


async def test_get_context_lists_the_linked_leaves_about_the_object(tree_stub, graph_stub):
    word = unique("Ledger")
    facts = [(0, 35, f"{word} uses PostgreSQL"), (36, 50, f"{word} budget is 12k")]
    msg = await message(tree_stub, TEXT)
    g, a = unique("g"), unique("a")
    under_global = await tree_stub.RecordReview(leaf_review(None, msg, facts, prefix=g))
    request = leaf_review(msg.project, msg, facts, prefix=a)
    entity = f"{a}-ledger"
    request.entities.append(tree_pb2.EntityInput(id=entity, label="Ledger"))
    # What a leaf is about is the project's own reading: only the first leaf is about it.
    request.leaf_facts[0].about.append(common_pb2.ObjectRef(type=common_pb2.ENTITY, id=entity))
    under_a = await tree_stub.RecordReview(request)

    async def context(project: str | None, **fields) -> graph_pb2.GetContextResponse:
        read: graph_pb2.GetContextResponse = await graph_stub.GetContext(
            graph_pb2.GetContextRequest(
                object_ref=common_pb2.ObjectRef(type=common_pb2.ENTITY, id=entity),
                scope=scope(project),
                options=graph_pb2.ReadOptions(min_consistency=under_a.consistency),
                **fields,
            )
        )
        return read

    read = await context(msg.project)
    [hit] = read.linked_leaves
    assert (hit.ref.id, hit.result_id, hit.leaf.text) == (
        f"{a}-leaf-0",
        under_a.result_id,
        facts[0][2],
    )
    assert hit.leaf.extracted_in_result_id == under_global.result_id
    assert list(hit.source_reference_ids) == [f"{g}-src-0"]
    # The timeline lists stored evidence only; the linked leaf is not the scope's copy.
    assert list((await context(msg.project, mode=graph_pb2.TIMELINE)).linked_leaves) == []
    # Another project cannot read the entity at all.
    with pytest.raises(grpc.aio.AioRpcError):
        await context(unique("proj"))
