"""Story files: story-graph input as JSON, loaded through TreeService's public API.

A story file (format "mirrortree.story/1", described in docs/story-file-format.md) lists
sources, preferences and review results, each written in the protobuf JSON mapping of the
request that applies it (RecordSource, SetPreference, RecordReview) without its idempotency key.
The loader derives each key from the element's content, so loading a file again replays every
element and changes nothing.

The whole file is checked before anything is sent (exit code 2 on the command line); the
elements are then applied one by one, and loading stops at the first refused element (exit
code 1), naming it. Reading and validating a file is devtools.storyformat's part; this module
loads, and is the command line:

    python -m devtools.storyfile FILE... [--target HOST:PORT]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

import grpc

from devtools.storyformat import (
    EXIT_REFUSED,
    FORMAT,
    KINDS,
    Element,
    InvalidStoryFile,
    Story,
    StoryFileError,
    idempotency_key,
    parse_story,
    parse_story_text,
    read_story,
)
from mirrortree import callers
from mirrortree.lsn import parse_lsn
from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import common_pb2, tree_pb2, tree_pb2_grpc

DEFAULT_TREE_TARGET = "127.0.0.1:50051"  # the launcher's default MIRRORTREE_TREE_PORT
TARGET_ENV = "MIRRORTREE_TREE_TARGET"
# Generous: one RecordReview writes a whole result in one transaction.
CALL_TIMEOUT_S = 120.0


class ElementRefused(StoryFileError):
    """TreeService refused an element; the elements before it are loaded, none after it sent."""

    exit_code = EXIT_REFUSED

    def __init__(self, element: Element, failure: RpcFailure) -> None:
        text = f"{element.label}: {_refusal(element, failure)}"
        text += f" ({failure.code.name}{', ' + failure.reason if failure.reason else ''})"
        # The status message names only the first bad field; show every one the server listed.
        if len(failure.violations) > 1:
            text += "".join(f"\n  {v.field}: {v.description}" for v in failure.violations)
        super().__init__(text)
        self.element = element
        self.failure = failure


class ServiceUnreachable(ElementRefused):
    """TreeService did not answer `element`; the elements before it are loaded."""

    def __init__(self, target: str, element: Element, failure: RpcFailure) -> None:
        StoryFileError.__init__(
            self,
            f"TreeService at {target} is unreachable ({failure.message}); {element.label} and "
            f"the elements after it were not loaded. Is the stack running? --target or "
            f"${TARGET_ENV} names another address; loading the file again replays what was "
            "loaded",
        )
        self.element = element
        self.failure = failure


def _refusal(element: Element, failure: RpcFailure) -> str:
    """The server's sentence, except where it speaks of what a story file does not have."""
    if failure.reason != "idempotency_key_reused":
        return failure.message or failure.code.name
    # Story files carry no keys (the loader makes them); what was refused is a change.
    if element.kind.name == "reviews":
        return (
            f"review result {element.element_id!r} was recorded before with other content, and "
            "a recorded result cannot be changed; give the changed result a new resultId"
        )
    return (
        f"{element.kind.id_field} {element.element_id!r} was loaded before with other content "
        "under the same key, so this element cannot be applied as written"
    )


@dataclass(frozen=True)
class LoadReport:
    """What a load applied (replayed elements count as loaded) and its consistency token."""

    sources: int
    preferences: int
    reviews: int
    objects: int  # story-graph objects in the loaded review results
    # The highest commit position of all responses; an empty lsn when nothing was sent.
    consistency: common_pb2.ConsistencyToken

    def summary(self) -> str:
        counts = ", ".join(
            _plural(n, word)
            for n, word in (
                (self.sources, "source"),
                (self.preferences, "preference"),
                (self.reviews, "review"),
            )
        )
        token = self.consistency.lsn or "none"
        return f"loaded {counts} ({_plural(self.objects, 'object')}); consistency {token}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def latest(*tokens: common_pb2.ConsistencyToken) -> common_pb2.ConsistencyToken:
    """The token with the highest LSN (empty tokens are ignored)."""
    known = [t for t in tokens if t.lsn]
    if not known:
        return common_pb2.ConsistencyToken()
    return common_pb2.ConsistencyToken(lsn=max(known, key=lambda t: parse_lsn(t.lsn)).lsn)


# ---- loading -----------------------------------------------------------------------------


async def load_file(
    path: str | os.PathLike[str], tree_target: str, *, progress: bool | None = None
) -> LoadReport:
    """Validate a story file, then apply it through TreeService at `tree_target`.

    `progress`: True draws a progress bar on stderr, False never does, None (the default) draws
    one only when stderr is a terminal. Raises InvalidStoryFile (nothing sent) or
    ElementRefused (loading stopped at that element).
    """
    return await load_story(read_story(path), tree_target, progress=progress)


async def load_story(story: Story, tree_target: str, *, progress: bool | None = None) -> LoadReport:
    """Apply validated elements in order; stop at the first one the server refuses."""
    counts = {kind.name: 0 for kind in KINDS}
    objects = 0
    tokens: list[common_pb2.ConsistencyToken] = []
    bar = _Progress.maybe(len(story.elements), progress, sys.stderr)
    try:
        interceptors = callers.client_interceptors(os.environ)
        async with grpc.aio.insecure_channel(tree_target, interceptors=interceptors) as channel:
            stub = tree_pb2_grpc.TreeServiceStub(channel)
            for done, element in enumerate(story.elements, start=1):
                rpc = getattr(stub, element.kind.method)
                try:
                    response = await rpc(element.request, timeout=CALL_TIMEOUT_S)
                except grpc.RpcError as error:
                    failure = describe(error)
                    if failure.code is grpc.StatusCode.UNAVAILABLE:
                        raise ServiceUnreachable(tree_target, element, failure) from None
                    raise ElementRefused(element, failure) from None
                counts[element.kind.name] += 1
                if isinstance(response, tree_pb2.RecordReviewResponse):
                    objects += response.object_count
                tokens.append(response.consistency)
                if bar is not None:
                    bar.show(done, f"{element.kind.name} {element.element_id}")
    finally:
        if bar is not None:
            bar.close()
    return LoadReport(
        sources=counts["sources"],
        preferences=counts["preferences"],
        reviews=counts["reviews"],
        objects=objects,
        consistency=latest(*tokens),
    )


class _Progress:
    """A one-line bar redrawn in place on a terminal; elsewhere (logs, pipes) a line at the
    start and at each 10% step, so a log file is not flooded with carriage returns."""

    WIDTH = 18

    def __init__(self, total: int, stream: TextIO, *, redraw: bool) -> None:
        self._total = total
        self._stream = stream
        self._redraw = redraw
        self._last_step = -1
        self.show(0, "")

    @classmethod
    def maybe(cls, total: int, wanted: bool | None, stream: TextIO) -> _Progress | None:
        terminal = stream.isatty()
        if total == 0 or wanted is False or (wanted is None and not terminal):
            return None
        return cls(total, stream, redraw=terminal)

    def show(self, done: int, note: str) -> None:
        filled = self.WIDTH * done // self._total
        line = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self._total} {note}"
        if self._redraw:
            self._stream.write(f"\r{line.rstrip()}\x1b[K")
        else:
            step = 10 * done // self._total
            if step == self._last_step:
                return
            self._last_step = step
            self._stream.write(line.rstrip() + "\n")
        self._stream.flush()

    def close(self) -> None:
        if self._redraw:
            self._stream.write("\n")
            self._stream.flush()


# ---- command line ------------------------------------------------------------------------


def add_target_argument(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """`--target`: the TreeService address, as every command line that writes through it takes
    it."""
    parser.add_argument(
        "--target",
        default=environ.get(TARGET_ENV) or DEFAULT_TREE_TARGET,
        help=f"TreeService gRPC address (default: ${TARGET_ENV} or {DEFAULT_TREE_TARGET})",
    )


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    """Load story files; exit 0 when all loaded, 1 when the server refused one, 2 when a
    file is invalid (then nothing was sent)."""
    parser = argparse.ArgumentParser(
        prog="python -m devtools.storyfile",
        description="Load story files (format mirrortree.story/1) through TreeService. "
        "Every file is checked before anything is sent; loading a file again changes nothing.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="story files, loaded in order")
    add_target_argument(parser, environ)
    args = parser.parse_args(argv)
    try:
        story = Story.join(read_story(path) for path in args.files)
        report = asyncio.run(load_story(story, args.target, progress=True))
    except StoryFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted; loading the files again replays what was loaded", file=sys.stderr)
        return 130
    print(report.summary())
    return 0


__all__ = [
    "DEFAULT_TREE_TARGET",
    "FORMAT",
    "KINDS",
    "TARGET_ENV",
    "Element",
    "ElementRefused",
    "InvalidStoryFile",
    "LoadReport",
    "ServiceUnreachable",
    "Story",
    "StoryFileError",
    "add_target_argument",
    "idempotency_key",
    "latest",
    "load_file",
    "load_story",
    "main",
    "parse_story",
    "parse_story_text",
    "read_story",
]

if __name__ == "__main__":
    sys.exit(main())
