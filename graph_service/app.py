"""Composition of the graph service: replica router, store, servicer, gRPC server."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from graph_service import replica_metrics
from graph_service.config import Settings
from graph_service.cursors import CursorCodec
from graph_service.gate import Gate
from graph_service.replicas import ReplicaRouter
from graph_service.servicer import StoryGraphServicer
from graph_service.store import GraphStore
from mirrortree import poolmetrics
from mirrortree.limits import ConcurrencyLimit
from mirrortree.server import RunningServer, serve_metrics, start_server
from mirrortree.v1 import graph_pb2, graph_pb2_grpc

log = logging.getLogger("graph_service")
SERVICE_NAME = graph_pb2.DESCRIPTOR.services_by_name["StoryGraph"].full_name


@dataclass
class GraphService:
    """A running graph service; `stop()` drains RPCs, then closes the replica pools."""

    rpc: RunningServer
    router: ReplicaRouter
    gate: Gate
    grace_s: float

    @property
    def port(self) -> int:
        return self.rpc.port

    async def stop(self) -> None:
        await self.rpc.stop(self.grace_s)
        await self.gate.close()
        await self.router.close()


async def start(settings: Settings) -> GraphService:
    """Connect to the replicas (refusing a primary unless allowed) and start serving."""
    router = ReplicaRouter(
        settings.replica_dsns,
        allow_primary=settings.allow_primary,
        pool_max=settings.pool_max,
        health_interval_s=settings.health_interval_ms / 1000,
        max_lag_bytes=settings.max_lag_bytes,
        primary_dsn=settings.primary_dsn or settings.gate_dsn,
        primary_grace_s=settings.primary_grace_ms / 1000,
        max_replay_age_s=settings.max_replay_age_ms / 1000,
    )
    await router.start()
    gate: Gate | None = None
    try:
        gate = await Gate.connect(settings.gate_dsn, router.run)
        store = GraphStore(router, settings.consistency_wait_ms / 1000, settings.context_cache_mb)
        servicer = StoryGraphServicer(
            store, CursorCodec(settings.cursor_secret), gate, settings.anonymous_reads
        )
        rpc = await start_server(
            service="graph_service",
            listen=settings.listen,
            register=lambda server: graph_pb2_grpc.add_StoryGraphServicer_to_server(
                servicer, server
            ),
            service_names=[SERVICE_NAME],
            # The gateway re-checks every binding it has seen every couple of seconds.
            polled_methods=frozenset({"ResolveBinding"}),
            interceptors=[ConcurrencyLimit(settings.max_concurrent_rpcs)],
        )
    except BaseException:
        if gate is not None:
            await gate.close()
        await router.close()
        raise
    replica_metrics.register(rpc.metrics.registry, router, store.neighbourhoods)
    gate_pool = gate.pool
    poolmetrics.register(
        rpc.metrics.registry,
        lambda: [*((r.name, r.pool) for r in router.replicas), ("gate", gate_pool)],
    )
    serve_metrics(settings.metrics, rpc.metrics)
    log.info("graph_service serving", extra={"port": rpc.port})
    return GraphService(rpc, router, gate, settings.shutdown_grace_s)
