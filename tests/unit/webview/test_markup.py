"""Markup escapes every text and attribute value; the sign-in redirect stays on this site;
settings fail fast on a bad value."""

from __future__ import annotations

import pytest

from webview.app import safe_next
from webview.config import Settings
from webview.markup import Markup, el, join


def test_text_and_attributes_are_escaped_unless_already_markup():
    hostile = "<script>alert(1)</script>\"'&"
    rendered = el("p", hostile, title=hostile)
    assert "<script>" not in rendered
    assert rendered == (
        '<p title="&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;&amp;">'
        "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;&amp;</p>"
    )
    assert el("div", el("b", "x")) == "<div><b>x</b></div>"  # markup is not escaped twice
    assert join(["a", None, ["<", Markup("<i>")]]) == "a&lt;<i>"


def test_boolean_and_missing_attributes():
    assert el("details", "x", open=True, hidden=False, id=None) == "<details open>x</details>"
    assert el("input", name="q", data_x="1", class_="c") == '<input name="q" data-x="1" class="c">'


@pytest.mark.parametrize(
    ("asked", "kept"),
    [
        ("/tree/1", "/tree/1"),
        ("//evil.example/x", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("", "/"),
    ],
)
def test_sign_in_returns_only_to_a_path_of_this_site(asked, kept):
    assert safe_next(asked) == kept


def test_settings_refuse_a_bad_value(monkeypatch):
    monkeypatch.setenv("MIRRORTREE_WEBVIEW_SECURE_COOKIE", "yes")
    with pytest.raises(ValueError, match="MIRRORTREE_WEBVIEW_SECURE_COOKIE"):
        Settings.from_env()
    monkeypatch.setenv("MIRRORTREE_WEBVIEW_SECURE_COOKIE", "true")
    monkeypatch.setenv("MIRRORTREE_WEBVIEW_LISTEN", "localhost")
    with pytest.raises(ValueError, match="MIRRORTREE_WEBVIEW_LISTEN"):
        Settings.from_env()
    monkeypatch.setenv("MIRRORTREE_WEBVIEW_LISTEN", "127.0.0.1:9000")
    monkeypatch.setenv("MIRRORTREE_WEBVIEW_METRICS", "127.0.0.1")
    with pytest.raises(ValueError, match="MIRRORTREE_WEBVIEW_METRICS"):
        Settings.from_env()
    monkeypatch.setenv("MIRRORTREE_WEBVIEW_METRICS", "127.0.0.1:9104")
    settings = Settings.from_env()
    assert settings.secure_cookie
    assert settings.metrics == "127.0.0.1:9104"
