"""The acceptance story (the demo dataset) re-keyed for one test: its own project, sources and
preference, so tests never share state on the session cluster; and the helpers the story-graph
tests write and read with (record a review result, read after it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from devtools import storyfile
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique

# Ids that are global (not per scope): sources, the preference and the result ids.
GLOBAL_IDS = (
    "doc-storage-notes",
    "task-migrate-postgres",
    "pref-boring-tech",
    "demo-review-2026-09-28",
    "demo-review-2026-10-01",
    "demo-review-2026-10-05",
)


@dataclass(frozen=True)
class LoadedStory:
    project: str
    ids: dict[str, str]  # global ids as loaded (sources, preference)
    consistency: common_pb2.ConsistencyToken

    @property
    def scope(self) -> common_pb2.Scope:
        return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=[self.project]))

    def options(self) -> graph_pb2.ReadOptions:
        return graph_pb2.ReadOptions(min_consistency=self.consistency)


def story_text(project: str, ids: dict[str, str]) -> str:
    text = resources.files("devtools").joinpath("demo_story.json").read_text("utf-8")
    text = text.replace('"demo"', json.dumps(project))
    for old, new in ids.items():
        text = text.replace(f'"{old}"', json.dumps(new))
    return text


async def load_acceptance_story(tree_target: str) -> LoadedStory:
    project = unique("story")
    ids = {name: unique(name) for name in GLOBAL_IDS}
    story = storyfile.parse_story_text(story_text(project, ids))
    report = await storyfile.load_story(story, tree_target, progress=False)
    return LoadedStory(project, ids, report.consistency)


def ref(object_type: common_pb2.ObjectType, object_id: str) -> common_pb2.ObjectRef:
    return common_pb2.ObjectRef(type=object_type, id=object_id)


def relation_input(
    relation_id: str,
    kind: tree_pb2.RelationKind,
    new: common_pb2.ObjectRef | None,
    old: common_pb2.ObjectRef | None,
    **fields: Any,
) -> tree_pb2.RelationInput:
    """A relation `new` → `old` (`from` is a Python keyword, so it is set after creation)."""
    relation = tree_pb2.RelationInput(id=relation_id, kind=kind, **fields)
    if new is not None:
        getattr(relation, "from").CopyFrom(new)
    if old is not None:
        relation.to.CopyFrom(old)
    return relation


def project_scope(*projects: str) -> common_pb2.Scope:
    return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=list(projects)))


async def record(
    tree_stub,
    project: str,
    *,
    sources=(),
    scope: common_pb2.Scope | None = None,
    **fields: Any,
) -> tree_pb2.RecordReviewResponse:
    """One review result in the project (or `scope`): `sources` are its source references,
    `fields` any other RecordReviewRequest fields (events, entities, relations, ...)."""
    request = tree_pb2.RecordReviewRequest(
        idempotency_key=unique("k"),
        result_id=unique("res"),
        scope=scope or project_scope(project),
        phase="daily",
        covered={"from": "2026-10-01T00:00:00Z", "to": "2026-10-02T00:00:00Z"},
        review_generated_at="2026-10-02T01:00:00Z",
        source_references=list(sources),
    )
    for name, value in fields.items():
        if isinstance(value, (str, int)):
            setattr(request, name, value)
        elif isinstance(value, dict):  # a message field, e.g. covered ({} clears it)
            request.ClearField(name)
            for key, item in value.items():
                setattr(getattr(request, name), key, item)
        else:
            getattr(request, name).extend(value)
    response: tree_pb2.RecordReviewResponse = await tree_stub.RecordReview(request)
    return response


def options(written: tree_pb2.RecordReviewResponse, session_id: str = "") -> graph_pb2.ReadOptions:
    return graph_pb2.ReadOptions(min_consistency=written.consistency, session_id=session_id)
