"""The MCP share of the mix: the story-graph tools through the gateway, with the MCP SDK client
over Streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from load.targets import CALL_TIMEOUT_S
from load.workload import WORDS, Sample, ToolFailed, Workload


class McpReader:
    """One MCP SDK client over Streamable HTTP, with the run's binding token."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.client: Client
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None

    async def open(self) -> None:
        # The SDK's task group must be entered and left by one task: a task of its own owns
        # the client for its life, and the calls are made from other tasks meanwhile.
        self._owner = asyncio.create_task(self._own())
        ready = asyncio.create_task(self._ready.wait())
        await asyncio.wait({self._owner, ready}, return_when=asyncio.FIRST_COMPLETED)
        if self._owner.done():
            ready.cancel()
            self._owner.result()  # raises why the client could not connect

    async def _own(self) -> None:
        async with (
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=httpx2.Timeout(CALL_TIMEOUT_S, read=CALL_TIMEOUT_S * 2),
            ) as http,
            Client(streamable_http_client(self.url, http_client=http), cache=None) as client,
        ):
            self.client = client
            self._ready.set()
            await self._stop.wait()

    async def close(self) -> None:
        self._stop.set()
        if self._owner is not None:
            with contextlib.suppress(Exception):
                await self._owner

    async def _tool(self, name: str, arguments: dict[str, Any]) -> None:
        result = await self.client.call_tool(name, arguments)
        if result.is_error:
            text = getattr(result.content[0], "text", "") if result.content else ""
            try:
                code = str(json.loads(text)["error"]["code"])
            except (ValueError, KeyError, TypeError):
                code = "tool_error"
            raise ToolFailed(code)

    async def step(self, workload: Workload) -> list[Sample]:
        samples: list[Sample] = []
        # Each read carries its review's consistency token, as an agent reading its own writes.
        review = workload.pick()
        term = review.term if review else random.choice(WORDS)
        options = (
            {"options": {"min_consistency": {"lsn": review.consistency.lsn}}} if review else {}
        )
        await workload.timed(
            samples,
            "mcp story_graph_search",
            lambda: self._tool("story_graph_search", {"query": term, **options}),
        )
        if review is None:
            return samples
        await workload.timed(
            samples,
            "mcp story_graph_get_context",
            lambda: self._tool(
                "story_graph_get_context",
                {"object_ref": {"type": "entity", "id": review.entity_id}, **options},
            ),
        )
        await workload.timed(
            samples,
            "mcp story_graph_read_source",
            lambda: self._tool(
                "story_graph_read_source",
                {"source_reference_id": review.source_ref_id, **options},
            ),
        )
        return samples
