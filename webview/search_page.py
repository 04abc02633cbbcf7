"""The search page: StoryGraph.Search in the caller's scope, each hit linked to its story."""

from __future__ import annotations

from mirrortree.v1 import graph_pb2
from webview.markup import Markup, el, join
from webview.story_page import story_href, type_name


def search_page(query: str, response: graph_pb2.SearchResponse | None) -> Markup:
    form = el(
        "form",
        el(
            "label",
            "Search the story graph ",
            el("input", type="search", name="q", value=query, required=True, maxlength="500"),
        ),
        el("button", "Search", type="submit"),
        action="/search",
        method="get",
        class_="search",
    )
    if response is None:
        return join([el("h1", "Story graph"), form])
    seen: set[tuple[int, str]] = set()
    rows = []
    for hit in response.hits:
        key = (hit.ref.type, hit.ref.id)
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            el(
                "li",
                el("span", type_name(hit.ref).replace("_", " "), class_="badge kind"),
                " ",
                el("a", hit.title or hit.ref.id, href=story_href(hit.ref), class_="hit"),
                el("p", hit.excerpt.text, class_="meta") if hit.excerpt.text else None,
            )
        )
    body = (
        el("ul", rows, class_="hits")
        if rows
        else el("p", "No object in your scope matches.", class_="empty")
    )
    return join([el("h1", "Story graph"), form, body])
