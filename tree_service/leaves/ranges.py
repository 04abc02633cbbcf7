"""Exact arithmetic on zero-based, half-open code-point ranges [start, end)."""

from __future__ import annotations

from collections.abc import Iterable

Range = tuple[int, int]


def merged(ranges: Iterable[Range]) -> list[Range]:
    """The ranges as sorted, disjoint, non-empty ranges; touching ranges are joined."""
    out: list[Range] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def intersection(want: Range, have: Iterable[Range]) -> list[Range]:
    """The parts of `want` that `have` covers, merged."""
    start, end = want
    return merged((max(start, s), min(end, e)) for s, e in have)


def difference(want: Range, have: Iterable[Range]) -> list[Range]:
    """The parts of `want` that `have` does not cover, merged."""
    missing: list[Range] = []
    position, end = want
    for s, e in merged(have):
        if e <= position:
            continue
        if s >= end:
            break
        if s > position:
            missing.append((position, s))
        position = max(position, e)
        if position >= end:
            break
    if position < end:
        missing.append((position, end))
    return missing


def covers(have: Iterable[Range], want: Range) -> bool:
    """Whether `have` covers every code point of `want`."""
    return not difference(want, have)
