"""Builders for delegated-task tests: a task started, claimed and worked through TreeService."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest

from mirrortree.rpcstatus import RpcFailure, describe
from mirrortree.v1 import tasks_pb2
from tests.conftest import unique

CAPABILITIES = ("web_search", "model:small")


def in_future(**delta: float) -> str:
    return (datetime.now(UTC) + timedelta(**(delta or {"hours": 1}))).isoformat()


def start_request(branch_node_id: str, **fields: Any) -> tasks_pb2.StartTaskRequest:
    values: dict[str, Any] = {
        "idempotency_key": unique("k"),
        "branch_node_id": branch_node_id,
        "goal": "Find three sources on the harbour's history",
        "budget": tasks_pb2.TaskBudget(tokens=1_000, cost_micros=500_000, currency="EUR"),
        "deadline": in_future(),
        "capability_scope": ["web_search"],
        "data_scope": ["branch"],
        "stop_conditions": ["a source contradicts the question's premise"],
        "max_consecutive_failures": 3,
        "started_by": "user-1",
    }
    values.update(fields)
    return tasks_pb2.StartTaskRequest(**values)


async def start(stub, branch_node_id: str, **fields: Any) -> tasks_pb2.Task:
    response = await stub.StartTask(start_request(branch_node_id, **fields))
    task: tasks_pb2.Task = response.task
    return task


async def claim(stub, tree_id: str, worker: str = "w1", **fields: Any):
    values: dict[str, Any] = {
        "idempotency_key": unique("k"),
        "worker_id": worker,
        "capabilities": list(CAPABILITIES),
        "tree_id": tree_id,
        "lease_seconds": 60,
    }
    values.update(fields)
    return await stub.ClaimTask(tasks_pb2.ClaimTaskRequest(**values))


async def progress(stub, task_id: str, token: str, tokens: int = 0, **fields: Any):
    return await stub.ReportTaskProgress(
        tasks_pb2.ReportTaskProgressRequest(
            idempotency_key=unique("k"),
            task_id=task_id,
            lease_token=token,
            message=fields.pop("message", "read one source"),
            spend=tasks_pb2.TaskSpend(tokens=tokens, cost_micros=fields.pop("cost", 0)),
            **fields,
        )
    )


async def heartbeat(stub, task_id: str, token: str):
    return await stub.HeartbeatTask(
        tasks_pb2.HeartbeatTaskRequest(
            idempotency_key=unique("k"), task_id=task_id, lease_token=token
        )
    )


async def complete(stub, task_id: str, token: str, result: str = "Three sources", **fields: Any):
    return await stub.CompleteTask(
        tasks_pb2.CompleteTaskRequest(
            idempotency_key=unique("k"),
            task_id=task_id,
            lease_token=token,
            result=result,
            **fields,
        )
    )


async def get(stub, task_id: str, reports: bool = True) -> tasks_pb2.GetTaskResponse:
    response: tasks_pb2.GetTaskResponse = await stub.GetTask(
        tasks_pb2.GetTaskRequest(task_id=task_id, include_reports=reports)
    )
    return response


async def refused(call: Any, code: grpc.StatusCode, reason: str) -> RpcFailure:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (code, reason), failure
    assert failure.message
    return failure
