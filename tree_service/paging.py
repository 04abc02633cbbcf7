"""Pages of nodes and main-line versions that fit in one gRPC response."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from google.protobuf.message import Message

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.conversation.main_line import MainLineStore
from tree_service.conversation.rows import ListedVersion
from tree_service.domain import MainLineVersion, Node

M = TypeVar("M", bound=Message)  # a message a page holds
T = TypeVar("T")

DEFAULT_PAGE = 50
MAX_PAGE = 500
DEFAULT_PATH_PAGE = 100
MAX_PATH_PAGE = 1000
DEFAULT_VERSION_PAGE = 20
MAX_VERSION_PAGE = 100
# A page stops early at this many bytes to stay under a client's default gRPC receive limit
# (4 MiB); it always holds one node, which fits alone as an answer has a bounded length.
MAX_PAGE_BYTES = 4 * 1024 * 1024 - 4096  # room for the response's other fields


def byte_prefix(items: Iterable[T], to_proto: Callable[[T], M]) -> list[M]:
    """The messages of the longest prefix of `items` within MAX_PAGE_BYTES (never empty if
    `items` is not); items past it are never converted."""
    page: list[M] = []
    size = 0
    for item in items:
        message = to_proto(item)
        size += message.ByteSize() + 8  # the field's tag and length prefix
        if page and size > MAX_PAGE_BYTES:
            break
        page.append(message)
    return page


def byte_page(nodes: list[Node]) -> list[tree_pb2.Node]:
    """The longest prefix of `nodes` within MAX_PAGE_BYTES (never empty if `nodes` is not)."""
    return byte_prefix(nodes, convert.node_to_proto)


def offset_page(nodes: list[Node], offset: int, length: int) -> tuple[list[tree_pb2.Node], str]:
    """A page of nodes read from zero-based `offset` of a sequence of `length` nodes (a path,
    a snapshot), and the token of the next page ("" on the last)."""
    page = byte_page(nodes)
    following = offset + len(page)
    return page, str(following) if following < length else ""


def version_within(version: MainLineVersion, budget: int) -> tree_pb2.MainLineVersion:
    """A version with its snapshot when that fits in `budget` bytes, else without it
    (`snapshot_omitted`: GetMainLineSnapshot pages through it)."""
    message = convert.version_to_proto(version)
    if message.ByteSize() > budget:
        message.ClearField("snapshot")
        message.snapshot_omitted = True
    return message


async def version_page(
    main_lines: MainLineStore, listed: list[ListedVersion]
) -> list[tree_pb2.MainLineVersion]:
    """The longest prefix of `listed` within MAX_PAGE_BYTES (never empty if `listed` is not).
    A version whose snapshot would overflow a page of its own comes without it; one that would
    fit alone starts the next page instead.

    Snapshots are read a batch at a time, each batch about a page by the size they are stored
    in, and no further once the page is full: a page of large versions reads about a page of
    snapshots, not all of the versions listed. Stored sizes may be compressed, so a batch can
    hold a few pages of JSON text; never the whole list's."""
    messages: list[tree_pb2.MainLineVersion] = []
    start = 0
    while start < len(listed):
        end, stored = start + 1, listed[start].snapshot_stored_bytes
        while end < len(listed) and stored + listed[end].snapshot_stored_bytes <= MAX_PAGE_BYTES:
            stored += listed[end].snapshot_stored_bytes
            end += 1
        batch = await main_lines.with_snapshots([v.version for v in listed[start:end]])
        messages.extend(version_within(version, MAX_PAGE_BYTES) for version in batch)
        page = byte_prefix(messages, lambda message: message)
        if len(page) < len(messages):
            return page
        start = end
    return messages
