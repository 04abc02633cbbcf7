"""Search reads each relevance tier by walking the ordered index while matches are dense and
through the trigram and time indexes once they turn out rare (graph_service.search). Whatever
path a page takes, paging a query to its end must give exactly what a plain reference search
gives: every match once, ordered by tier, type rank and stable id.

The graph below is large enough for every path: tiers whose matches are dense (the first walk
fills a page), medium (a walk sized from the density seen), sparse (walks give up and the
indexes find the rest) and empty — with and without a time filter and a type filter.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import pytest_asyncio

from mirrortree.protoscope import time_range
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import options, project_scope, record

EVENTS = 2_400
SUMMARIES = 300
FIRST_DAY = datetime(2026, 1, 1, tzinfo=UTC)
RANGE = ("2026-03-01T00:00:00Z", "2026-04-15T23:59:59Z")
TYPE_RANK = {"event": 2, "summary": 6}


def event_text(i: int) -> tuple[str, str]:
    """Title and description of event i: 'quokka' dense in both fields, medium in the body
    alone, and in a handful of titles alone."""
    title, body = f"event {i}", f"notes {i}"
    if i % 5 == 0:
        title, body = f"Quokka {i}", f"a QUOKKA note {i}"
    elif i % 37 == 3:
        body = f"mentions quokka {i}"
    elif i % 599 == 11:
        title = f"late quokka {i}"
    return title, body


def event_time(i: int) -> tuple[datetime, datetime | None] | None:
    if i % 9 == 4:
        return None  # unknown
    start = FIRST_DAY + timedelta(hours=3 * i)
    return start, (start + timedelta(days=2) if i % 4 == 1 else None)


def summary_text(j: int) -> tuple[str, str]:
    return (f"summary {j}", f"quokka digest {j}" if j % 50 == 7 else f"digest {j}")


def reference(types: set[str], window: tuple[datetime, datetime] | None) -> list[tuple[str, int]]:
    """(id, tier) of every match, in the order Search must return them."""
    found: list[tuple[int, int, str]] = []

    def consider(kind: str, object_id: str, title: str, body: str) -> None:
        in_title, in_body = "quokka" in title.lower(), "quokka" in body.lower()
        if kind in types and (in_title or in_body):
            weighted = in_title or (kind == "summary" and in_body)  # a summary's text too
            tier = 3 if in_title and in_body else 2 if weighted else 1
            found.append((-tier, TYPE_RANK[kind], object_id))

    for i in range(EVENTS):
        if window is not None:
            when = event_time(i)
            if when is None:
                continue
            start, end = when
            if not (start <= window[1] and (end or start) >= window[0]):
                continue
        consider("event", f"e{i:05d}", *event_text(i))
    if window is None:
        for j in range(SUMMARIES):
            consider("summary", f"s{j:04d}", *summary_text(j))
    return [(object_id, -tier) for tier, _, object_id in sorted(found)]


def event_input(i: int) -> tree_pb2.EventInput:
    title, body = event_text(i)
    event = tree_pb2.EventInput(
        id=f"e{i:05d}", kind=tree_pb2.DISCUSSION, title=title, description=body
    )
    when = event_time(i)
    if when is not None:
        start, end = when
        event.event_time.start = start.isoformat()
        if end is not None:
            event.event_time.end = end.isoformat()
    return event


@pytest_asyncio.fixture(scope="module")
async def walked_graph(tree_stub) -> tuple[str, tree_pb2.RecordReviewResponse]:
    project = unique("walks")
    written = await record(
        tree_stub,
        project,
        events=[event_input(i) for i in range(EVENTS)],
        summaries=[
            tree_pb2.SummaryInput(id=f"s{j:04d}", title=title, text=text)
            for j in range(SUMMARIES)
            for title, text in [summary_text(j)]
        ],
    )
    return project, written


@pytest.mark.parametrize(
    ("types", "filtered", "page_size"),
    [
        ((), False, 50),
        ((), True, 37),
        ((common_pb2.EVENT,), False, 50),
        ((common_pb2.SUMMARY,), False, 3),
    ],
)
async def test_paging_every_path_gives_the_reference_order(
    graph_stub, walked_graph, types, filtered, page_size
):
    project, written = walked_graph
    request = graph_pb2.SearchRequest(
        query="quokka",
        scope=project_scope(project),
        object_types=list(types),
        page_size=page_size,
        options=options(written),
    )
    window = None
    if filtered:
        request.time_range.CopyFrom(time_range(*RANGE))
        window = (
            datetime.fromisoformat(RANGE[0].replace("Z", "+00:00")),
            datetime.fromisoformat(RANGE[1].replace("Z", "+00:00")),
        )
    names = {common_pb2.EVENT: "event", common_pb2.SUMMARY: "summary"}
    expected = reference({names[t] for t in types} or set(TYPE_RANK), window)
    got: list[tuple[str, int]] = []
    first_total = None
    while True:
        response = await graph_stub.Search(request)
        got.extend((h.ref.id, h.score) for h in response.hits)
        if first_total is None:
            first_total = response.page.total
        if not response.page.has_more:
            break
        request.cursor = response.page.next_cursor
    assert got == expected
    assert first_total is not None
    if first_total.WhichOneof("value") == "exact":
        assert first_total.exact == len(expected)
