"""A malformed credential is answered 401 at once, before any gRPC call; every gRPC call the
gateway makes ends by its deadline whatever gRPC does with it; and a flood of bad requests
leaves the gateway's memory flat."""

from __future__ import annotations

import asyncio
import os
import time

import grpc
import httpx2
import pytest

from gateway import credentials
from gateway.config import Settings
from gateway.credentials import MAX_TOKEN_CHARS
from mirrortree.v1 import graph_pb2, graph_pb2_grpc
from tests.gateway.harness import gateway_process, http_gateway
from tests.gateway.test_transport_edges import INITIALIZE

HEADERS = {b"Accept": b"application/json, text/event-stream"}

# As bytes: what an attacker puts on the wire, not what an HTTP client would encode.
BAD_TOKENS = {
    "latin1_byte": b"mtb_\xe9",
    "utf8_bytes": "mtb_\u00e9\u4e2d".encode(),
    "delete": b"mtb_\x7f",
    "start_of_heading": b"mtb_\x01",
    "escape_after_a_token": b"mtb_" + b"a" * 43 + b"\x1b",
    "over_the_limit": b"mtb_" + b"a" * MAX_TOKEN_CHARS,
    "eight_kib": b"mtb_" + b"a" * 8192,
}


@pytest.mark.parametrize("token", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
async def test_a_malformed_bearer_token_is_answered_401_at_once(graph_service, token):
    async with http_gateway(graph_service.port) as url, httpx2.AsyncClient(timeout=10) as raw:
        response = await raw.post(
            url, headers={**HEADERS, b"Authorization": b"Bearer " + token}, json=INITIALIZE
        )
    assert response.status_code == 401, response.text


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("", "is empty"),
        ("a" * (MAX_TOKEN_CHARS + 1), f"longer than {MAX_TOKEN_CHARS}"),
        ("mtb_\u00e9", "cannot hold"),
        ("mtb_\x7f", "cannot hold"),
        ("mtb a", "cannot hold"),
    ],
)
def test_the_token_check_names_the_problem(token, problem):
    found = credentials.token_problem(token)
    assert found is not None and problem in found


def test_a_real_binding_token_passes_the_check():
    assert credentials.token_problem("mtb_" + "Zz09-_" * 7 + "a") is None


async def test_a_call_grpc_refuses_to_start_ends_with_an_error_not_a_hang(graph_service):
    # Unchecked metadata goes straight to gRPC here: it refuses it before the call starts and
    # never settles the call, which await_rpc must still end.
    async with grpc.aio.insecure_channel(f"127.0.0.1:{graph_service.port}") as channel:
        stub = graph_pb2_grpc.StoryGraphStub(channel)
        call = stub.ResolveBinding(
            graph_pb2.ResolveBindingRequest(token="x"),
            timeout=5,
            metadata=[("authorization", "Bearer mtb_\x01")],
        )
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await asyncio.wait_for(credentials.await_rpc(call, 5), 30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert time.monotonic() - started < 5 + credentials.DEADLINE_SLACK_S


async def test_a_call_that_never_settles_ends_deadline_exceeded_after_its_timeout():
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    class Unsettled:
        cancelled = False

        def __await__(self):
            return never.__await__()

        def cancel(self) -> None:
            self.cancelled = True

    call = Unsettled()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(credentials.await_rpc(call, 0.1), 30)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert call.cancelled


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


async def flood(url: str, count: int) -> None:
    """`count` initialize requests with malformed tokens, 20 at a time; each must be 401."""
    tokens = list(BAD_TOKENS.values())
    limits = httpx2.Limits(max_connections=20)
    async with httpx2.AsyncClient(timeout=10, limits=limits) as raw:

        async def one(i: int) -> None:
            token = tokens[i % len(tokens)]
            headers = {**HEADERS, b"Authorization": b"Bearer " + token}
            response = await raw.post(url, headers=headers, json=INITIALIZE)
            assert response.status_code == 401, response.text

        for start in range(0, count, 20):
            await asyncio.gather(*(one(i) for i in range(start, min(count, start + 20))))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
async def test_a_flood_of_malformed_tokens_leaves_the_gateways_memory_flat(graph_service):
    async with gateway_process(graph_service.port) as gateway:
        url, pid = gateway.url, gateway.process.pid
        await flood(url, 500)  # warms allocator pools and caches
        before = rss_bytes(pid)
        await flood(url, 4_000)
        after = rss_bytes(pid)
    # Before the fix every such request stayed pending for good, about 27 KB each.
    assert after - before < 16 * 1024 * 1024, (before, after)


def test_a_stdio_gateway_refuses_to_start_with_a_malformed_binding_token(monkeypatch):
    monkeypatch.setenv("MIRRORTREE_GATEWAY_TRANSPORT", "stdio")
    monkeypatch.setenv("MIRRORTREE_BINDING_TOKEN", "mtb_\x7f")
    with pytest.raises(ValueError, match="MIRRORTREE_BINDING_TOKEN holds a character"):
        Settings.from_env()
