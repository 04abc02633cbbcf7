"""The tree service's stores, one per aggregate, over the node core and the primary's pool."""

from __future__ import annotations

from dataclasses import dataclass

from mirrortree import neighbourhoods
from tree_service.access.store import AccessStore
from tree_service.buds.store import BudStore
from tree_service.canon.main_line import MainLineStore
from tree_service.canon.reviews import CanonReviewStore
from tree_service.citations.store import CitationStore
from tree_service.context_assembly.store import ContextStore
from tree_service.conversation.store import ConversationStore
from tree_service.costs.compare import ComparisonStore
from tree_service.costs.store import CostStore
from tree_service.ingestion.statistics import GraphStatistics
from tree_service.ingestion.store import IngestionStore
from tree_service.lifecycle.merge_store import MergeStore
from tree_service.lifecycle.purge_store import PurgeStore
from tree_service.lifecycle.store import LifecycleStore
from tree_service.lifecycle.transplant_store import TransplantStore
from tree_service.nodes.store import NodeStore
from tree_service.primary import Primary
from tree_service.realms.store import RealmStore
from tree_service.tasks.store import TaskStore
from tree_service.tasks.watch import EventHub


@dataclass(frozen=True)
class Stores:
    primary: Primary
    nodes: NodeStore
    conversation: ConversationStore
    main_lines: MainLineStore
    buds: BudStore
    ingestion: IngestionStore
    graph_statistics: GraphStatistics
    access: AccessStore
    realms: RealmStore
    contexts: ContextStore
    citations: CitationStore
    lifecycle: LifecycleStore
    canon_reviews: CanonReviewStore
    merges: MergeStore
    transplants: TransplantStore
    costs: CostStore
    comparisons: ComparisonStore
    purges: PurgeStore
    tasks: TaskStore
    watch: EventHub

    @classmethod
    def over(cls, primary: Primary, hub_links: int = neighbourhoods.DEFAULT_HUB_LINKS) -> Stores:
        pool = primary.pool
        ingestion = IngestionStore(primary, hub_links)
        return cls(
            primary=primary,
            nodes=NodeStore(pool),
            conversation=ConversationStore(),
            main_lines=MainLineStore(pool, ingestion),
            buds=BudStore(primary),
            ingestion=ingestion,
            graph_statistics=GraphStatistics(pool),
            access=AccessStore(),
            realms=RealmStore(pool),
            contexts=ContextStore(pool),
            citations=CitationStore(pool),
            lifecycle=LifecycleStore(pool),
            canon_reviews=CanonReviewStore(pool),
            merges=MergeStore(pool),
            transplants=TransplantStore(pool),
            costs=CostStore(pool),
            comparisons=ComparisonStore(),
            purges=PurgeStore(pool),
            tasks=TaskStore(pool),
            watch=EventHub(pool),
        )
