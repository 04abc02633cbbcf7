"""Pages of nodes (and other messages) that fit in one gRPC response."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from google.protobuf.message import Message

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.domain import Node

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
