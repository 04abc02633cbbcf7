"""The raw baselines that `bench.run` and `make load` set their figures against, measured in the
same run against the same deployment: an empty gRPC call (grpc.health.v1 Check, a round trip
with no work behind it) and a primary-key lookup in graph_objects through asyncpg, with no
service in between. A story-graph read pays at least one of each, so a figure as a multiple of
their sum says what the read costs beyond them on that host, where absolute figures are noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.measure import Case, Measured, measure

EMPTY_CALL = "empty gRPC call (health Check)"
POINT_QUERY = "raw asyncpg point query"
GRAPH_OBJECT = (
    "SELECT title FROM graph_objects WHERE result_id = $1 AND object_type = $2 AND object_id = $3"
)


@dataclass(frozen=True)
class ObjectKey:
    """The primary key of one graph object, for the point query."""

    result_id: str
    object_type: str
    object_id: str


@dataclass(frozen=True)
class Baseline:
    """One baseline of a deployment as measured, or why it was not."""

    target: str  # the service called, or the database server queried
    name: str
    measured: Measured | None = None
    not_measured: str = ""


def call_name(service: str) -> str:
    return f"{EMPTY_CALL} to {service}" if service else EMPTY_CALL


def query_name(server: str) -> str:
    return f"{POINT_QUERY} ({server})"


def empty_call(channel: grpc.aio.Channel, service: str = "", timeout: float | None = None) -> Case:
    health = health_pb2_grpc.HealthStub(channel)

    async def call() -> object:
        return await health.Check(health_pb2.HealthCheckRequest(), timeout=timeout)

    return Case(call_name(service), call)


def point_query(
    pool: asyncpg.Pool, key: ObjectKey, server: str, timeout: float | None = None
) -> Case:
    async def call() -> object:
        return await pool.fetchval(
            GRAPH_OBJECT, key.result_id, key.object_type, key.object_id, timeout=timeout
        )

    return Case(query_name(server), call)


def combined(empty: Measured, query: Measured | None) -> tuple[float, float]:
    """p50 ms and calls/s of an empty call and a point query one after the other (the empty
    call alone where no query was measured)."""
    if query is None:
        return empty.p50_ms, empty.rate
    return empty.p50_ms + query.p50_ms, 1 / (1 / empty.rate + 1 / query.rate)


async def measure_deployment(
    services: dict[str, str],
    databases: dict[str, str],
    key: ObjectKey,
    *,
    seconds: float,
    concurrency: int,
    call_timeout: float,
) -> list[Baseline]:
    """The empty call to each service (name -> host:port), then the point query on each
    database server (name -> DSN, "" where none was given). A baseline that fails is reported
    as not measured, with its error: it does not end the run it belongs to."""
    rows = []
    for service, address in services.items():
        name = call_name(service)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                case = empty_call(channel, service, call_timeout)
                rows.append(Baseline(service, name, await measure(case, seconds, concurrency)))
        except Exception as exc:
            rows.append(Baseline(service, name, not_measured=failure(exc)))
    for server, dsn in databases.items():
        name = query_name(server)
        if not dsn:
            rows.append(Baseline(server, name, not_measured="no DSN given"))
            continue
        try:
            pool = await asyncpg.create_pool(
                dsn, min_size=concurrency, max_size=concurrency, timeout=call_timeout
            )
            try:
                case = point_query(pool, key, server, call_timeout)
                rows.append(Baseline(server, name, await measure(case, seconds, concurrency)))
            finally:
                await pool.close()
        except Exception as exc:
            rows.append(Baseline(server, name, not_measured=failure(exc)))
    return rows


def failure(exc: Exception) -> str:
    if isinstance(exc, grpc.RpcError):
        return f"{exc.code().name}: {exc.details()}"
    return f"{type(exc).__name__}: {exc}"
