"""Helpers of the GetContext tests: a read of the acceptance story, its collections."""

from __future__ import annotations

import json
from typing import Any

from mirrortree.v1 import graph_pb2
from tests.graph_service.story import LoadedStory


async def context(graph_stub, story: LoadedStory, object_ref, **fields: Any):
    fields.setdefault("scope", story.scope)
    return await graph_stub.GetContext(
        graph_pb2.GetContextRequest(object_ref=object_ref, options=story.options(), **fields)
    )


def collection(response, name: str) -> graph_pb2.ContextCollection:
    found: list[graph_pb2.ContextCollection] = [c for c in response.collections if c.name == name]
    assert found, f"no collection {name!r} in {[c.name for c in response.collections]}"
    return found[0]


def items_by_id(response, name: str) -> dict[str, graph_pb2.ContextItem]:
    return {item.ref.id: item for item in collection(response, name).items}


def content(item: graph_pb2.ContextItem) -> dict[str, Any]:
    assert item.content.start == 0 and not item.content.next_cursor
    parsed: dict[str, Any] = json.loads(item.content.text)
    return parsed
