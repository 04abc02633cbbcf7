"""The story-graph tools show the leaf facts a scope linked rather than stored (G9): in
story_graph_search and story_graph_get_context, labelled with where they were first
extracted, with evidence story_graph_read_source reads — and never to another project."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.gateway.harness import in_memory, tool_error
from tests.gateway.test_result_contract import violations
from tests.gateway.test_story_tools import call
from tests.leaves import leaf_review, message

TEXT = "We chose PostgreSQL for the ledger. Budget is 12k. Ship by March."


async def binding_in(tree_stub, project: str) -> tuple[str, Any]:
    session = (await create_tree(tree_stub, project_id=project)).tree
    bound = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"), session_id=session.id, runtime="OpenCode"
        )
    )
    return bound.token, bound.consistency


async def test_the_tools_show_a_linked_leaf_to_its_project_only(
    tree_stub, graph_stub, graph_service
):
    word = unique("Ledger")
    facts = [(0, 35, f"{word} uses PostgreSQL")]
    msg = await message(tree_stub, TEXT)
    g, a = unique("g"), unique("a")
    under_global = await tree_stub.RecordReview(leaf_review(None, msg, facts, prefix=g))
    request = leaf_review(msg.project, msg, facts, prefix=a)
    entity = f"{a}-ledger"
    request.entities.append(tree_pb2.EntityInput(id=entity, label="Ledger"))
    request.leaf_facts[0].about.append(common_pb2.ObjectRef(type=common_pb2.ENTITY, id=entity))
    under_a = await tree_stub.RecordReview(request)
    token, _ = await binding_in(tree_stub, msg.project)
    other_token, consistency = await binding_in(tree_stub, unique("proj"))
    options = {"min_consistency": {"lsn": consistency.lsn}}

    async with in_memory(graph_service.port, token) as client:
        found = await call(client, "story_graph_search", {"query": word, "options": options})
        assert violations(found) == []
        assert found["hits"] == []
        [hit] = found["linked_leaves"]
        assert (hit["ref"], hit["result_id"]) == (
            {"type": "leaf_fact", "id": f"{a}-leaf-0"},
            under_a.result_id,
        )
        assert hit["leaf"]["extracted_in"] == {"global": True}
        assert hit["leaf"]["extracted_in_result_id"] == under_global.result_id
        source = await call(
            client,
            "story_graph_read_source",
            {"source_reference_id": hit["source_reference_ids"][0], "options": options},
        )
        assert source["text"] == TEXT[0:35]
        context = await call(
            client,
            "story_graph_get_context",
            {"object_ref": {"type": "entity", "id": entity}, "options": options},
        )
        assert violations(context) == []
        assert [h["ref"]["id"] for h in context["linked_leaves"]] == [f"{a}-leaf-0"]

    async with in_memory(graph_service.port, other_token) as client:
        elsewhere = await call(client, "story_graph_search", {"query": word, "options": options})
        assert (elsewhere["hits"], elsewhere["linked_leaves"]) == ([], [])
        refused = await client.call_tool(
            "story_graph_read_source",
            {"source_reference_id": f"{g}-src-0", "options": options},
        )
        assert tool_error(refused)["code"] == "scope_mismatch"
