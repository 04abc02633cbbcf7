"""The four switches that gate the story-graph tools (M3), said the same way wherever they are
read: graph_service before it answers, `python -m devtools.binding` when it issues a token."""

from __future__ import annotations

from collections.abc import Collection

CAPABILITY = "story-graph"


def switches_off(
    *,
    app: bool,
    capability: bool,
    assignments: Collection[str],
    runtime: str | None,
    session: bool,
) -> list[str]:
    """Each switch that is off, as a sentence, in the order they apply: the supervisor app, the
    capability, its assignment to `runtime` (None: a trusted caller, which names no runtime),
    the session's own switch."""
    off = []
    if not app:
        off.append("the supervisor app is switched off")
    if not capability:
        off.append(f"the {CAPABILITY} capability is disabled")
    if runtime is not None and runtime not in assignments:
        off.append(f"the {CAPABILITY} capability is not assigned to runtime {runtime!r}")
    if not session:
        off.append("the story graph is switched off for this session")
    return off
