"""The tree service's stores, one per aggregate, over one shared transactional core."""

from __future__ import annotations

from dataclasses import dataclass

from mirrortree import neighbourhoods
from tree_service.access.store import AccessStore
from tree_service.buds.store import BudStore
from tree_service.citations.store import CitationStore
from tree_service.context_assembly.store import ContextStore
from tree_service.conversation.main_line import MainLineStore
from tree_service.conversation.store import ConversationStore
from tree_service.costs.compare import ComparisonStore
from tree_service.costs.store import CostStore
from tree_service.ingestion.statistics import GraphStatistics
from tree_service.ingestion.store import IngestionStore
from tree_service.lifecycle.canon_store import CanonReviewStore
from tree_service.lifecycle.merge_store import MergeStore
from tree_service.lifecycle.purge_store import PurgeStore
from tree_service.lifecycle.store import LifecycleStore
from tree_service.lifecycle.transplant_store import TransplantStore
from tree_service.realms.store import RealmStore
from tree_service.store import TreeStore
from tree_service.tasks.store import TaskStore
from tree_service.tasks.watch import EventHub


@dataclass(frozen=True)
class Stores:
    core: TreeStore
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
    def over(cls, core: TreeStore, hub_links: int = neighbourhoods.DEFAULT_HUB_LINKS) -> Stores:
        ingestion = IngestionStore(core, hub_links)
        conversation = ConversationStore(core)
        return cls(
            core=core,
            conversation=conversation,
            main_lines=MainLineStore(core, ingestion),
            buds=BudStore(core, conversation),
            ingestion=ingestion,
            graph_statistics=GraphStatistics(core.pool),
            access=AccessStore(),
            realms=RealmStore(core),
            contexts=ContextStore(core),
            citations=CitationStore(core),
            lifecycle=LifecycleStore(core, conversation),
            canon_reviews=CanonReviewStore(core),
            merges=MergeStore(core, conversation),
            transplants=TransplantStore(core),
            costs=CostStore(core),
            comparisons=ComparisonStore(),
            purges=PurgeStore(core),
            tasks=TaskStore(core, conversation),
            watch=EventHub(core.pool),
        )
