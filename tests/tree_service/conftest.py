"""Fixtures of the TreeService bad-input fuzz tests: the small real conversation the generated
requests point into, a primary connection to count rows with, and the errors the server logged."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.fuzzing import Conversation, bud
from tests.tree_service.helpers import adopt, answer, ask, canonicalize, new_tree, proposals


@pytest_asyncio.fixture(scope="module")
async def conversation(tree_stub) -> Conversation:
    tree = await new_tree(tree_stub)
    other = await new_tree(tree_stub, owner="someone-else")
    root = await ask(tree_stub, tree.id, "What is the plan?")
    first = await answer(tree_stub, root.id, "Plan A")
    sibling = await answer(tree_stub, root.id, "Plan B")
    await adopt(tree_stub, root.id, first.id, root.revision)
    continuation = await tree_stub.AddContinuation(
        tree_pb2.AddContinuationRequest(
            idempotency_key=unique("k"), answer_id=first.id, kind=tree_pb2.ELABORATION, text="c"
        )
    )
    follow_up = await ask(tree_stub, tree.id, "And then?", parent_id=first.id)
    follow_answer = await answer(tree_stub, follow_up.id, "Then B")
    version = await canonicalize(
        tree_stub, tree.id, leaf=first.id, candidates=proposals(tree_pb2.REAL_EXPERIENCE)
    )
    other_question = await ask(tree_stub, other.id, "Elsewhere?")
    other_answer = await answer(tree_stub, other_question.id, "Yes")
    invited = await tree_stub.InviteCanonicalization(
        tree_pb2.InviteCanonicalizationRequest(
            idempotency_key=unique("k"), node_id=sibling.id, reason="key", proposed_by="system"
        )
    )
    return Conversation(
        tree=tree.id,
        other_tree=other.id,
        root=root.id,
        answer=first.id,
        sibling=sibling.id,
        continuation=continuation.node.id,
        follow_up=follow_up.id,
        follow_answer=follow_answer.id,
        frozen=await bud(tree_stub, root.id, ["part one "]),
        empty_frozen=await bud(tree_stub, root.id, []),
        other_question=other_question.id,
        other_answer=other_answer.id,
        version=version.id,
        invitation=invited.invitation.id,
        candidate=version.candidates[0].id,
    )


@pytest_asyncio.fixture
async def db(cluster) -> Any:
    conn = await asyncpg.connect(cluster.primary_dsn)
    yield conn
    await conn.close()


@pytest.fixture
def server_errors(caplog) -> Callable[[], list[logging.LogRecord]]:
    """The error records the in-process server logged (tracebacks of failed handlers)."""
    caplog.set_level(logging.ERROR)

    def errors() -> list[logging.LogRecord]:
        found = [r for r in caplog.records if r.levelno >= logging.ERROR]
        caplog.clear()
        return found

    return errors
