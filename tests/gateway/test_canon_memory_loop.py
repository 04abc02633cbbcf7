"""Canon becomes memory, end to end (T22, W5): a path canonicalized with a memory candidate over
gRPC, the user accepting it, the next assembled context holding it, and an agent finding it over
MCP as labelled background — never as a graph fact."""

from __future__ import annotations

from mirrortree.v1 import tree_pb2
from tests.conftest import create_tree, unique
from tests.gateway.harness import in_memory
from tests.gateway.test_linked_leaf_tools import binding_in
from tests.gateway.test_story_tools import call
from tests.tree_service.helpers import answer, ask, canonicalize

LABEL = "background: confirmed preference"


async def test_an_accepted_memory_candidate_is_in_the_next_context_and_found_over_mcp(
    tree_stub, graph_service
):
    project = unique("memory")
    word = unique("Harbourlight")
    tree = (await create_tree(tree_stub, project)).tree
    question = await ask(tree_stub, tree.id, "Which sync server do we keep?")
    reply = await answer(tree_stub, question.id, "PostgreSQL, for the lock waits")
    memory = tree_pb2.CandidateProposal(
        kind="memory_candidate",
        tier="long_term",
        subject="sync server",
        text=f"The sync server stays on PostgreSQL ({word})",
    )
    version = await canonicalize(tree_stub, tree.id, leaf=reply.id, candidates=[memory])
    accepted = await tree_stub.AcceptCanonCandidate(
        tree_pb2.ReviewCanonCandidateRequest(
            idempotency_key=unique("k"),
            candidate_id=version.candidates[0].id,
            expected_revision=1,
            reviewed_by="user-1",
            reason="keep it",
        )
    )
    memory_id = accepted.candidate.memory_id
    assert memory_id

    # The next context of the project holds it in its long-term memory layer.
    follow_up = await ask(tree_stub, tree.id, "What next?", parent_id=reply.id)
    context = await tree_stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=follow_up.id, budget=100_000
        )
    )
    remembered = {i.subject: i for i in context.items}[f"memory:{memory_id}"]
    assert remembered.layer == tree_pb2.LONG_TERM_MEMORY
    assert remembered.text == f"sync server: {memory.text}"

    # An agent of the project finds it over MCP, as background beside the hits.
    token, consistency = await binding_in(tree_stub, project)
    options = {"min_consistency": {"lsn": consistency.lsn}}
    async with in_memory(graph_service.port, token) as client:
        found = await call(client, "story_graph_search", {"query": word, "options": options})
        assert found["hits"] == []
        (background,) = found["background"]
        assert background["ref"] == {"type": "preference", "id": memory_id}
        assert (background["label"], background["subject"]) == (LABEL, "sync server")
        assert word in background["excerpt"]["text"]
        assert background["confirmed_by"] == "user-1" and background["updated_at"]
        context_read = await call(
            client, "story_graph_get_context", {"object_ref": background["ref"], "options": options}
        )
        assert context_read["object_ref"] == background["ref"]
        # The decision the version projected is found as a graph fact, its memory as background.
        decision = await call(
            client, "story_graph_search", {"query": "lock waits", "options": options}
        )
        assert any(h["ref"]["type"] == "event" for h in decision["hits"])
