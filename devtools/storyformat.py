"""The story-file format: reading a file and validating every element before anything is sent.

A story file (format "mirrortree.story/1", described in docs/story-file-format.md) lists
sources, preferences and review results, each written in the protobuf JSON mapping of the
request that applies it, without its idempotency key: each element's key is a digest of its
content (idempotency_key), so loading a file again replays it. devtools.storyfile loads what
this module has validated.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from mirrortree.v1 import tree_pb2

FORMAT = "mirrortree.story/1"

# More problems than this in one file are summarized; the first ones are what a user fixes.
MAX_PROBLEMS = 20

EXIT_REFUSED = 1
EXIT_INVALID = 2


@dataclass(frozen=True)
class Kind:
    """One top-level list of a story file and the RPC that applies its elements."""

    name: str  # the list's key in the file
    request: type[Message]
    method: str  # TreeService RPC
    id_field: str  # names the element in messages


# Loading order: reviews may cite sources and preferences written before them.
KINDS = (
    Kind("sources", tree_pb2.RecordSourceRequest, "RecordSource", "source_id"),
    Kind("preferences", tree_pb2.SetPreferenceRequest, "SetPreference", "preference_id"),
    Kind("reviews", tree_pb2.RecordReviewRequest, "RecordReview", "result_id"),
)
_KEY_FIELDS = frozenset({"idempotency_key", "idempotencyKey"})


class StoryFileError(Exception):
    """Base class; `exit_code` is what the command line exits with."""

    exit_code = EXIT_INVALID


class InvalidStoryFile(StoryFileError):
    """The file cannot be read or is not a valid story file; nothing was sent."""

    exit_code = EXIT_INVALID

    def __init__(self, problems: Sequence[str]) -> None:
        shown = list(problems[:MAX_PROBLEMS])
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"... and {len(problems) - MAX_PROBLEMS} more problems")
        super().__init__("\n".join(shown))
        self.problems = tuple(problems)


@dataclass(frozen=True)
class Element:
    """One validated element, its request ready to send (idempotency key included)."""

    kind: Kind
    index: int
    request: Message
    origin: str = ""  # the file it came from, for messages

    @property
    def element_id(self) -> str:
        return str(getattr(self.request, self.kind.id_field))

    @property
    def name(self) -> str:
        """E.g. `reviews[2] (result_id "r-3")`."""
        return f'{self.kind.name}[{self.index}] ({self.kind.id_field} "{self.element_id}")'

    @property
    def label(self) -> str:
        """The name, after the file it came from when known."""
        return f"{self.origin}: {self.name}" if self.origin else self.name


@dataclass(frozen=True)
class Story:
    """Validated elements in loading order."""

    elements: tuple[Element, ...]

    @classmethod
    def join(cls, stories: Iterable[Story]) -> Story:
        """Several files, loaded one after the other in the given order."""
        return cls(tuple(e for story in stories for e in story.elements))


def idempotency_key(request: Message) -> str:
    """The key the loader sends with an element: a digest of its content.

    The content is taken as proto JSON with original field names and default values left out,
    so the same element replays whether the file spells `sourceId` or `source_id`, and whether
    or not it writes `"expectedRevision": 0`.
    """
    content = type(request)()
    content.CopyFrom(request)
    content.ClearField("idempotency_key")
    canonical = json.dumps(
        json_format.MessageToDict(content, preserving_proto_field_name=True),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "load:" + hashlib.sha256(canonical.encode()).hexdigest()[:40]


def read_story(path: str | os.PathLike[str]) -> Story:
    """Read and validate one story file; InvalidStoryFile names every problem found."""
    origin = str(path)
    try:
        # utf-8-sig: a byte order mark, as some editors write, is not part of the JSON.
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InvalidStoryFile([f"{origin}: cannot read the file: {reason}"]) from None
    return parse_story_text(text, origin=origin)


def parse_story_text(text: str, *, origin: str = "") -> Story:
    """Decode and validate a story file's text; InvalidStoryFile names every problem found."""
    where = f"{origin}: " if origin else ""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise InvalidStoryFile(
            [f"{where}invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"]
        ) from None
    except _DuplicateKey as exc:
        raise InvalidStoryFile([f"{where}invalid JSON: {exc}"]) from None
    except RecursionError:
        raise InvalidStoryFile(
            [f"{where}invalid JSON: arrays and objects are nested too deeply to read"]
        ) from None
    return parse_story(data, origin=origin)


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of two equal keys silently; in an input file that is a mistake.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(f"the key {key!r} appears twice in one object")
        result[key] = value
    return result


def parse_story(data: object, *, origin: str = "") -> Story:
    """Validate already-decoded JSON; InvalidStoryFile names every problem found."""
    where = f"{origin}: " if origin else ""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise InvalidStoryFile([f"{where}the top level must be an object, not {_type(data)}"])
    if data.get("format") != FORMAT:
        found = f"{data['format']!r}" if "format" in data else "missing"
        problems.append(f'{where}format: must be "{FORMAT}" (found {found})')
    known = {"format"} | {kind.name for kind in KINDS}
    problems.extend(
        f"{where}unknown top-level field {key!r} (known: {', '.join(sorted(known))})"
        for key in data
        if key not in known
    )
    elements: list[Element] = []
    for kind in KINDS:
        items = data.get(kind.name, [])
        if not isinstance(items, list):
            problems.append(f"{where}{kind.name}: must be an array, not {_type(items)}")
            continue
        for index, item in enumerate(items):
            path = f"{kind.name}[{index}]"
            request, bad = _parse_element(kind, item, path)
            if request is None:
                problems.extend(where + p for p in bad)
                continue
            request.idempotency_key = idempotency_key(request)  # type: ignore[attr-defined]
            elements.append(Element(kind, index, request, origin))
    problems.extend(where + p for p in _fragment_problems(elements))
    problems.extend(where + p for p in _review_problems(elements))
    if problems:
        raise InvalidStoryFile(problems)
    return Story(tuple(elements))


def _parse_element(kind: Kind, item: object, path: str) -> tuple[Message | None, list[str]]:
    """The element as its request message, or the problems that prevent it.

    json_format checks field names, types and enum values against the proto and says where
    ("at RecordReviewRequest.events[0].kind"); the element's own path is put in front.
    """
    if not isinstance(item, dict):
        return None, [
            f"{path}: must be an object ({kind.request.DESCRIPTOR.name}), not {_type(item)}"
        ]
    keyed = [
        f"{path}.{key}: must not be in a story file: the loader derives each element's "
        "idempotency key from its content"
        for key in item
        if key in _KEY_FIELDS
    ]
    if keyed:
        return None, keyed
    doubled = _spelled_twice(kind.request.DESCRIPTOR, item, path)
    if doubled:
        return None, doubled
    request = kind.request()
    try:
        json_format.ParseDict(item, request)
    except json_format.ParseError as exc:
        return None, [f"{path}: {exc}"]
    except RecursionError:
        return None, [f"{path}: nested too deeply to read"]
    return request, []


def _spelled_twice(descriptor: Any, value: object, path: str) -> list[str]:
    """Fields written both as `sourceId` and `source_id` in one object, at any depth.

    json_format accepts either spelling and silently keeps one of the two values; in an input
    file, two values for one field are a mistake to point at, not a choice to make.
    """
    if not isinstance(value, dict):
        return []
    problems = []
    for field in descriptor.fields:
        present = [name for name in dict.fromkeys((field.json_name, field.name)) if name in value]
        if len(present) > 1:
            problems.append(
                f"{path}.{present[0]} and {path}.{present[1]}: one field written both ways; "
                "keep one of them"
            )
        message = field.message_type
        if message is None or message.GetOptions().map_entry:
            continue
        for name in present:
            child = value[name]
            if field.is_repeated and isinstance(child, list):
                for i, item in enumerate(child):
                    problems += _spelled_twice(message, item, f"{path}.{name}[{i}]")
            else:
                problems += _spelled_twice(message, child, f"{path}.{name}")
    return problems


def _type(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    names.update({list: "an array", dict: "an object"})
    return names.get(type(value), type(value).__name__)


def _fragment_problems(elements: Sequence[Element]) -> list[str]:
    """Source references whose source revision is in the same file must quote it exactly.

    Each source entry creates the revision after the one it expects (expectedRevision 0
    creates revision 1), and the server keeps only the current text, so a wrong quote of an
    older revision could never be noticed later.
    """
    texts: dict[tuple[str, str, str], tuple[str, str]] = {}
    for element in elements:
        source = element.request
        if isinstance(source, tree_pb2.RecordSourceRequest) and not source.deleted:
            revision = str(source.expected_revision + 1)
            texts[(source.source_type, source.source_id, revision)] = (element.name, source.text)
    problems: list[str] = []
    for element in elements:
        review = element.request
        if not isinstance(review, tree_pb2.RecordReviewRequest):
            continue
        for i, ref in enumerate(review.source_references):
            found = texts.get((ref.source_type, ref.source_id, ref.source_version))
            if found is None:
                continue
            label, text = found
            quoted = text[ref.fragment_start : ref.fragment_end]
            if quoted != ref.fragment:
                path = f"{element.kind.name}[{element.index}].sourceReferences[{i}]"
                where = text.find(ref.fragment)
                hint = (
                    f"; the fragment is at {where}..{where + len(ref.fragment)}"
                    if where >= 0
                    else "; the fragment does not occur in that revision"
                )
                problems.append(
                    f"{path}.fragment: is not the text at {ref.fragment_start}..{ref.fragment_end} "
                    f"(code points) of {label}, revision {ref.source_version}"
                    f"{hint}"
                )
    return problems


def _review_problems(elements: Sequence[Element]) -> list[str]:
    """What TreeService would refuse in a review, found before anything is sent: a
    reviewGeneratedAt without a time zone, and an object citing a source reference that is not
    in the same result. (Loading stops at the first refused element, so a file whose first
    elements were already sent would otherwise be left half loaded.)"""
    problems: list[str] = []
    for element in elements:
        review = element.request
        if not isinstance(review, tree_pb2.RecordReviewRequest):
            continue
        path = f"{element.kind.name}[{element.index}]"
        when = review.review_generated_at
        try:
            naive = bool(when) and datetime.fromisoformat(when).tzinfo is None
        except ValueError:
            naive = False  # not a timestamp at all: TreeService names it
        if naive:
            problems.append(
                f"{path}.reviewGeneratedAt: {when!r} has no time zone; add 'Z' or an offset "
                "such as +08:00"
            )
        cited = {ref.id for ref in review.source_references}
        for field in review.DESCRIPTOR.fields:
            if field.message_type is None or not field.is_repeated:
                continue
            cites = field.message_type.fields_by_name.get("source_reference_ids")
            if cites is None:
                continue
            for i, obj in enumerate(getattr(review, field.name)):
                for j, ref_id in enumerate(getattr(obj, cites.name)):
                    if ref_id not in cited:
                        problems.append(
                            f"{path}.{field.json_name}[{i}].{cites.json_name}[{j}]: names "
                            f"source reference {ref_id!r}, which is not in this result's "
                            "sourceReferences"
                        )
    return problems
