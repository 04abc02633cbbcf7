"""HTML built by functions that escape every text and attribute value unless it is already
markup, so no caller can forget to escape what a tree or a story holds."""

from __future__ import annotations

import html

VOID = frozenset({"br", "hr", "input", "meta", "link", "img"})


class Markup(str):
    """Text that is already HTML; every other str is escaped when it meets markup."""

    __slots__ = ()


def escape(value: object) -> Markup:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(children: object) -> Markup:
    """Children as markup: strings escaped, None left out, iterables flattened."""
    if children is None:
        return Markup("")
    if isinstance(children, str | int):
        return escape(children)
    parts: list[str] = []
    for child in children:  # type: ignore[attr-defined]
        parts.append(join(child))
    return Markup("".join(parts))


def el(tag: str, *children: object, **attrs: object) -> Markup:
    """`<tag attrs>children</tag>`; `class_` is `class`, `data_x` is `data-x`, True is a bare
    attribute, None or False leaves the attribute out."""
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        if value is True:
            rendered.append(f" {name}")
        else:
            rendered.append(f' {name}="{escape(value)}"')
    opening = f"<{tag}{''.join(rendered)}>"
    if tag in VOID:
        return Markup(opening)
    return Markup(f"{opening}{join(children)}</{tag}>")


def page(title: str, body: object, *, nav: object = None) -> Markup:
    """A whole page: the shared style sheet and script, and no inline script or style (the
    Content-Security-Policy forbids both)."""
    return Markup(
        "<!doctype html>"
        + el(
            "html",
            el(
                "head",
                el("meta", charset="utf-8"),
                el("meta", name="viewport", content="width=device-width, initial-scale=1"),
                el("title", title, " · Mirrortree"),
                el("link", rel="stylesheet", href="/static/webview.css"),
                el("script", src="/static/webview.js", defer=True),
            ),
            el(
                "body",
                el(
                    "header",
                    el("a", "Mirrortree", href="/", class_="brand"),
                    nav,
                    class_="top",
                ),
                el("main", body),
            ),
            lang="en",
        )
    )
