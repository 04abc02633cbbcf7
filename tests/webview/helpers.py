"""Builders shared by the web-view tests: trees written through TreeService, bindings, and
signing a browser in the way a user does (the token in the link's fragment)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import grpc

from mirrortree.protoscope import project_scope
from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import unique

SHOTS = os.environ.get("MIRRORTREE_WEBVIEW_SCREENSHOTS", "")


async def binding_for(tree_stub, graph_stub, tree_id: str) -> str:
    """A new binding for the tree, once a replica has it: graph_service resolves tokens from
    its replicas, so a token used before they replay it is not known yet."""
    response = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("bind"), session_id=tree_id, runtime="OpenCode"
        )
    )
    for attempt in range(10):
        try:
            await graph_stub.Search(
                graph_pb2.SearchRequest(
                    query="any",
                    scope=project_scope([unique("none")]),
                    options=graph_pb2.ReadOptions(min_consistency=response.consistency),
                )
            )
            break
        except grpc.aio.AioRpcError as error:
            # consistency_timeout: the replica is further behind than one wait allows.
            if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == 9:
                raise
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
