"""The web view on a free loopback port over the suite's real services, the demo data loaded
through TreeService, and a real headless Chromium (the distribution's package) driven by
Playwright. Without Chromium or Playwright the browser tests skip, saying which is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from devtools import demo
from tests.conftest import free_port, uvicorn_serving
from webview.app import build_app
from webview.config import Settings

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    configured = os.environ.get("MIRRORTREE_CHROMIUM", "")
    if configured:
        return configured
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest_asyncio.fixture(scope="session")
async def demo_info(tree_service, graph_service) -> demo.DemoInfo:
    info = await demo.load(f"127.0.0.1:{tree_service.port}")
    await demo.wait_until_readable(f"127.0.0.1:{graph_service.port}", info)
    return info


@pytest_asyncio.fixture(scope="session")
async def webview_url(tree_service, graph_service) -> AsyncIterator[str]:
    port = free_port()
    settings = Settings(
        listen=f"127.0.0.1:{port}",
        tree_target=f"127.0.0.1:{tree_service.port}",
        graph_target=f"127.0.0.1:{graph_service.port}",
        binding_ttl_s=0.0,  # every request asks graph_service: revocations show at once
    )
    async with uvicorn_serving(build_app(settings), port):
        yield f"http://127.0.0.1:{port}"


@pytest_asyncio.fixture(scope="session")
async def browser() -> AsyncIterator[Any]:
    executable = chromium_path()
    if executable is None:
        pytest.skip(
            "no Chromium found (apt-get install chromium, or set MIRRORTREE_CHROMIUM); "
            "`make browser` installs it"
        )
    api = pytest.importorskip(
        "playwright.async_api", reason="the playwright package is missing: pip install -e '.[dev]'"
    )
    async with api.async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=executable,
            # Root in CI containers cannot use Chromium's user-namespace sandbox.
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        yield launched
        await launched.close()


@pytest_asyncio.fixture
async def page(browser) -> AsyncIterator[Any]:
    """A fresh browser context per test: no cookie carries over."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    await context.close()
    assert not errors, f"script errors on the page: {errors}"
