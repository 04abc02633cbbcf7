"""The rules of purging (T16): the preview token, and what the tombstones, retractions and
marks it leaves say."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import purge_pb2
from tree_service.errors import InvalidInput, RevisionConflict, TreeServiceError

TOKEN = re.compile(r"purge1\.([0-9a-f-]{36})\.([1-9][0-9]{0,18})\.([01])\.([0-9a-f]{64})")
# Quoted content shorter than this is not searched for in derived facts: a word that short
# says nothing about where it came from.
MIN_QUOTE = 4
# A run of a longer text this long found elsewhere counts as quoting it.
QUOTE_RUN = 24


class PurgePreviewStale(RevisionConflict):
    """The branch or what points at it changed since the preview; nothing was purged."""

    reason = "purge_preview_stale"

    def __init__(self, branch_id: str, revision: int) -> None:
        # Its own message and metadata rather than RevisionConflict's: the preview, not a
        # revision the caller named, is what went stale.
        TreeServiceError.__init__(
            self,
            f"branch {branch_id} changed since the purge preview (it is at revision {revision} "
            "now, or what it touches differs): preview it again and purge with the new token",
            {"branch_id": branch_id, "current_revision": str(revision)},
        )
        self.current = revision


@dataclass(frozen=True)
class Token:
    branch_id: str
    revision: int
    include_copies: bool
    digest: str


def token_of(impact: purge_pb2.PurgeImpact, include_copies: bool) -> str:
    digest = hashlib.sha256(impact.SerializeToString(deterministic=True)).hexdigest()
    flag = "1" if include_copies else "0"
    return f"purge1.{impact.branch_id}.{impact.branch_revision}.{flag}.{digest}"


def parse_token(text: str) -> Token | None:
    found = TOKEN.fullmatch(text)
    if found is None:
        return None
    return Token(found[1], int(found[2]), found[3] == "1", found[4])


def expect_token_for(token: Token, branch_id: str, copies_chosen: bool) -> None:
    if token.branch_id != branch_id:
        raise InvalidInput.one(
            "preview_token", f"was issued for branch {token.branch_id}, not for {branch_id}"
        )
    if token.include_copies != copies_chosen:
        said = "included" if token.include_copies else "kept"
        raise InvalidInput.one(
            "choice.transplant_copies",
            f"differs from the preview, which {said} the transplanted copies: preview again "
            "with include_transplant_copies as chosen",
        )


@dataclass(frozen=True)
class Tombstone:
    purge_id: str
    branch_id: str
    tree_id: str
    purged_by: str
    reason: str
    purged_at: datetime

    def record(self) -> dict[str, Any]:
        """What a rewritten record keeps of the purge."""
        return {
            "purge_id": self.purge_id,
            "branch_id": self.branch_id,
            "purged_by": self.purged_by,
            "purged_at": format_utc(self.purged_at),
            "reason": self.reason,
        }

    def description(self, node_id: str) -> str:
        return (
            f"node {node_id} was purged with branch {self.branch_id} by {self.purged_by} at "
            f"{format_utc(self.purged_at)}: {self.reason}"
        )

    def retraction(self) -> str:
        return (
            f"Retracted: this rested on content purged with branch {self.branch_id} by "
            f"{self.purged_by} at {format_utc(self.purged_at)} ({self.reason})."
        )

    def to_proto(self, node_id: str = "") -> purge_pb2.PurgeTombstone:
        return purge_pb2.PurgeTombstone(
            purge_id=self.purge_id,
            branch_id=self.branch_id,
            tree_id=self.tree_id,
            purged_by=self.purged_by,
            reason=self.reason,
            purged_at=format_utc(self.purged_at),
            node_id=node_id,
        )


class Quotes:
    """Finds purged text quoted in other text: whole when short, else any run of QUOTE_RUN
    code points of it, so that a partial quote is found too."""

    def __init__(self, texts: list[str]) -> None:
        self._short = [t for t in texts if len(t) < QUOTE_RUN]  # each MIN_QUOTE or longer
        self._runs = {
            t[i : i + QUOTE_RUN] for t in texts if len(t) >= QUOTE_RUN
            for i in range(len(t) - QUOTE_RUN + 1)
        }  # fmt: skip

    def __call__(self, *fields: str) -> bool:
        for field in fields:
            if any(t in field for t in self._short):
                return True
            if any(
                field[i : i + QUOTE_RUN] in self._runs for i in range(len(field) - QUOTE_RUN + 1)
            ):
                return True
        return False


def purged_entry(entry: dict[str, Any], branch_id: str) -> dict[str, Any]:
    """A main-line snapshot entry of a purged node: its frame, no content."""
    purged = {
        **entry,
        "text": "",
        "reasoning_summary": "",
        "evidence": [],
        "tool_trace": [],
        "attachments": [],
        "citations": [],
        "conditions": {},
        "stop_reason": None,
        **in_purged_branch(branch_id),
    }
    if entry.get("comparison") is not None:
        # Which answers were compared is the frame; the criteria are the words.
        purged["comparison"] = {**entry["comparison"], "criteria": []}
    return purged


def in_purged_branch(branch_id: str) -> dict[str, str]:
    """What a kept copy of a purged node says of where it was: in a purged branch."""
    return {"branch_id": branch_id, "branch_state": "purged"}


def purged_citation(citation: dict[str, Any], tombstone: Tombstone) -> dict[str, Any]:
    """A citation into purged content: where it pointed and why it is gone, nothing cited."""
    kept: dict[str, Any] = {
        k: citation[k] for k in ("node_id", "start", "end", "note") if k in citation
    }
    return {
        **kept,
        "snapshot": "",
        "redacted": True,
        "status": "purged",
        "source_description": tombstone.description(str(citation.get("node_id", ""))),
    }


def source_purged(citation: dict[str, Any], tombstone: Tombstone) -> dict[str, Any]:
    """A citation into purged content that the purge kept: its own copy stays, saying what
    became of the source."""
    return {
        **citation,
        "status": "source_purged",
        "source_description": tombstone.description(str(citation.get("node_id", ""))),
    }


def purged_item(item: dict[str, Any]) -> dict[str, Any]:
    """A recorded context item that held purged content: omitted, saying so."""
    return {
        **item,
        "text": "",
        "inclusion": "omitted",
        "summary_version": 0,
        "omitted_reason": f"purged: {item.get('subject', '')}",
    }
