"""The time metadata a source reference's read can state: when the source was created, when
the version returned was written, and when the saved fragment was captured — each with what it
is, and unknown (with why) where the stored data does not say."""

from __future__ import annotations

from datetime import datetime

from graph_service.views import CurrentSource, SourceTimes, TimeFact

NOT_READABLE = {
    "deleted": "the source is deleted",
    "inaccessible": "no such source is readable here",
    "moved_out_of_scope": "the source has moved out of the scope read",
}


def source_times(
    current: CurrentSource | None,
    whole: CurrentSource | None,
    availability: str,
    result_id: str,
    captured_at: datetime,
) -> SourceTimes:
    """current: the source as it is now (None unless readable here); whole: the version read
    (a snapshot: the version the reference saved, when it is kept); result_id, captured_at: the
    review result that saved the fragment, and when it was recorded."""
    captured = TimeFact(
        captured_at, f"when review result {result_id}, which saved the fragment, was recorded"
    )
    if current is None:
        why = NOT_READABLE.get(availability, "the source is not readable here")
        unknown = TimeFact(None, f"not known: {why}")
        return SourceTimes(unknown, unknown, captured)
    message = current.node_id is not None
    if message and current.first_written_at is not None:
        created = TimeFact(
            current.first_written_at, "when the message's first revision was written"
        )
    else:
        created = TimeFact(
            None,
            "not known: only the current revision of a recorded source is kept, not when it "
            "was first written",
        )
    if whole is not None and whole.written_at is not None:
        what = "message" if message else "source (RecordSource)"
        updated = TimeFact(
            whole.written_at, f"when revision {whole.revision} of the {what} was written"
        )
    else:
        updated = TimeFact(
            None,
            "not known: the version the reference saved is unknown or no longer kept",
        )
    return SourceTimes(created, updated, captured)
