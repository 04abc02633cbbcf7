"""The source page: a claim's saved fragment, shown in place in the whole source version it
was cut from when that version is still kept."""

from __future__ import annotations

from mirrortree.v1 import graph_pb2
from webview.markup import Markup, el, join
from webview.reads import SourceData


def source_page(reference_id: str, data: SourceData) -> Markup:
    snap = data.snapshot
    start, end = snap.fragment_start, snap.fragment_end
    placed = (
        data.whole is not None
        and 0 <= start <= end <= len(data.whole)
        and data.whole[start:end] == data.fragment
    )
    if placed and data.whole is not None:
        text = el(
            "pre",
            data.whole[:start],
            el("mark", data.fragment, id="fragment", class_="fragment"),
            data.whole[end:],
            class_="source-text",
        )
        where = (
            f"The saved fragment is highlighted in version {snap.returned_version} of the "
            f"source, code points {start}–{end}."
        )
    else:
        text = el(
            "pre", el("mark", data.fragment, id="fragment", class_="fragment"), class_="source-text"
        )
        why = data.whole_note or "the whole version differs from the saved fragment's place"
        where = (
            f"Only the saved fragment can be shown (code points {start}–{end} of version "
            f"{snap.returned_version or 'unknown'}): {why}."
        )
    availability = graph_pb2.SourceAvailability.Name(snap.availability).lower()
    times = snap.time_metadata
    time_rows = []
    for label, value in (
        ("created", times.created),
        ("updated", times.updated),
        ("captured", times.captured),
    ):
        shown = value.at if value.HasField("at") else f"unknown ({value.unknown.reason})"
        time_rows.append(
            [el("dt", label), el("dd", shown, f" — {value.basis}" if value.basis else "")]
        )
    return join(
        [
            el(
                "section",
                el("p", "source reference ", el("code", reference_id), class_="kicker"),
                el("h1", f"{snap.source_type} {snap.source_id}"),
                el("p", where, class_="hint"),
                el(
                    "dl",
                    el("dt", "availability"),
                    el("dd", availability),
                    el("dt", "read kinds"),
                    el(
                        "dd",
                        ", ".join(
                            graph_pb2.ReadKind.Name(k).lower() for k in snap.available_read_kinds
                        ),
                    ),
                    time_rows,
                    class_="facts",
                ),
                class_="source-head",
            ),
            el("section", text, class_="source-body"),
        ]
    )
