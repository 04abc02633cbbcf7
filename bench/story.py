"""The benchmark's story graph: review results shaped like real ones, generated deterministically.

Every result but the first is a run of *units*; one unit is what a review makes of 20 messages:

    20 events       dated over one year in review order (every 10th time unknown); each one
                    involves one entity and cites the source reference of its message group
     5 source refs  one per 4 events: the saved message fragment they were read from
     2 leaf facts   one about the unit's first decision, one about an entity (time unknown)
     1 change       of an event's entity during that event ("completed" in every 5th unit)
     2 relations    the second decision REPLACES the first (with a reason and evidence), and
                    two discussions CONTRAST

= 30 searchable objects. The first result records the entities, one per 1,000 events, so each
entity is a hub that about 1,000 events, 50 changes and 50 leaf facts link to, whatever the
total size. Object ids are scrambled (like the UUIDs real reviews use), so id order, which is
search and tie order, says nothing about time or result.

Search terms are spread over all objects by a hash of the object's serial number: "status" in
every object, "harbor" in 5 %, "zephyr" in 0.1 %. Events carry them in the title and, for half
of them, in the description too (so they rank in the title+body tier); the other types carry them
in their text (body).
"""

from __future__ import annotations

import math
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bench.baselines import ObjectKey
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, tree_pb2

PROJECT = "bench"
TERMS = {"rare": "zephyr", "medium": "harbor", "common": "status"}
MEDIUM_EVERY = 20
RARE_EVERY = 1_000

EVENTS_PER_UNIT = 20
EVENTS_PER_SOURCE = 4
OBJECTS_PER_UNIT = 30
EVENTS_PER_ENTITY = 1_000
UNDATED_EVERY = 10  # events whose event time is unknown: serial % 10 == 7
FIRST_DAY = datetime(2025, 10, 1, tzinfo=UTC)
SPAN = timedelta(days=365)
# One month, one week and one day of the year, for time-filtered reads.
MONTH = ("2026-03-01T00:00:00Z", "2026-03-31T23:59:59Z")
WEEK = ("2026-03-09T00:00:00Z", "2026-03-15T23:59:59Z")
DAY = ("2026-03-11T00:00:00Z", "2026-03-11T23:59:59Z")

_NAMESPACE = uuid.UUID("6b0c7d0e-52f4-4a43-9f0c-3b6f5b0a1d10")


def scrambled(prefix: str, n: int) -> str:
    """A stable id whose sort order is unrelated to n (a bijective 32-bit mix, like a UUID)."""
    return f"{prefix}-{(n * 2654435761) & 0xFFFFFFFF:08x}"


def event_id(g: int) -> str:
    return scrambled("ev", g)


def event_ref(g: int) -> common_pb2.ObjectRef:
    return common_pb2.ObjectRef(type=common_pb2.EVENT, id=event_id(g))


def entity_id(k: int) -> str:
    return scrambled("ent", k)


def source_id(s: int) -> str:
    return scrambled("src", s)


def words(serial: int) -> str:
    """The search terms object number `serial` carries."""
    h = zlib.crc32(serial.to_bytes(8, "little"))
    found = [TERMS["common"]]
    if h % MEDIUM_EVERY == 0:
        found.append(TERMS["medium"])
    if h % RARE_EVERY == 0:
        found.append(TERMS["rare"])
    return " ".join(found)


def rfc3339(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class StoryPlan:
    """How many of what, and the ids the benchmark cases read."""

    objects_wanted: int
    per_result: int
    project: str = PROJECT  # the results' ids and idempotency keys start with it too

    @property
    def units(self) -> int:
        units = max(1, self.objects_wanted // OBJECTS_PER_UNIT)
        return max(1, (self.objects_wanted - self._entities_for(units)) // OBJECTS_PER_UNIT)

    @staticmethod
    def _entities_for(units: int) -> int:
        return max(1, math.ceil(units * EVENTS_PER_UNIT / EVENTS_PER_ENTITY))

    @property
    def entities(self) -> int:
        return self._entities_for(self.units)

    @property
    def events(self) -> int:
        return self.units * EVENTS_PER_UNIT

    @property
    def objects(self) -> int:
        return self.entities + self.units * OBJECTS_PER_UNIT

    @property
    def units_per_result(self) -> int:
        return max(1, self.per_result // OBJECTS_PER_UNIT)

    @property
    def results(self) -> int:
        return 1 + math.ceil(self.units / self.units_per_result)

    def result_id(self, r: int) -> str:
        return f"{self.project}-{r:05d}"

    @property
    def result_ids(self) -> list[str]:
        return [self.result_id(r) for r in range(self.results)]

    def entity_of(self, g: int) -> int:
        """The entity event g involves: spread by a hash, so each has about 1,000 events."""
        return zlib.crc32(g.to_bytes(8, "big")) % self.entities

    def event_time(self, g: int) -> datetime | None:
        if g % UNDATED_EVERY == 7:
            return None
        minutes = (g * 37) % 600  # a little disorder within a day
        return FIRST_DAY + SPAN * (g / self.events) + timedelta(minutes=minutes)

    # ---- the objects the cases read -----------------------------------------------------

    @property
    def hub_entity(self) -> str:
        return entity_id(0)

    @property
    def related_event(self) -> str:
        """The first decision of the middle unit: REPLACES points at it, a leaf fact is about
        it, and it involves a hub entity."""
        return event_id((self.units // 2) * EVENTS_PER_UNIT)

    @property
    def hub_entities(self) -> list[str]:
        """Every entity: each is a hub of about 1,000 events."""
        return [entity_id(k) for k in range(self.entities)]

    @property
    def related_events(self) -> list[str]:
        """The first decision of every unit (each has relations, like related_event)."""
        return [event_id(u * EVENTS_PER_UNIT) for u in range(self.units)]

    @property
    def source_reference(self) -> str:
        return source_id((self.units // 2) * (EVENTS_PER_UNIT // EVENTS_PER_SOURCE))

    @property
    def point_key(self) -> ObjectKey:
        """One stored event, for the raw point query."""
        return ObjectKey(self.result_id(1), "event", event_id(1))

    # ---- results ------------------------------------------------------------------------

    def requests(self) -> Iterator[tuple[int, tree_pb2.RecordReviewRequest]]:
        """(object count, request) per result, lazily; the entities' result comes first."""
        yield self.entities, self._request(0, entities=self._entities(), first=0, last=0)
        for r in range(1, self.results):
            first = (r - 1) * self.units_per_result
            last = min(self.units, first + self.units_per_result)
            request = self._request(r, entities=[], first=first, last=last)
            yield (last - first) * OBJECTS_PER_UNIT, request

    def _serial(self, unit: int, slot: int) -> int:
        return self.entities + unit * OBJECTS_PER_UNIT + slot

    def _entities(self) -> list[tree_pb2.EntityInput]:
        return [
            tree_pb2.EntityInput(
                id=entity_id(k),
                label=f"{words(k)} component {k}",
                description=f"Component {k} of the product, as the conversations describe it.",
                revision="1",
                confirmation_state=common_pb2.CONFIRMED,
            )
            for k in range(self.entities)
        ]

    def _time(self, g: int) -> common_pb2.EventTime:
        at = self.event_time(g)
        if at is None:
            return common_pb2.EventTime(basis="message_sent_at")
        return common_pb2.EventTime(
            start=rfc3339(at), precision=common_pb2.MINUTE, basis="message_sent_at", known=True
        )

    def _request(
        self, r: int, *, entities: list[tree_pb2.EntityInput], first: int, last: int
    ) -> tree_pb2.RecordReviewRequest:
        request = tree_pb2.RecordReviewRequest(
            idempotency_key=f"{self.project}-load-{r}",
            result_id=self.result_id(r),
            scope=project_scope([self.project]),
            phase="daily",
            entities=entities,
        )
        if first < last:
            start = self.event_time(first * EVENTS_PER_UNIT) or FIRST_DAY
            end = self.event_time(last * EVENTS_PER_UNIT - 1) or start
            generated = end + timedelta(hours=1)
            setattr(request.covered, "from", rfc3339(start))
            request.covered.to = rfc3339(end)
        else:
            generated = FIRST_DAY
        request.review_generated_at = rfc3339(generated)
        for unit in range(first, last):
            self._unit(request, unit)
        return request

    def _unit(self, request: tree_pb2.RecordReviewRequest, u: int) -> None:
        g0 = u * EVENTS_PER_UNIT
        s0 = u * (EVENTS_PER_UNIT // EVENTS_PER_SOURCE)

        def src(j: int) -> str:
            return source_id(s0 + j // EVENTS_PER_SOURCE)

        def ent(j: int) -> str:
            return entity_id(self.entity_of(g0 + j))

        slot = 0

        def terms() -> str:
            """The search terms of the unit's next object."""
            nonlocal slot
            slot += 1
            return words(self._serial(u, slot - 1))

        for i in range(EVENTS_PER_UNIT // EVENTS_PER_SOURCE):
            w = terms()
            fragment = f"Message {s0 + i} of the conversation, mentioning {w} and the next steps."
            request.source_references.append(
                tree_pb2.SourceReferenceInput(
                    id=source_id(s0 + i),
                    source_type="message",
                    source_id=str(uuid.uuid5(_NAMESPACE, str(s0 + i))),
                    source_version="1",
                    fragment=fragment,
                    fragment_start=120,
                    fragment_end=120 + len(fragment),
                    locator=common_pb2.SourceLocator(
                        project_id=self.project,
                        session_id=str(uuid.uuid5(_NAMESPACE, f"session-{u}")),
                        message_id=str(uuid.uuid5(_NAMESPACE, f"message-{s0 + i}")),
                        order=i,
                        role="user",
                        known=True,
                    ),
                )
            )
        for j in range(EVENTS_PER_UNIT):
            g = g0 + j
            w = terms()
            kind = (
                tree_pb2.DECISION
                if j % 10 == 0
                else tree_pb2.CHANGE
                if j % 10 == 5
                else tree_pb2.MILESTONE
                if j == EVENTS_PER_UNIT - 1
                else tree_pb2.DISCUSSION
            )
            description = f"What was said about item {g}"
            if g % 2 == 0:
                description += f" ({w})"
            request.events.append(
                tree_pb2.EventInput(
                    id=event_id(g),
                    kind=kind,
                    title=f"item {g}: {w}",
                    description=description + ", with some filler words about the plan.",
                    event_time=self._time(g),
                    confirmation_state=common_pb2.AUTO_GENERATED,
                    entity_ids=[ent(j)],
                    source_reference_ids=[src(j)],
                )
            )
        replaced, replacing = g0, g0 + 10
        new_time = self.event_time(replacing)
        replaces = tree_pb2.RelationInput(
            id=scrambled("rel", 2 * u),
            kind=tree_pb2.REPLACES,
            to=event_ref(replaced),
            reason=f"The later decision replaces the earlier one ({terms()}).",
            source_reference_ids=[src(10)],
            confirmation_state=common_pb2.AUTO_GENERATED,
            effective_at=rfc3339(new_time) if new_time else "",
        )
        getattr(replaces, "from").CopyFrom(event_ref(replacing))  # `from` is a Python keyword
        contrasts = tree_pb2.RelationInput(
            id=scrambled("rel", 2 * u + 1),
            kind=tree_pb2.CONTRASTS,
            to=event_ref(g0 + 3),
            reason=f"The two accounts differ ({terms()}).",
            confirmation_state=common_pb2.AUTO_GENERATED,
        )
        getattr(contrasts, "from").CopyFrom(event_ref(g0 + 13))
        request.relations.extend([replaces, contrasts])
        request.entity_changes.append(
            tree_pb2.EntityChangeInput(
                id=scrambled("chg", u),
                entity_id=ent(5),
                event_id=event_id(g0 + 5),
                change_type="completed" if u % 5 == 0 else "revised",
                description=f"The component changed ({terms()}).",
                applies_at=self._time(g0 + 5),
                source_reference_ids=[src(5)],
                confirmation_state=common_pb2.AUTO_GENERATED,
            )
        )
        request.leaf_facts.append(
            tree_pb2.LeafFactInput(
                id=scrambled("leaf", 2 * u),
                text=f"Fact about the decision: {terms()} was agreed.",
                about=[event_ref(g0)],
                source_reference_ids=[src(0)],
                event_time=self._time(g0),
                confirmation_state=common_pb2.AUTO_GENERATED,
            )
        )
        request.leaf_facts.append(
            tree_pb2.LeafFactInput(
                id=scrambled("leaf", 2 * u + 1),
                text=f"Fact about the component: {terms()} is tracked.",
                about=[common_pb2.ObjectRef(type=common_pb2.ENTITY, id=ent(7))],
                source_reference_ids=[src(7)],
                confirmation_state=common_pb2.AUTO_GENERATED,
            )
        )
        assert slot == OBJECTS_PER_UNIT
