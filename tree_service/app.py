"""Composition of the tree service: pool, migrations, servicer, gRPC server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

import asyncpg
import grpc

from mirrortree import counters, poolmetrics
from mirrortree.callers import CallerInterceptor
from mirrortree.limits import ConcurrencyLimit
from mirrortree.server import RunningServer, serve_metrics, start_server
from mirrortree.v1 import tree_pb2, tree_pb2_grpc
from tree_service.buds.committer import ChunkCommitter
from tree_service.buds.store import BUD_LEASE_S, BudStore
from tree_service.config import Settings
from tree_service.ingestion.store import IngestionStore
from tree_service.migrate import migrate
from tree_service.ownership import TreeOwners
from tree_service.primary import Primary
from tree_service.replays import Replays
from tree_service.servicer import TreeServicer
from tree_service.stored_responses import strip_stored
from tree_service.stores import Stores
from tree_service.tasks.store import TaskStore

log = logging.getLogger("tree_service")
# How often tasks past their deadline that nobody works on are stopped.
TASK_SWEEP_S = 5.0
SERVICE_NAME = tree_pb2.DESCRIPTOR.services_by_name["TreeService"].full_name


@dataclass
class TreeService:
    """A running tree service; `stop()` drains RPCs, then closes the pool."""

    rpc: RunningServer
    stores: Stores
    chunks: ChunkCommitter
    servicer: TreeServicer
    grace_s: float
    sweeper: asyncio.Task[None] | None = None
    task_sweeper: asyncio.Task[None] | None = None
    # Makes hubs of the objects a lower threshold than the last one applied covers; done in
    # the background, while serving (hubs change how fast a context is read, not what it says).
    hub_catch_up: asyncio.Task[int] | None = None

    @property
    def port(self) -> int:
        return self.rpc.port

    async def stop(self) -> None:
        for task in (self.sweeper, self.hub_catch_up, self.task_sweeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self.rpc.stop(self.grace_s)
        await self.stores.graph_statistics.stop()
        await self.servicer.drain()  # buds cut off by the shutdown are frozen, not left open
        await self.chunks.stop()
        await self.stores.primary.close()


async def run_migrations(dsn: str) -> list[int]:
    """Apply pending migrations on the primary (safe to run from several instances)."""
    conn = await asyncpg.connect(dsn)
    try:
        return await migrate(conn)
    finally:
        await conn.close()


async def start(settings: Settings) -> TreeService:
    """Migrate (if configured), connect and start serving."""
    if settings.migrate:
        applied = await run_migrations(settings.migration_dsn or settings.dsn)
        log.info("migrations checked", extra={"applied": applied})
    primary = await Primary.connect(settings.dsn, settings.pool_min, settings.pool_max)
    stores = Stores.over(primary, settings.hub_links)
    chunks = ChunkCommitter(primary)
    try:
        if await primary.is_replica():
            raise RuntimeError("MIRRORTREE_TREE_DSN points at a replica; writes need the primary")
        stripped = await strip_old_responses(primary)
        if stripped:
            log.info("stripped stored responses of their words", extra={"responses": stripped})
        chunks.start()
        servicer = TreeServicer(stores, chunks=chunks, refill=Replays(stores))
        rpc = await start_server(
            service="tree_service",
            listen=settings.listen,
            register=lambda server: tree_pb2_grpc.add_TreeServiceServicer_to_server(
                servicer, server
            ),
            service_names=[SERVICE_NAME],
            interceptors=service_interceptors(settings, primary),
        )
    except BaseException:
        await chunks.stop()
        await primary.close()
        raise
    counters.register(rpc.metrics.registry)
    poolmetrics.register(rpc.metrics.registry, lambda: [("primary", primary.pool)])
    serve_metrics(settings.metrics, rpc.metrics)
    log.info("tree_service serving", extra={"port": rpc.port})
    service = TreeService(rpc, stores, chunks, servicer, settings.shutdown_grace_s)
    service.sweeper = asyncio.create_task(sweep_lost_buds(stores.buds), name="bud-sweeper")
    service.hub_catch_up = asyncio.create_task(catch_up_hubs(stores.ingestion), name="hub-catch-up")
    service.task_sweeper = asyncio.create_task(sweep_overdue_tasks(stores.tasks), name="tasks")
    return service


def service_interceptors(settings: Settings, primary: Primary) -> list[grpc.aio.ServerInterceptor]:
    """The concurrency limit, and caller authentication unless no callers are configured."""
    limit: list[grpc.aio.ServerInterceptor] = [ConcurrencyLimit(settings.max_concurrent_rpcs)]
    if not settings.callers:
        log.warning("no callers configured: TreeService accepts every caller (development)")
        return limit
    owners = TreeOwners(primary.pool)
    guard = CallerInterceptor(
        settings.callers, settings.confirmation_secret, owners, owners.subject_of
    )
    return [guard, *limit]


async def strip_old_responses(primary: Primary) -> int:
    """Strip the responses stored before this build (or by an earlier one during an upgrade)
    of the words a purge may forget, a batch per transaction; how many."""
    total = 0
    while True:
        async with primary.pool.acquire() as conn, conn.transaction():
            done = await strip_stored(conn, once=True)
        if not done:
            return total
        total += done


async def catch_up_hubs(store: IngestionStore) -> int:
    """Make hubs of the objects over the configured threshold that are not hubs yet (after a
    first start on an older database, or with a lower threshold); how many were made. A
    failure is logged and left for the next start: until then those objects are read live."""
    try:
        made = await store.apply_hub_threshold()
    except Exception:
        log.exception("making hubs failed; their contexts are read live until the next start")
        return 0
    if made:
        log.info("made hubs", extra={"hubs": made, "hub_links": store.hub_links})
    return made


async def sweep_lost_buds(store: BudStore, every_s: float = BUD_LEASE_S / 3) -> None:
    """Freeze buds whose stream died with another process (its lease ran out)."""
    while True:
        await asyncio.sleep(every_s)
        try:
            frozen = await store.freeze_expired_buds()
        except Exception:
            log.exception("sweeping lost buds failed; retrying")
            continue
        if frozen:
            log.warning("froze buds whose stream was lost", extra={"answer_ids": frozen})


async def sweep_overdue_tasks(store: TaskStore, every_s: float = TASK_SWEEP_S) -> None:
    """Stop delegated tasks whose deadline passed while no worker held them (T19)."""
    while True:
        await asyncio.sleep(every_s)
        try:
            stopped = await store.stop_overdue()
        except Exception:
            log.exception("sweeping overdue tasks failed; retrying")
            continue
        if stopped:
            log.info("stopped overdue tasks", extra={"tasks": stopped})
