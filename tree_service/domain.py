"""Domain types of the tree service: frozen dataclasses, free of grpc, asyncpg and proto code."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from mirrortree.scopes import ScopeValue

MAX_TITLE = 500
MAX_OWNER = 200
MAX_QUESTION = 100_000
MAX_GRAPH_TEXT = 100_000
MAX_GRAPH_OBJECTS = 10_000


class Realm(StrEnum):
    REAL = "real"
    WORLD = "world"
    REHEARSAL = "rehearsal"


class NodeKind(StrEnum):
    QUESTION = "question"
    ANSWER = "answer"
    CONTINUATION = "continuation"


class ObjectType(StrEnum):
    """Story-graph object types; the order is the tie-break rank in search results."""

    STORY_LINE = "story_line"
    EVENT = "event"
    ENTITY = "entity"
    ENTITY_CHANGE = "entity_change"
    RELATION = "relation"
    SUMMARY = "summary"
    SOURCE_REFERENCE = "source_reference"

    @property
    def rank(self) -> int:
        return list(ObjectType).index(self) + 1


@dataclass(frozen=True)
class Tree:
    id: str
    title: str
    owner: str
    project_id: str | None
    default_realm: Realm
    revision: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Node:
    id: str
    tree_id: str
    parent_id: str | None
    kind: NodeKind
    realm: Realm
    text: str
    revision: int
    ordinal: int
    created_at: datetime


@dataclass(frozen=True)
class NewTree:
    title: str
    owner: str
    project_id: str | None
    default_realm: Realm


@dataclass(frozen=True)
class NewQuestion:
    tree_id: str
    parent_id: str | None
    text: str
    realm: Realm | None  # None: inherit from the parent, else the tree's default


@dataclass(frozen=True)
class EventTimeValue:
    """When something happened; `start` None means unknown (never filled from review time)."""

    start: datetime | None = None
    end: datetime | None = None
    precision: str = ""
    basis: str = ""


@dataclass(frozen=True)
class StoryObject:
    """One searchable object of a review result, in the shape the read side stores."""

    object_type: ObjectType
    object_id: str
    title: str
    body: str
    kind: str | None = None
    object_revision: str | None = None  # None: unknown
    confirmation_state: str | None = None
    event_time: EventTimeValue = field(default_factory=EventTimeValue)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReviewResult:
    result_id: str
    scope: ScopeValue
    phase: str
    covered_from: datetime | None
    covered_to: datetime | None
    review_generated_at: datetime
    objects: tuple[StoryObject, ...]
    excluded_source_types: tuple[str, ...]


@dataclass(frozen=True)
class RecordedReview:
    result_id: str
    recorded_at: datetime
    graph_revision: int
    object_count: int


@dataclass(frozen=True)
class IssuedBinding:
    binding_id: str
    token: str  # "" when replayed: the secret is shown once
    session_id: str
    runtime: str
    project_id: str | None
