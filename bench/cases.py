"""The story-graph calls the benchmark measures, built against one graph_service."""

from __future__ import annotations

import itertools

from bench.measure import Call, Case
from bench.story import DAY, MONTH, TERMS, WEEK, StoryPlan
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc


class Reads:
    """The story-graph calls of the benchmark, against one graph_service."""

    def __init__(
        self,
        stub: graph_pb2_grpc.StoryGraphStub,
        plan: StoryPlan,
        metadata: list[tuple[str, str]] | None = None,  # a given deployment's binding
    ) -> None:
        self.stub = stub
        self.plan = plan
        self.scope = project_scope([plan.project])
        self.metadata = metadata

    def search(
        self,
        term: str,
        *,
        within: tuple[str, str] | None = None,
        types: tuple[common_pb2.ObjectType, ...] = (),
    ) -> graph_pb2.SearchRequest:
        request = graph_pb2.SearchRequest(
            query=term, scope=self.scope, object_types=list(types), time_basis=common_pb2.EVENT_TIME
        )
        if within:
            setattr(request.time_range, "from", within[0])
            request.time_range.to = within[1]
        return request

    def context(
        self,
        kind: common_pb2.ObjectType,
        object_id: str,
        mode: graph_pb2.ContextMode,
        cursor: str = "",
    ) -> graph_pb2.GetContextRequest:
        return graph_pb2.GetContextRequest(
            object_ref=common_pb2.ObjectRef(type=kind, id=object_id),
            scope=self.scope,
            mode=mode,
            page_size=10,
            cursor=cursor,
        )

    async def hub_events_cursor(self) -> str:
        """The cursor of the hub's second page of events (current mode)."""
        first = await self.stub.GetContext(
            self.context(common_pb2.ENTITY, self.plan.hub_entity, graph_pb2.CURRENT),
            metadata=self.metadata,
            timeout=120,
        )
        for collection in first.collections:
            if collection.name == "events":
                if not collection.page.next_cursor:
                    raise RuntimeError("the hub entity has a single page of events")
                return str(collection.page.next_cursor)
        raise RuntimeError("GetContext returned no events collection")

    async def cases(self) -> list[Case]:
        stub, plan, md = self.stub, self.plan, self.metadata

        def searching(request: graph_pb2.SearchRequest) -> Call:
            return lambda: stub.Search(request, metadata=md)

        def reading(request: graph_pb2.GetContextRequest) -> Call:
            return lambda: stub.GetContext(request, metadata=md)

        def reading_each(kind: common_pb2.ObjectType, ids: list[str]) -> Call:
            """Each call reads the next object: its neighbourhood is not cached yet. (Requests
            are made per call: tens of thousands held at once would burden this process's
            garbage collector, whose pauses the calls measured would include.)"""
            turn = itertools.count()
            return lambda: stub.GetContext(
                self.context(kind, ids[next(turn) % len(ids)], graph_pb2.CURRENT), metadata=md
            )

        source = graph_pb2.ReadSourceRequest(
            source_reference_id=plan.source_reference,
            scope=self.scope,
            read_kind=graph_pb2.SNAPSHOT,
        )
        month = f"{MONTH[0][:10]}..{MONTH[1][:10]}"
        return [
            *(
                Case(f"Search, {cls} term '{term}'", searching(self.search(term)), True)
                for cls, term in TERMS.items()
            ),
            *(
                Case(
                    f"Search, {cls} term, event time in one {length} ({dates})",
                    searching(self.search(TERMS[cls], within=within)),
                    True,
                )
                for length, within, dates in (
                    ("month", MONTH, month),
                    ("week", WEEK, f"{WEEK[0][:10]}..{WEEK[1][:10]}"),
                    ("day", DAY, DAY[0][:10]),
                )
                for cls in TERMS
            ),
            *(
                Case(
                    f"Search, {cls} term, object_types=[EVENT]",
                    searching(self.search(TERMS[cls], types=(common_pb2.EVENT,))),
                    True,
                )
                for cls in ("medium", "common")
            ),
            Case(
                "GetContext current, event with relations, first read (page_size 10)",
                reading_each(common_pb2.EVENT, plan.related_events),
                True,
            ),
            Case(
                "GetContext current, event with relations, read again (page_size 10)",
                reading(self.context(common_pb2.EVENT, plan.related_event, graph_pb2.CURRENT)),
                True,
            ),
            Case(
                "GetContext current, hub entity (~1,000 events), first read (page_size 10)",
                reading_each(common_pb2.ENTITY, plan.hub_entities),
                True,
            ),
            Case(
                "GetContext current, hub entity, read again (page_size 10)",
                reading(self.context(common_pb2.ENTITY, plan.hub_entity, graph_pb2.CURRENT)),
                True,
            ),
            Case(
                "GetContext timeline, hub entity (page_size 10)",
                reading(self.context(common_pb2.ENTITY, plan.hub_entity, graph_pb2.TIMELINE)),
                True,
            ),
            Case(
                "GetContext cursor: hub entity's events, page 2",
                reading(
                    self.context(
                        common_pb2.ENTITY,
                        plan.hub_entity,
                        graph_pb2.CURRENT,
                        await self.hub_events_cursor(),
                    )
                ),
                True,
            ),
            Case(
                "ReadSource snapshot of a source reference",
                lambda: stub.ReadSource(source, metadata=md),
                True,
            ),
        ]
