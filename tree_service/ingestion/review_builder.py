"""The builder that collects one review result's objects, links and the ends they name, and
the field readers every kind of object shares (tree_service.ingestion.review_input drives it)."""

from __future__ import annotations

from collections.abc import Iterable

from mirrortree.v1 import common_pb2, tree_pb2
from mirrortree.validation import shown
from mirrortree.vocabulary import CONFIRMATION_NAMES, PRECISION_NAMES
from tree_service import canon_projection
from tree_service.convert import Checker
from tree_service.domain import (
    MAX_GRAPH_TEXT,
    MAX_TITLE,
    EndReference,
    EventTimeValue,
    ObjectType,
    StoryObject,
)

# Result and object ids of main-line projections (W3); a review may refer to them only.
RESERVED_PREFIX = canon_projection.PREFIX
PREFERENCE = "preference"


def type_name(value: int) -> str | None:
    """The stored name of an object type ("event", "leaf_fact", "preference"), or None."""
    if value == common_pb2.OBJECT_TYPE_UNSPECIFIED or value not in common_pb2.ObjectType.values():
        return None
    return common_pb2.ObjectType.Name(value).lower()


def confirmation(check: Checker, field: str, value: int) -> str | None:
    """The stored name of a confirmation state; unset is None, an unknown value is refused
    (stored as unset it would read as "no state given", which the caller did not say)."""
    if value == common_pb2.CONFIRMATION_STATE_UNSPECIFIED:
        return None
    name = CONFIRMATION_NAMES.get(value)
    if name is None:
        check.fail(
            field,
            f"unknown confirmation state {value}: AUTO_GENERATED, CONFIRMED, USER_REVISED or "
            "RETRACTED (or unset)",
        )
    return name


def event_time(check: Checker, field: str, value: common_pb2.EventTime) -> EventTimeValue:
    """An event time with its precision and basis; no start means unknown (never filled in).

    What would be dropped on the way to storage is refused instead: an unknown precision, and
    a precision, end or `known` flag on a time whose start is not given."""
    check.text(f"{field}.basis", value.basis, 200, required=False)
    precision = PRECISION_NAMES.get(value.precision, "")
    if value.precision != common_pb2.TIME_PRECISION_UNSPECIFIED and not precision:
        check.fail(
            f"{field}.precision",
            f"unknown precision {value.precision}: INSTANT, MINUTE, HOUR, DAY, MONTH or YEAR "
            "(or unset)",
        )
    if not value.start:
        if value.end:
            check.fail(f"{field}.end", "is set but start is unknown")
        if value.known:
            check.fail(
                f"{field}.known",
                "is true but start is empty: a known time needs its start (an unknown time "
                "leaves start empty and known false)",
            )
        if precision:
            check.fail(f"{field}.precision", "is set but start is unknown")
        return EventTimeValue(basis=value.basis)
    start = check.time(f"{field}.start", value.start)
    end = check.time(f"{field}.end", value.end)
    if start and end and end < start:
        check.fail(f"{field}.end", "is before start")
    return EventTimeValue(start, end, precision, value.basis)


class ReviewBuilder:
    """Collects the objects of one result, their links and the ends they name."""

    def __init__(self, check: Checker, request: tree_pb2.RecordReviewRequest) -> None:
        self.check = check
        self.objects: list[StoryObject] = []
        self.seen: set[tuple[str, str]] = set()
        self.fields: dict[tuple[str, str], str] = {}
        self.references: list[EndReference] = []
        self.source_inputs: dict[str, tuple[int, tree_pb2.SourceReferenceInput]] = {}
        for i, ref in enumerate(request.source_references):
            self.source_inputs.setdefault(ref.id, (i, ref))

    def add(
        self, field: str, obj: StoryObject, *, title: str | None = None, body: str | None = None
    ) -> None:
        """Add one object. `title` and `body` name the request fields the object's title and
        body come from, so that a violation names what the caller sent; None means the text
        is derived from other fields or checked by the caller. An object whose title comes
        from a field needs that title or its body."""
        check = self.check
        check.identifier(f"{field}.id", obj.object_id)
        if obj.object_id.startswith(RESERVED_PREFIX):
            # Recording one would give a user-confirmed main-line object a new description.
            check.fail(
                f"{field}.id",
                f"ids starting with {RESERVED_PREFIX!r} are reserved for the projections of "
                "confirmed main-line versions: a review may refer to those objects but not "
                "record one",
            )
        if title is not None:
            check.text(f"{field}.{title}", obj.title, MAX_TITLE, required=False)
        if body is not None:
            check.text(f"{field}.{body}", obj.body, MAX_GRAPH_TEXT, required=False)
        if title is not None and not obj.title.strip() and not obj.body.strip():
            either = f"`{title}` or `{body}`" if body is not None else f"`{title}`"
            check.fail(f"{field}.{title}", f"must not be empty: the object needs {either}")
        key = (obj.object_type.value, obj.object_id)
        if key in self.seen:
            check.fail(f"{field}.id", f"duplicates another {obj.object_type.value} in this result")
        self.seen.add(key)
        self.fields.setdefault(key, field)
        self.objects.append(obj)

    def sources(self, field: str, ids: Iterable[str]) -> list[str]:
        """Source reference ids cited by an object; each must be a reference of this result."""
        ids = list(ids)
        for i, ref_id in enumerate(ids):
            if ref_id not in self.source_inputs:
                self.check.fail(
                    f"{field}[{i}]", f"names source reference {shown(ref_id)} not in this result"
                )
        return ids

    def reference(
        self, field: str, ref: common_pb2.ObjectRef, *, allow_preference: bool = False
    ) -> dict[str, str] | None:
        """An object named by type and stable id; existence is checked once all are known."""
        name = type_name(ref.type)
        if name is None:
            self.check.fail(f"{field}.type", "is required: the type of the object named")
            return None
        if name == PREFERENCE and not allow_preference:
            self.check.fail(
                f"{field}.type",
                "a preference can only be the `to` end of a contradicts relation: a review "
                "never replaces or revises what the user confirmed",
            )
            return None
        self.check.identifier(f"{field}.id", ref.id)
        self.references.append(EndReference(field, name, ref.id))
        return {"type": name, "id": ref.id}

    def by_id(
        self, field: str, object_type: str, object_id: str, *, id_field: str | None = None
    ) -> None:
        """An object named by id alone (its type is the field's); like `reference`, it must be
        in this result or in an earlier result of the same scope. `id_field` names the id
        when it is a part of `field` (`fact_refs[0].id`)."""
        self.check.identifier(id_field or field, object_id)
        self.references.append(EndReference(field, object_type, object_id))

    def external(self) -> tuple[EndReference, ...]:
        """Every field naming an object that is not in this result (the store checks those
        objects exist, and names each such field when one does not)."""
        return tuple(r for r in self.references if (r.object_type, r.object_id) not in self.seen)


def cites(ids: list[str]) -> list[tuple[str, str, str]]:
    return [("cites", ObjectType.SOURCE_REFERENCE.value, ref) for ref in ids]
