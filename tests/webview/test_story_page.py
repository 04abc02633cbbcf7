"""The story page in a real browser: the demo's A → B decision story in event-time order,
undated evidence apart, validity bands with the relation that set them, coverage and gaps as
such; and a claim's source opening at its exact saved fragment."""

from __future__ import annotations

import json
from pathlib import Path

from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import project_scope, record
from tests.webview.helpers import binding_for, screenshot, sign_in, write

STORY = json.loads(
    (Path(__file__).parents[2] / "devtools" / "demo_story.json").read_text(encoding="utf-8")
)
FRAGMENTS = {
    ref["id"]: ref["fragment"]
    for review in STORY["reviews"]
    for ref in review.get("sourceReferences", [])
}


async def test_the_demo_story_renders_in_event_time_order(page, webview_url, demo_info):
    await sign_in(page, webview_url, demo_info.binding_token)
    await page.goto(f"{webview_url}/story/story_line/line-storage")
    assert await page.inner_text("h1") == "Storage engine for the sync server"

    dated = page.locator("section.story-timeline li.timeline-item")
    refs = [await dated.nth(i).get_attribute("data-ref") for i in range(await dated.count())]
    assert refs == [
        "event:ev-kickoff",  # recorded last, yet first in event time
        "event:ev-decide-a",
        "event:ev-revise-b",
        "relation:rel-b-replaces-a",
        "event:ev-option-c",
    ]
    undated = await page.inner_text("section.story-undated")
    assert "Write benchmark run against PostgreSQL" in undated
    assert "time unknown" in undated

    a = page.locator("li[data-ref='event:ev-decide-a']")
    assert "superseded" in await a.locator(".validity-line").inner_text()
    assert "rel-b-replaces-a (replaces)" in await a.locator(".validity-line").inner_text()
    assert await a.locator("svg .band.validity-superseded").count() == 1
    b = page.locator("li[data-ref='event:ev-revise-b']")
    assert "current" in await b.locator(".validity-line").inner_text()
    c = page.locator("li[data-ref='event:ev-option-c']")
    assert "rel-c-vs-preference (contradicts)" in await c.locator(".validity-line").inner_text()
    assert await c.locator("svg .band.validity-disputed").count() == 1

    now = await page.inner_text("section.now")
    assert "Decision B: replace SQLite with PostgreSQL" in now
    assert "superseded" in now and "current" in now

    coverage = await page.inner_text("section.coverage")
    assert "messages after 2026-10-04T18:00Z were not reached" in coverage
    assert "attachment" in coverage
    # Time no review covered is drawn as a gap, not left blank (the kickoff predates them all).
    assert await page.locator("svg.coverage-track .band.gap").count() >= 1
    assert await page.locator("svg.coverage-track .band.covered").count() >= 3
    await screenshot(page, "web-view-story")


async def test_a_source_opens_at_its_exact_fragment(page, webview_url, demo_info):
    await sign_in(page, webview_url, demo_info.binding_token)
    await page.goto(f"{webview_url}/story/story_line/line-storage")
    link = page.locator("li[data-ref='event:ev-option-c'] a.source-link")
    assert await link.get_attribute("data-source") == "src-notes-v3"
    await link.click()
    await page.wait_for_url("**/source/src-notes-v3#fragment")
    mark = page.locator("mark#fragment")
    assert await mark.inner_text() == FRAGMENTS["src-notes-v3"]
    # Shown in place: the whole version surrounds it, and the browser scrolled to it.
    whole = await page.inner_text("pre.source-text")
    assert whole.startswith("Storage meeting notes") and len(whole) > len(FRAGMENTS["src-notes-v3"])
    assert await mark.evaluate(
        "m => { const r = m.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= window.innerHeight; }"
    )
    await screenshot(page, "web-view-source")


async def test_a_source_whose_version_is_gone_still_shows_its_saved_fragment(
    page, webview_url, demo_info
):
    await sign_in(page, webview_url, demo_info.binding_token)
    await page.goto(f"{webview_url}/source/src-notes-v1#fragment")
    assert await page.inner_text("mark#fragment") == FRAGMENTS["src-notes-v1"]
    assert "Only the saved fragment can be shown" in await page.inner_text("section.source-head")


async def test_a_long_timeline_is_shown_whole_across_pages(
    page, webview_url, tree_stub, graph_stub
):
    project = unique("long")
    tree = (await write(tree_stub, "CreateTree", title="Long", owner="u", project_id=project)).tree
    events = [
        tree_pb2.EventInput(
            id=f"ev-{n:03}",
            kind=tree_pb2.MILESTONE,
            title=f"Step {n}",
            # Recorded out of order: the page orders by event time, never by input order.
            event_time=common_pb2.EventTime(
                start=f"2026-03-{1 + (n * 7) % 28:02}T{n % 24:02}:00:00Z",
                precision=common_pb2.MINUTE,
                basis="stated_in_source",
                known=True,
            ),
        )
        for n in range(120)
    ]
    line = tree_pb2.StoryLineInput(
        id="line-long", title="A long line", event_ids=[e.id for e in events]
    )
    written = await record(tree_stub, project, events=events, story_lines=[line])
    await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="Step",
            scope=project_scope(project),
            options=graph_pb2.ReadOptions(min_consistency=written.consistency),
        )
    )
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))
    await page.goto(f"{webview_url}/story/story_line/line-long")

    dated = page.locator("section.story-timeline li.timeline-item")
    times = await dated.locator(".when time").evaluate_all(
        "nodes => nodes.map(n => n.getAttribute('datetime'))"
    )
    assert len(times) == 120  # every page of the timeline, not its first 50
    assert times == sorted(times)
    assert await page.locator("section.story-timeline .notice").count() == 0
