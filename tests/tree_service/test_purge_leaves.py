"""T16 with shared leaves (G9): a purge retracts the leaf every scope shares, so no scope
reads a fact whose source is gone."""

from __future__ import annotations

import uuid

from mirrortree.v1 import purge_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.leaves import Message, leaf_review
from tests.tree_service.helpers import answer, ask
from tests.tree_service.purging import ALL, footprint, preview, set_state


async def test_a_purge_retracts_the_leaf_every_scope_shares(tree_stub, db):
    project = unique("proj")
    secret = f"the vault code {uuid.uuid4().hex}"
    tree = (await create_tree(tree_stub, project_id=project)).tree
    root = await ask(tree_stub, tree.id, "Where is it kept?")
    root_answer = await answer(tree_stub, root.id, "In the vault")
    text = f"Remember {secret} please"
    branch = await ask(tree_stub, tree.id, text, parent_id=root_answer.id)
    msg = Message(project, tree.id, branch.id, "1", text)
    facts = [(0, len(text), f"The user shared {secret}")]
    first = await tree_stub.RecordReview(leaf_review(None, msg, facts, prefix=unique("g")))
    await tree_stub.RecordReview(leaf_review(project, msg, facts, prefix=unique("a")))
    await set_state(tree_stub, branch.id, tree_pb2.ARCHIVED, 1)
    shown = await preview(tree_stub, branch.id)
    assert any(
        g.result_id == first.result_id and g.action == purge_pb2.GRAPH_RETRACT
        for g in shown.impact.graph_objects
    )

    await tree_stub.Purge(
        purge_pb2.PurgeRequest(
            idempotency_key=unique("k"),
            tree_id=tree.id,
            node_id=branch.id,
            preview_token=shown.preview_token,
            choice=ALL,
            purged_by="user-1",
            reason="never keep this",
        )
    )

    assert await footprint(db, secret) == []
    states = await db.fetch(
        "SELECT confirmation_state FROM leaves WHERE result_id = $1", first.result_id
    )
    assert [s["confirmation_state"] for s in states] == ["retracted"]
