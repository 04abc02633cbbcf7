"""A stored copy's JSON document (documents.stored_content) is the same whether its details are
written as PostgreSQL wrote them or decoded and encoded again: same text, unless a number is
written differently, and then the same JSON."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools import pgcluster
from graph_service.documents import stored_content
from graph_service.views import SearchRow

# jsonb refuses NUL; the rest of Unicode (but lone surrogates, which UTF-8 cannot carry) goes.
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=8)
# Details named like the document's own fields, which they replace (the slow path's update).
KEYS = st.one_of(st.sampled_from(["type", "id", "result_id", "title", "description"]), TEXT)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), TEXT, st.just(""))
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
CHECKS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def documents(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
        max_leaves=10,
    )
    return st.dictionaries(KEYS, values, max_size=5)


def copy(
    details_text: str, *, title: str = "t", body: str = "b", kind: str | None = None
) -> SearchRow:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return SearchRow(
        result_id="r1", object_type="event", object_id="ev-1", type_rank=1, scope_key="projects:p",
        title=title, body=body, kind=kind, object_revision=None, confirmation_state=None,
        event_time_start=None, event_time_end=None, event_time_precision=None,
        event_time_basis=None, review_generated_at=now, recorded_at=now,
        details=json.loads(details_text), score=0, details_text=details_text,
    )  # fmt: skip


def decoded_again(row: SearchRow) -> str:
    """The document built from the decoded details alone."""
    return stored_content(dataclasses.replace(row, details_text=""))


@pytest_asyncio.fixture
async def db(cluster: pgcluster.ClusterInfo) -> asyncpg.Connection:
    conn = await asyncpg.connect(cluster.primary_dsn)
    yield conn
    await conn.close()


async def as_stored(db: asyncpg.Connection, details: dict[str, Any]) -> str:
    """The details as graph_objects.details gives them back: recorded as JSON, read as text."""
    text: str = await db.fetchval("SELECT $1::jsonb::text", json.dumps(details))
    return text


@CHECKS
@given(details=documents(SCALARS), title=TEXT, body=TEXT, kind=st.none() | TEXT)
async def test_the_document_is_the_same_text_either_way(db, details, title, body, kind):
    row = copy(await as_stored(db, details), title=title, body=body, kind=kind)
    assert stored_content(row) == decoded_again(row)


@CHECKS
@given(details=documents(st.one_of(SCALARS, FLOATS)))
async def test_a_number_may_read_differently_but_never_means_another(db, details):
    row = copy(await as_stored(db, details))
    assert json.loads(stored_content(row)) == json.loads(decoded_again(row))


def test_details_are_written_as_recorded_when_that_is_the_same_document():
    row = copy('{"score": 1.50, "about": [{"id": "x"}]}')
    assert stored_content(row) == (
        '{"type": "event", "id": "ev-1", "result_id": "r1", "title": "t", "description": "b", '
        '"score": 1.50, "about": [{"id": "x"}]}'
    )
    # An empty string among them, or a detail named like a field, is decoded and left out or
    # put in the field's place, as before.
    emptied = stored_content(copy('{"a": "", "score": 1.50}'))
    assert emptied.endswith('"description": "b", "score": 1.5}')
    renamed = stored_content(copy('{"title": "T"}'))
    assert (
        renamed
        == '{"type": "event", "id": "ev-1", "result_id": "r1", "title": "T", "description": "b"}'
    )
