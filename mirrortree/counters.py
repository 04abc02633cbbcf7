"""Process-wide counters of the tree service's work: buds and story-graph ingestion.

They live in their own registry, which every tree_service metrics endpoint also serves
(mirrortree.server.serve_metrics), so the code that counts needs no handle on a server.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry()

CHUNKS_ACKNOWLEDGED = Counter(
    "mirrortree_bud_chunks_acknowledged",
    "Bud chunks stored and acknowledged to the stream (a re-sent chunk counts once)",
    registry=REGISTRY,
)
BUDS_ENDED = Counter(
    "mirrortree_buds_ended",
    "Buds that ended, by state (sealed or frozen) and stop reason",
    ["state", "reason"],
    registry=REGISTRY,
)
REVIEW_RESULTS = Counter(
    "mirrortree_review_results_recorded",
    "RecordReview calls acknowledged (an idempotent retry counts again)",
    registry=REGISTRY,
)
REVIEW_OBJECTS = Counter(
    "mirrortree_review_objects_ingested",
    "Story-graph objects in acknowledged RecordReview calls",
    registry=REGISTRY,
)


class _Shared(Collector):
    """Yields the shared registry's series from a server's own registry."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def register(registry: CollectorRegistry) -> None:
    """Serve these counters from `registry` too (tree_service's metrics endpoint)."""
    registry.register(_Shared())
