"""A time axis for the story page, drawn as SVG bands (attributes, not inline style, so the
page's CSP allows them and they draw without script)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from webview.markup import Markup, el


def parse_time(text: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True)
class Axis:
    """A time axis over every dated thing the page shows, in percent of its width."""

    start: datetime
    end: datetime

    @classmethod
    def over(cls, times: list[datetime]) -> Axis | None:
        if not times:
            return None
        start, end = min(times), max(times)
        if start == end:
            return None
        # Room after the last event, so an open validity visibly runs on past it.
        return cls(start - (end - start) * 0.03, end + (end - start) * 0.12)

    def at(self, moment: datetime) -> float:
        span = (self.end - self.start).total_seconds()
        offset = (moment - self.start).total_seconds()
        return max(0.0, min(100.0, offset / span * 100))

    def band(self, start: datetime | None, end: datetime | None, text: str, cls: str) -> Markup:
        """An SVG band (attributes, not inline style, so the page's CSP allows it and it
        draws without script)."""
        left = self.at(start) if start else 0.0
        right = self.at(end) if end else 100.0
        width = max(right - left, 0.6)
        # About two characters per percent of the track fit; a narrower band keeps its label
        # in its tooltip only.
        room = int(width * 1.8)
        label = text if len(text) <= room else (text[: room - 1] + "…" if room >= 6 else "")
        ends = f"{' open-start' if start is None else ''}{' open-end' if end is None else ''}"
        return el(
            "g",
            el("title", text),
            el("rect", x=f"{left:.2f}%", y="2", width=f"{width:.2f}%", height="20", rx="3"),
            el("text", label, x=f"{left + 0.4:.2f}%", y="16") if label else None,
            class_=f"band {cls}{ends}",
        )


def track(*children: object, label: str, cls: str = "track") -> Markup:
    return el("svg", *children, class_=cls, width="100%", height="24", role="img", aria_label=label)
