"""Builders of the RecordReview requests the story-ingestion tests send, and the reading of a
refusal: the fields it names and its message."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import ref, relation_input

EVENT = common_pb2.EVENT


def scope_of(project: str) -> common_pb2.Scope:
    return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project]))


def review(
    project: str, result_id: str | None = None, **fields: Any
) -> tree_pb2.RecordReviewRequest:
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=result_id or unique("res"),
        scope=scope_of(project),
        phase="daily",
        review_generated_at="2026-10-02T00:00:00+08:00",
        **fields,
    )


def two_decisions() -> list[tree_pb2.EventInput]:
    return [
        tree_pb2.EventInput(id="a", kind=tree_pb2.DECISION, title="Use SQLite"),
        tree_pb2.EventInput(id="b", kind=tree_pb2.DECISION, title="Use PostgreSQL"),
    ]


EVIDENCE = [
    tree_pb2.SourceReferenceInput(
        id="src", source_type="document", source_id="doc-notes", fragment="because"
    )
]


def replaces(**overrides: Any) -> tree_pb2.RelationInput:
    fields: dict[str, Any] = {"reason": "the load test", "source_reference_ids": ["src"]}
    fields.update(overrides)
    kind = fields.pop("kind", tree_pb2.REPLACES)
    old = fields.pop("to", ref(EVENT, "a"))
    return relation_input("r", kind, ref(EVENT, "b"), old, **fields)


async def refused(tree_stub, request) -> tuple[list[str], str]:
    """The fields an INVALID_ARGUMENT refusal names, and its message."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.RecordReview(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    error = describe(caught.value)
    return [v.field for v in error.violations], caught.value.details()
