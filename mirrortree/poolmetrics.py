"""Prometheus gauges of the asyncpg connection pools a service holds, read when scraped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import asyncpg
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# (pool name, pool or None while it is not connected) for every pool the service holds now.
PoolLister = Callable[[], Iterable[tuple[str, asyncpg.Pool | None]]]


class PoolCollector(Collector):
    """Size, idle, in-use and maximum connections of each pool, labelled by its name."""

    def __init__(self, pools: PoolLister) -> None:
        self._pools = pools

    def collect(self) -> Iterator[Metric]:
        size = GaugeMetricFamily(
            "mirrortree_db_pool_size", "Connections the pool holds open", labels=["pool"]
        )
        idle = GaugeMetricFamily(
            "mirrortree_db_pool_idle", "Open connections waiting in the pool", labels=["pool"]
        )
        in_use = GaugeMetricFamily(
            "mirrortree_db_pool_in_use", "Connections acquired from the pool now", labels=["pool"]
        )
        maximum = GaugeMetricFamily(
            "mirrortree_db_pool_max", "Connections the pool may open at most", labels=["pool"]
        )
        for name, pool in self._pools():
            if pool is None or pool.is_closing():
                continue
            # Read from the metrics thread without the loop: plain counters, at worst one
            # acquisition stale.
            total, free = pool.get_size(), pool.get_idle_size()
            size.add_metric([name], float(total))
            idle.add_metric([name], float(free))
            in_use.add_metric([name], float(max(total - free, 0)))
            maximum.add_metric([name], float(pool.get_max_size()))
        yield from (size, idle, in_use, maximum)


def register(registry: CollectorRegistry, pools: PoolLister) -> None:
    registry.register(PoolCollector(pools))
