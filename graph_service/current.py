"""Which stored description of an object is its current one, chosen by evidence only.

Seed §3–§5: a later generation or recording time never makes a description newer, and
`current` must not simply pick the newest summary. What may decide, in order:

1. an explicit object revision: when every copy gives a numeric revision, the highest wins;
2. the period the copy's review covered: the copy whose result covered the latest period
   (its interval ends last) wins — only when every result in play gave a closed interval;
3. otherwise nothing decides: the competing descriptions are listed with their periods and
   the projection says it cannot choose.

Copies that say the same thing never compete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graph_service.convert import public_fields
from graph_service.views import RelationTouch, SearchRow
from mirrortree.timefmt import format_utc

# How many of X's copies the choice considers: the most recently recorded ones. A bound keeps
# a hub's current read one statement of bounded size; the projection says when it applied.
CANDIDATES = 50
COMPETING_SHOWN = 10


@dataclass(frozen=True)
class Period:
    """The period a copy's result covered, as its coverage basis allows it to be known."""

    basis: str  # "interval", "counts", "unknown"
    start: datetime | None
    end: datetime | None

    @property
    def closed(self) -> bool:
        return self.basis == "interval" and self.start is not None and self.end is not None

    def as_json(self) -> dict[str, Any]:
        if self.basis != "interval":
            return {"unknown": {"reason": f"its review's coverage is known as {self.basis}"}}
        if self.start is None and self.end is None:
            return {"unknown": {"reason": "its review gave no covered interval"}}
        return {"from": format_utc(self.start), "to": format_utc(self.end)}


@dataclass(frozen=True)
class Choice:
    """The current description, how it was chosen, and what competes when nothing decides."""

    chosen: SearchRow | None
    by: str  # "object_revision", "covered_period", "one_description", "undecided", "none"
    competing: tuple[tuple[SearchRow, Period], ...] = ()


def _revision_number(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _text(row: SearchRow) -> tuple[str, str]:
    return (row.title, row.body)


def choose(copies: Sequence[tuple[SearchRow, Period]]) -> Choice:
    """The current description among `copies` (X's stored copies with their periods)."""
    if not copies:
        return Choice(None, "none")
    if len({_text(row) for row, _ in copies}) == 1:
        return Choice(max((row for row, _ in copies), key=_recency), "one_description")
    in_play = list(copies)
    numbers = [_revision_number(row.object_revision) for row, _ in in_play]
    if all(n is not None for n in numbers):
        top = max(n for n in numbers if n is not None)
        in_play = [c for c, n in zip(in_play, numbers, strict=True) if n == top]
        if len({_text(row) for row, _ in in_play}) == 1:
            return Choice(max((row for row, _ in in_play), key=_recency), "object_revision")
    if all(period.closed for _, period in in_play):
        latest = max(period.end for _, period in in_play if period.end is not None)
        ending = [(row, p) for row, p in in_play if p.end == latest]
        if len({_text(row) for row, _ in ending}) == 1:
            return Choice(max((row for row, _ in ending), key=_recency), "covered_period")
        in_play = ending
    return Choice(None, "undecided", _one_per_description(in_play))


def _recency(row: SearchRow) -> tuple[datetime, datetime]:
    """Among copies that say the same thing, which one to cite (not a reason to choose)."""
    return (row.review_generated_at, row.recorded_at)


def _one_per_description(
    copies: Sequence[tuple[SearchRow, Period]],
) -> tuple[tuple[SearchRow, Period], ...]:
    kept: dict[tuple[str, str], tuple[SearchRow, Period]] = {}
    for row, period in sorted(copies, key=lambda c: (c[0].result_id, c[0].recorded_at)):
        kept.setdefault(_text(row), (row, period))
    return tuple(kept.values())


REASONS = {
    "object_revision": "it is the highest object revision the reviews recorded",
    "covered_period": (
        "its review covered the latest period (the reviews gave no object revisions that "
        "decide); when a review was generated or recorded does not count"
    ),
    "one_description": "every stored copy describes the object the same way",
}


def description_json(
    choice: Choice, periods: dict[str, Period], copies: int, considered: int
) -> dict[str, Any]:
    """The projection's `description`: the chosen one with why, or the competing ones.

    periods: by result id; copies: how many copies X has; considered: how many were weighed."""
    bound = (
        {"considered": f"the {considered} most recently recorded of {copies} stored copies"}
        if considered < copies
        else {}
    )
    row = choice.chosen
    if row is not None:
        title_name, body_name = public_fields(row.object_type)
        return {
            "state": "chosen",
            title_name: row.title,
            body_name: row.body,
            "object_revision": row.object_revision or "unknown",
            "recorded_by_result": row.result_id,
            "covered_period": periods[row.result_id].as_json(),
            "review_generated_at": format_utc(row.review_generated_at),
            "recorded_at": format_utc(row.recorded_at),
            "chosen_by": choice.by,
            "reason": REASONS[choice.by],
            "note": (
                f"one of {copies} stored description(s); older ones stay in `snapshots` and "
                "are not hidden by this one"
            ),
            **bound,
        }
    competing = []
    for other, period in choice.competing[:COMPETING_SHOWN]:
        title_name, body_name = public_fields(other.object_type)
        competing.append(
            {
                title_name: other.title,
                body_name: other.body,
                "object_revision": other.object_revision or "unknown",
                "recorded_by_result": other.result_id,
                "covered_period": period.as_json(),
                "review_generated_at": format_utc(other.review_generated_at),
            }
        )
    return {
        "state": "undecided",
        "reason": (
            "the stored descriptions differ and no evidence decides between them: no object "
            "revisions that order them, and no covered periods that do (a later generated or "
            "recorded review is not newer); read them with their periods and evidence"
        ),
        "competing": competing,
        "competing_complete": len(choice.competing) <= COMPETING_SHOWN,
        **bound,
    }


def work_state_json(
    kinded: SearchRow | None, completion: tuple[tuple[str, str], ...]
) -> dict[str, Any]:
    """What is decided and what is done, each with its evidence. Decided is not completed:
    only a `completed` entity change is evidence that something was carried out."""
    state: dict[str, Any] = {}
    if kinded is not None and kinded.kind == "decision":
        state["decision"] = {
            "state": "decided",
            "evidence": {
                "event_id": kinded.object_id,
                "result_id": kinded.result_id,
                "source_reference_ids": list(kinded.details.get("source_reference_ids", []))[
                    :SOURCES_SHOWN
                ],
            },
        }
    if completion:
        state["completion"] = {
            "state": "completed",
            "evidence": [
                {"entity_change": change_id, "result_id": result_id}
                for change_id, result_id in completion
            ],
        }
    else:
        why = (
            "a decision is not evidence that it was carried out"
            if kinded is not None and kinded.kind == "decision"
            else "nothing recorded says this was carried out"
        )
        state["completion"] = {
            "state": "unknown",
            "reason": f"{why}; no 'completed' change or task record is linked",
        }
    return state


SOURCES_SHOWN = 20


def unresolved_json(
    choice: Choice,
    conflicts: list[RelationTouch],
    differences: list[dict[str, Any]],
    gaps: tuple[str, ...],
) -> dict[str, Any]:
    """What is open about the object: questions the evidence leaves open (which description
    is current, which side of an unsettled conflict holds), differences with confirmed
    preferences, and the coverage gaps the results holding it report."""
    questions: list[dict[str, Any]] = []
    if choice.by == "undecided":
        questions.append(
            {
                "question": "which stored description is current",
                "why": "no object revision or covered period decides between them",
                "see": "description.competing",
            }
        )
    for touch in conflicts:
        if touch.other[0] == "preference":
            continue  # a difference with a preference, listed below
        questions.append(
            {
                "question": "which of two conflicting claims holds",
                "why": "an evidenced contradicts relation that no replaces settles",
                "relation_id": touch.relation_id,
                "with": {"type": touch.other[0], "id": touch.other[1]},
            }
        )
    return {
        "open_questions": questions,
        "pending_differences": differences,
        "coverage_gaps": list(gaps),
        "note": (
            "what the stored evidence shows as open; an empty list does not claim that "
            "nothing is open"
        ),
    }
