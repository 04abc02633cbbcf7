"""Builders of reviews that declare their leaf extraction, for the shared-leaf tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mirrortree.v1 import common_pb2, leaves_pb2, tree_pb2
from tests.conftest import create_tree, unique

CONTRACT = "leaf-extraction/1"


@dataclass(frozen=True)
class Message:
    project: str
    tree_id: str
    node_id: str
    version: str
    text: str


def scope(project: str | None) -> common_pb2.Scope:
    if project is None:
        whole = common_pb2.Scope()
        setattr(whole, "global", True)  # `global` is a Python keyword
        return whole
    return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[project]))


async def message(tree_stub, text: str, project: str | None = None) -> Message:
    """A question in a fresh tree of `project` (a fresh project by default)."""
    project = project or unique("proj")
    tree = (await create_tree(tree_stub, project_id=project)).tree
    asked = await tree_stub.AskQuestion(
        tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text=text)
    )
    node = asked.node
    return Message(project, tree.id, node.id, str(node.version), text)


def part(msg: Message, start: int = 0, end: int = 0) -> leaves_pb2.SourcePart:
    return leaves_pb2.SourcePart(
        source_type="message",
        source_id=msg.node_id,
        source_version=msg.version,
        range=leaves_pb2.CodePointRange(start=start, end=end),
    )


def leaf_review(
    project: str | None,
    msg: Message,
    facts: list[tuple[int, int, str]],
    *,
    parts: list[leaves_pb2.SourcePart] | None = None,
    contract: str = CONTRACT,
    reanalysis: bool = False,
    prefix: str = "",
    confirmed: bool = False,
    **fields: Any,
) -> tree_pb2.RecordReviewRequest:
    """A review of `msg` with one leaf per (start, end, text), each citing the fragment
    [start, end) of the message; ids are prefixed so that scopes may name them differently."""
    prefix = prefix or unique("p")
    refs = [
        tree_pb2.SourceReferenceInput(
            id=f"{prefix}-src-{i}",
            source_type="message",
            source_id=msg.node_id,
            source_version=msg.version,
            fragment=msg.text[start:end],
            fragment_start=start,
            fragment_end=end,
        )
        for i, (start, end, _) in enumerate(facts)
    ]
    leaves = [
        tree_pb2.LeafFactInput(
            id=f"{prefix}-leaf-{i}",
            text=text,
            source_reference_ids=[f"{prefix}-src-{i}"],
            confirmation_state=common_pb2.CONFIRMED if confirmed else common_pb2.AUTO_GENERATED,
        )
        for i, (_, _, text) in enumerate(facts)
    ]
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=unique("res"),
        scope=scope(project),
        phase="daily",
        review_generated_at="2026-10-02T00:00:00Z",
        source_references=refs,
        leaf_facts=leaves,
        leaf_extraction=leaves_pb2.LeafExtraction(
            contract_version=contract,
            parts=parts if parts is not None else [part(msg)],
            reanalysis=reanalysis,
        ),
        **fields,
    )


def plan_request(
    project: str | None, parts: list[leaves_pb2.SourcePart], contract: str = CONTRACT
) -> leaves_pb2.PlanExtractionRequest:
    return leaves_pb2.PlanExtractionRequest(
        scope=scope(project), contract_version=contract, parts=parts
    )


def ranges(items: Any) -> list[tuple[int, int]]:
    return [(r.start, r.end) for r in items]
