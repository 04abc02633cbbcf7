"""PostgreSQL WAL positions (LSNs): parsing, formatting, and the commit point of a write.

A write's consistency token must be a position that a replica's *replay* position reaches once
the commit is replayed. `pg_current_wal_insert_lsn()` reports where the next record will start,
and when the last record ended exactly at a page boundary that is *after* the next page's header
(24 bytes, or 40 at the start of a segment) — a position replay never reports until more WAL is
written. `commit_point` maps such a position back to the boundary.
"""

from __future__ import annotations

import re

SHORT_PAGE_HEADER = 24  # SizeOfXLogShortPHD, MAXALIGNed
LONG_PAGE_HEADER = 40  # SizeOfXLogLongPHD: first page of each segment
# The driver sends a pg_lsn as a signed 64-bit integer; no server writes 8 EiB of WAL anyway.
MAX_LSN = (1 << 63) - 1


_LSN = re.compile(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})")


def parse_lsn(text: str) -> int:
    """LSN text ("16/B374D848") to an integer; ValueError when malformed."""
    match = _LSN.fullmatch(text)
    if match is None:
        raise ValueError(f"{text[:40]!r} is not an LSN such as 0/16B3748")
    value = (int(match[1], 16) << 32) | int(match[2], 16)
    if value > MAX_LSN:
        raise ValueError(f"{text!r} is beyond the largest WAL position, {format_lsn(MAX_LSN)}")
    return value


def format_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


def commit_point(insert_lsn: int, block_size: int, segment_size: int) -> int:
    """The replay position that proves everything inserted before `insert_lsn` is replayed."""
    if insert_lsn % segment_size == LONG_PAGE_HEADER:
        return insert_lsn - LONG_PAGE_HEADER
    if insert_lsn % block_size == SHORT_PAGE_HEADER:
        return insert_lsn - SHORT_PAGE_HEADER
    return insert_lsn
