"""Prometheus metrics of the read tier: each replica's state, lag, reads in flight and served,
and what the context neighbourhood cache holds.

Read from the router when scraped, so the figures are never older than its last health check.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from graph_service.neighbourhood import NeighbourhoodCache
from graph_service.replicas import ReplicaRouter


class ReplicaCollector(Collector):
    """Per-replica series, labelled by the replica's name (replicaN, N its position in
    MIRRORTREE_GRAPH_REPLICA_DSNS)."""

    def __init__(self, router: ReplicaRouter) -> None:
        self._router = router

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "mirrortree_replica_up",
            "1 when the replica answers and takes reads",
            labels=["replica"],
        )
        eligible = GaugeMetricFamily(
            "mirrortree_replica_eligible",
            "1 when the replica is up and within the lag bounds (takes reads without a token)",
            labels=["replica"],
        )
        lag = GaugeMetricFamily(
            "mirrortree_replica_lag_bytes",
            "WAL bytes the replica has yet to replay, behind the primary's current position (its "
            "last known one while unreachable; never less than the furthest any replica received)",
            labels=["replica"],
        )
        replay_age = GaugeMetricFamily(
            "mirrortree_replica_replay_age_seconds",
            "Seconds since the commit the replica last replayed was made (absent when it has "
            "replayed none since it started)",
            labels=["replica"],
        )
        inflight = GaugeMetricFamily(
            "mirrortree_replica_inflight_reads", "Reads running on the replica", labels=["replica"]
        )
        served = CounterMetricFamily(
            "mirrortree_replica_reads", "Reads the replica answered", labels=["replica"]
        )
        lost = CounterMetricFamily(
            "mirrortree_replica_lost",
            "Times the replica was found gone (a failed check or a read that failed over)",
            labels=["replica"],
        )
        for replica in self._router.replicas:
            name = [replica.name]
            up.add_metric(name, 1.0 if replica.healthy else 0.0)
            eligible.add_metric(name, 1.0 if self._router.eligible(replica) else 0.0)
            lag.add_metric(name, float(replica.lag_bytes))
            age = self._router.replay_age(replica)
            if replica.healthy and age is not None:
                replay_age.add_metric(name, age)
            inflight.add_metric(name, float(replica.inflight))
            served.add_metric(name, float(replica.served))
            lost.add_metric(name, float(replica.lost))
        yield from (up, eligible, lag, replay_age, inflight, served, lost)
        yield GaugeMetricFamily(
            "mirrortree_graph_primary_unreachable_seconds",
            "How long the primary, which replica lag is measured against, has not answered (0 "
            "while it answers or when none is configured)",
            value=self._router.primary_unreachable_s or 0.0,
        )


class CacheCollector(Collector):
    """The neighbourhood cache's size: how much of the service's memory is there by design."""

    def __init__(self, cache: NeighbourhoodCache) -> None:
        self._cache = cache

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "mirrortree_graph_context_cache_bytes",
            "Memory the context neighbourhood cache holds (estimated; its bound is "
            "MIRRORTREE_GRAPH_CONTEXT_CACHE_MB)",
            value=float(self._cache.held_bytes),
        )
        yield GaugeMetricFamily(
            "mirrortree_graph_context_cache_objects",
            "Objects whose neighbourhood the context cache holds",
            value=float(len(self._cache)),
        )


def register(registry: CollectorRegistry, router: ReplicaRouter, cache: NeighbourhoodCache) -> None:
    registry.register(ReplicaCollector(router))
    registry.register(CacheCollector(cache))
