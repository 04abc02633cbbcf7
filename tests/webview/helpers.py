"""Builders shared by the web-view tests: trees written through TreeService, bindings, and
signing a browser in the way a user does (the token in the link's fragment)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mirrortree.v1 import tree_pb2
from tests.conftest import unique

SHOTS = os.environ.get("MIRRORTREE_WEBVIEW_SCREENSHOTS", "")


async def binding_for(tree_stub, tree_id: str) -> str:
    response = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("bind"), session_id=tree_id, runtime="OpenCode"
        )
    )
    token: str = response.token
    return token


async def sign_in(page: Any, base: str, token: str) -> None:
    """Open the sign-in link (token in the fragment) and wait for the tree page."""
    await page.goto(f"{base}/#token={token}")
    await page.wait_for_url("**/tree/*")


async def screenshot(page: Any, name: str) -> None:
    """Refresh docs/img/<name>.png when MIRRORTREE_WEBVIEW_SCREENSHOTS names the folder."""
    if SHOTS:
        await page.screenshot(path=str(shots_folder() / f"{name}.png"), full_page=True)


def shots_folder() -> Path:
    folder = Path(SHOTS)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def write(stub, method: str, **fields: Any) -> Any:
    request_type = getattr(tree_pb2, f"{method}Request")
    return await getattr(stub, method)(request_type(idempotency_key=unique("k"), **fields))
