"""The mirror tree's structure: questions, versions, candidate answers, continuations,
adoption, paths, citations, sources (T1–T5, T7, T8, W2)."""

from __future__ import annotations

import uuid

import asyncpg
import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, new_tree


async def test_editing_a_question_forks_a_new_version_and_leaves_the_old_path(tree_stub):
    tree = await new_tree(tree_stub)
    q1 = await ask(tree_stub, tree.id, "What is the plan?")
    a1 = await answer(tree_stub, q1.id, "Plan A")
    edited = await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=q1.id,
            expected_revision=q1.revision,
            text="What is the plan for Q3?",
        )
    )
    v2 = edited.node
    assert (v2.version, v2.version_of, v2.parent_id) == (2, q1.id, q1.parent_id)
    again = await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=q1.id))
    assert again.node.text == "What is the plan?"
    assert again.node.version == 1
    path = await tree_stub.GetPath(tree_pb2.GetPathRequest(node_id=a1.id))
    assert [n.id for n in path.nodes] == [q1.id, a1.id]  # the old path is untouched
    v3 = (
        await tree_stub.EditQuestion(
            tree_pb2.EditQuestionRequest(
                idempotency_key=unique("k"),
                question_id=v2.id,
                expected_revision=v2.revision,
                text="What is the plan for Q4?",
            )
        )
    ).node
    assert v3.version == 3


async def test_regenerating_adds_sibling_answers_with_their_own_conditions(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    first = await answer(
        tree_stub,
        question.id,
        "one",
        content=tree_pb2.GeneratedContent(
            conditions=tree_pb2.RunConditions(model_strategy="m1", parameters={"t": "0.2"})
        ),
    )
    second = await answer(
        tree_stub,
        question.id,
        "two",
        content=tree_pb2.GeneratedContent(
            conditions=tree_pb2.RunConditions(model_strategy="m2"),
            reasoning_summary="Compared both options",
            evidence=["benchmark table"],
            tool_trace=[
                tree_pb2.ToolTraceEntry(tool="search", input_summary="q", output_summary="3 hits")
            ],
        ),
    )
    assert first.parent_id == second.parent_id == question.id
    got = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=first.id))).node
    assert got.text == "one" and got.conditions.parameters["t"] == "0.2"
    assert got.answer_state == tree_pb2.SEALED
    assert second.reasoning_summary == "Compared both options"
    assert list(second.evidence) == ["benchmark table"]
    assert second.tool_trace[0].tool == "search"


async def test_a_hidden_chain_of_thought_is_refused_and_nothing_is_written(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await answer(
            tree_stub,
            question.id,
            "x",
            content=tree_pb2.GeneratedContent(chain_of_thought="secret thoughts"),
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["content.chain_of_thought"]
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))
    assert len(listed.nodes) == 1


async def test_descendants_stay_bound_to_their_answer_when_adoption_changes(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    a = await answer(tree_stub, question.id, "A")
    b = await answer(tree_stub, question.id, "B")
    follow_up = await ask(tree_stub, tree.id, "why A?", parent_id=a.id)
    adopted = await adopt(tree_stub, question.id, a.id, question.revision)
    readopted = await adopt(tree_stub, question.id, b.id, adopted.revision)
    assert readopted.adopted_answer_id == b.id
    assert readopted.revision == question.revision + 2
    path = await tree_stub.GetPath(tree_pb2.GetPathRequest(node_id=follow_up.id))
    assert [n.id for n in path.nodes] == [question.id, a.id, follow_up.id]


async def test_a_stale_adoption_is_aborted_with_the_current_revision(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    a = await answer(tree_stub, question.id, "A")
    b = await answer(tree_stub, question.id, "B")
    await adopt(tree_stub, question.id, a.id, question.revision)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await adopt(tree_stub, question.id, b.id, question.revision)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.ABORTED
    assert failure.reason == "revision_conflict"
    assert failure.metadata["current_revision"] == str(question.revision + 1)


async def test_continuations_are_their_own_nodes_under_one_answer(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    a = await answer(tree_stub, question.id, "A")
    continuation = (
        await tree_stub.AddContinuation(
            tree_pb2.AddContinuationRequest(
                idempotency_key=unique("k"),
                answer_id=a.id,
                kind=tree_pb2.VERIFICATION,
                text="Checked against the source",
            )
        )
    ).node
    assert continuation.kind == tree_pb2.CONTINUATION
    assert continuation.continuation_kind == tree_pb2.VERIFICATION
    assert continuation.parent_id == a.id
    unchanged = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=a.id))).node
    assert unchanged.text == "A"
    deeper = await ask(tree_stub, tree.id, "and then?", parent_id=continuation.id)
    assert deeper.parent_id == continuation.id


@pytest.mark.parametrize(
    "case", ["answer_under_answer", "continuation_under_question", "question_under_question"]
)
async def test_nodes_of_the_wrong_kind_are_refused_and_nothing_is_written(tree_stub, case):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    a = await answer(tree_stub, question.id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if case == "answer_under_answer":
            await answer(tree_stub, a.id)
        elif case == "continuation_under_question":
            await tree_stub.AddContinuation(
                tree_pb2.AddContinuationRequest(
                    idempotency_key=unique("k"),
                    answer_id=question.id,
                    kind=tree_pb2.ELABORATION,
                    text="x",
                )
            )
        else:
            await ask(tree_stub, tree.id, parent_id=question.id)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert failure.metadata["field"] in {"question_id", "answer_id", "parent_id"}
    assert len((await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))).nodes) == 2


async def test_a_citation_keeps_an_immutable_snapshot_of_the_cited_range(tree_stub):
    tree = await new_tree(tree_stub)
    source = await ask(tree_stub, tree.id, "Budget is 𝟙𝟘 k€ for Q3")
    cited = await ask(
        tree_stub,
        tree.id,
        "Is that enough?",
        citations=[tree_pb2.Citation(node_id=source.id, start=10, end=14, note="the amount")],
    )
    assert cited.citations[0].snapshot == "𝟙𝟘 k"  # code points, astral plane included
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await ask(
            tree_stub,
            tree.id,
            "x",
            citations=[tree_pb2.Citation(node_id=source.id, start=3, end=999)],
        )
    assert describe(caught.value).violations[0].field == "citations[0].end"


async def test_every_node_is_a_message_source_and_an_edit_is_a_new_revision(cluster, tree_stub):
    tree = await new_tree(tree_stub, project_id=unique("proj"))
    question = await ask(tree_stub, tree.id, "v1")
    a = await answer(tree_stub, question.id, "reply")
    await tree_stub.EditQuestion(
        tree_pb2.EditQuestionRequest(
            idempotency_key=unique("k"),
            question_id=question.id,
            expected_revision=question.revision,
            text="v2",
        )
    )
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        rows = await conn.fetch(
            "SELECT source_id::text, revision, role, text, project_id, ordinal "
            "FROM source_revisions WHERE tree_id = $1 ORDER BY ordinal",
            uuid.UUID(tree.id),
        )
    finally:
        await conn.close()
    assert [(r["source_id"], r["revision"], r["role"], r["text"]) for r in rows] == [
        (question.id, 1, "user", "v1"),
        (a.id, 1, "assistant", "reply"),
        (question.id, 2, "user", "v2"),
    ]
    assert {r["project_id"] for r in rows} == {tree.project_id}


async def test_invalid_utf8_is_refused_as_invalid_argument(tree_service):
    tree_request = tree_pb2.CreateTreeRequest(idempotency_key="k-utf8", title="ok", owner="o")
    raw = tree_request.SerializeToString().replace(b"ok", b"o\xff")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tree_service.port}") as channel:
        call = channel.unary_unary(
            "/mirrortree.v1.TreeService/CreateTree",
            request_serializer=lambda b: b,
            response_deserializer=tree_pb2.CreateTreeResponse.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(raw)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.violations[0].field == "request"


async def test_a_world_realm_needs_its_world(tree_stub):
    tree = await new_tree(tree_stub)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await ask(tree_stub, tree.id, realm=tree_pb2.WORLD)
    assert describe(caught.value).violations[0].field == "world"


async def test_a_long_path_reads_root_first_in_pages(tree_stub):
    tree = await new_tree(tree_stub)
    parent = ""
    expected = []
    for depth in range(7):
        question = await ask(tree_stub, tree.id, f"q{depth}", parent_id=parent)
        reply = await answer(tree_stub, question.id, f"a{depth}")
        expected += [question.id, reply.id]
        parent = reply.id
    seen: list[str] = []
    token = ""
    while True:
        page = await tree_stub.GetPath(
            tree_pb2.GetPathRequest(node_id=parent, page_size=4, page_token=token)
        )
        assert page.path_length == len(expected)
        seen += [n.id for n in page.nodes]
        token = page.next_page_token
        if not token:
            break
    assert seen == expected


async def test_oversize_question_text_is_refused_naming_the_field(tree_stub):
    tree = await new_tree(tree_stub)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await ask(tree_stub, tree.id, "x" * 100_001)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.violations[0].field == "text"


async def test_an_overlong_parameter_name_is_refused_readably_and_nothing_is_written(tree_stub):
    # The name was quoted whole in the field path, and a refusal that large never reached the
    # client (gRPC trailers are limited to 8 KiB by default): it saw RESOURCE_EXHAUSTED.
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await answer(
            tree_stub,
            question.id,
            "x",
            content=tree_pb2.GeneratedContent(
                conditions=tree_pb2.RunConditions(parameters={"p" * 100_000: "v\x00"})
            ),
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.violations
    assert all(
        v.field.startswith("content.conditions.parameters") and len(v.field) < 100
        for v in failure.violations
    )
    listed = await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))
    assert [n.id for n in listed.nodes] == [question.id]
    assert (await tree_stub.GetTree(tree_pb2.GetTreeRequest(tree_id=tree.id))).tree.revision == 2
