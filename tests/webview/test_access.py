"""Who sees what: without a binding nothing but the sign-in form; with another session's
binding, not this tree; and hostile text in a tree renders as inert text."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.webview.helpers import binding_for, sign_in, write


async def fetch(url: str, token: str = "") -> tuple[int, str]:
    """A plain HTTP GET off the event loop (the web view serves on this very loop)."""
    return await asyncio.to_thread(fetch_now, url, token)


def fetch_now(url: str, token: str) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


async def test_a_caller_without_the_binding_sees_nothing(page, webview_url, demo_info):
    tree = f"/tree/{demo_info.session_id}"
    for path in (tree, "/story/story_line/line-storage", "/source/src-notes-v3", "/search?q=a"):
        response = await page.goto(webview_url + path)
        assert response.status == 401, path
        body = await page.inner_text("body")
        assert "Sign in" in body
        for secret in ("Choosing the storage engine", "SQLite", "Decision", "PostgreSQL"):
            assert secret not in body, (path, secret)
    api = await page.request.get(f"{webview_url}/api/trees/{demo_info.session_id}/nodes/x")
    assert api.status == 401 and await api.json() == {"error": "unauthenticated"}


async def test_an_unknown_token_is_refused_at_sign_in(page, webview_url):
    await page.goto(f"{webview_url}/#token=mtb_{'x' * 43}")
    await page.wait_for_load_state()
    assert "That token is not a valid binding." in await page.inner_text("#problem")
    assert "/tree/" not in page.url


async def test_another_sessions_binding_does_not_open_this_tree(
    page, webview_url, demo_info, tree_stub, graph_stub
):
    other = (
        await write(tree_stub, "CreateTree", title="Elsewhere", owner="u", project_id=unique("p"))
    ).tree
    token = await binding_for(tree_stub, graph_stub, other.id)
    status, body = await fetch(f"{webview_url}/tree/{demo_info.session_id}", token)
    assert status == 403
    assert "Choosing the storage engine" not in body and "SQLite" not in body
    # Its story reads are held to its own project by graph_service (scope_mismatch).
    status, body = await fetch(f"{webview_url}/story/story_line/line-storage", token)
    assert status in (403, 404) and "SQLite" not in body


async def test_a_revoked_or_signed_out_session_loses_the_view(page, webview_url, demo_info):
    await sign_in(page, webview_url, demo_info.binding_token)
    await page.click("nav button")  # sign out
    response = await page.goto(f"{webview_url}/tree/{demo_info.session_id}")
    assert response.status == 401


async def test_hostile_text_renders_inert(page, webview_url, tree_stub, graph_stub):
    hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>"\'&'
    tree = (
        await write(tree_stub, "CreateTree", title=hostile, owner="u", project_id=unique("p"))
    ).tree
    question = (await write(tree_stub, "AskQuestion", tree_id=tree.id, text=hostile)).node
    await write(
        tree_stub,
        "AddAnswer",
        question_id=question.id,
        text=hostile,
        content=tree_pb2.GeneratedContent(evidence=[hostile], reasoning_summary=hostile),
    )
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))
    assert await page.inner_text("h1") == hostile
    assert await page.inner_text(f"#node-{question.id} > .text") == hostile
    assert await page.evaluate("() => window.pwned") is None
    assert await page.locator("main img, main script").count() == 0


async def test_a_sign_in_posted_from_another_site_is_refused(page, webview_url, demo_info):
    response = await page.request.post(
        f"{webview_url}/login",
        form={"token": demo_info.binding_token, "next": "/"},
        headers={"Origin": "https://evil.example"},
        max_redirects=0,
    )
    assert response.status == 403
    assert "set-cookie" not in response.headers
