"""The story page in a real browser: the demo's A → B decision story in event-time order,
undated evidence apart, validity bands with the relation that set them, coverage and gaps as
such; and a claim's source opening at its exact saved fragment."""

from __future__ import annotations

import json
from pathlib import Path

from tests.webview.helpers import screenshot, sign_in

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
