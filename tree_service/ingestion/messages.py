"""Story-graph writes' answers as proto messages (their requests are checked by review_input and
source_input)."""

from __future__ import annotations

from mirrortree.protoscope import scope_to_proto
from mirrortree.timefmt import format_utc
from mirrortree.v1 import common_pb2, tree_pb2
from tree_service.domain import PreferenceRecord, RecordedReview, SourceRecord


def recorded_to_proto(recorded: RecordedReview) -> tree_pb2.RecordReviewResponse:
    return tree_pb2.RecordReviewResponse(
        result_id=recorded.result_id,
        recorded_at=format_utc(recorded.recorded_at),
        graph_revision=recorded.graph_revision,
        object_count=recorded.object_count,
    )


def source_record_to_proto(record: SourceRecord) -> tree_pb2.RecordSourceResponse:
    return tree_pb2.RecordSourceResponse(
        source_id=record.source_id,
        revision=record.revision,
        updated_at=format_utc(record.updated_at),
    )


def preference_to_proto(record: PreferenceRecord) -> tree_pb2.Preference:
    return tree_pb2.Preference(
        id=record.preference_id,
        scope=scope_to_proto(record.scope),
        subject=record.subject,
        text=record.text,
        about=[common_pb2.ObjectRef(type=a["type"].upper(), id=a["id"]) for a in record.about],
        confirmed_by=record.confirmed_by,
        revision=record.revision,
        updated_at=format_utc(record.updated_at),
    )
