"""The acceptance story (the demo dataset) re-keyed for one test: its own project, sources and
preference, so tests never share state on the session cluster."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mirrortree import storyfile
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
    text = resources.files("mirrortree").joinpath("demo_story.json").read_text("utf-8")
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
