"""Opaque, tamper-proof paging cursors.

A cursor is `base64url(json payload) "." base64url(HMAC-SHA256(secret, payload)[:16])`. The
payload binds the tool, a fingerprint of the filters and sort, the resolved scope and the read
revision the first page was read at, plus the position. Any edit breaks the signature
(`invalid_cursor`); a cursor for another query is refused; a read revision that moved on
means the pages would mix old and new data (`stale_cursor`, raised by the caller).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from graph_service.errors import InvalidCursor

MAX_CURSOR_CHARS = 2048
CURSOR_VERSION = 1


@dataclass(frozen=True)
class CursorState:
    tool: str
    fingerprint: str
    scope_key: str
    resolution: str
    read_revision: int
    position: list[Any]
    # Counts of the first page, carried so later pages need not count again (None = unknown).
    counts: list[int | None] | None = None


def fingerprint(*parts: object) -> str:
    """A short stable hash of the query's filters and sort."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    """Signs and verifies cursors with one secret shared by all graph_service instances."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]

    def encode(self, state: CursorState) -> str:
        payload = json.dumps(
            {
                "v": CURSOR_VERSION,
                "t": state.tool,
                "f": state.fingerprint,
                "s": state.scope_key,
                "o": state.resolution,
                "r": state.read_revision,
                "p": state.position,
                "n": state.counts,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def decode(self, cursor: str, tool: str) -> CursorState:
        """Verify and unpack; raises InvalidCursor for anything not issued by us for `tool`."""
        if len(cursor) > MAX_CURSOR_CHARS:
            raise InvalidCursor(f"cursor is longer than {MAX_CURSOR_CHARS} characters")
        try:
            body, _, signature = cursor.partition(".")
            payload = _unb64(body)
            valid = hmac.compare_digest(_unb64(signature), self._sign(payload))
        except (binascii.Error, ValueError):
            valid = False
        if not valid:
            raise InvalidCursor("cursor was not issued by this service or has been altered")
        data = json.loads(payload)
        if data.get("v") != CURSOR_VERSION or data.get("t") != tool:
            raise InvalidCursor(f"cursor does not belong to {tool}; start a new query")
        return CursorState(
            tool=data["t"],
            fingerprint=data["f"],
            scope_key=data["s"],
            resolution=data["o"],
            read_revision=int(data["r"]),
            position=list(data["p"]),
            counts=data.get("n"),
        )
