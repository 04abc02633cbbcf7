"""Every task RPC names what is wrong with a bad request, field by field, and writes nothing;
ids that match nothing are NOT_FOUND."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest

from mirrortree.v1 import tasks_pb2
from tests.tree_service.helpers import ask, new_tree
from tests.tree_service.tasking import claim, refused, start, start_request

BAD = grpc.StatusCode.INVALID_ARGUMENT
MISSING = "00000000-0000-4000-8000-000000000000"
LEASE: dict[str, Any] = {"idempotency_key": "k-bad", "task_id": MISSING, "lease_token": MISSING}
UNKNOWN_STATE: Any = 99
COUNT = "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM task_reports)"


def past() -> str:
    return (datetime.now(UTC) - timedelta(minutes=1)).isoformat()


def far() -> str:
    return (datetime.now(UTC) + timedelta(days=31)).isoformat()


def budget(**fields: Any) -> tasks_pb2.TaskBudget:
    values: dict[str, Any] = {"tokens": 10, "cost_micros": 10, "currency": "EUR"}
    values.update(fields)
    return tasks_pb2.TaskBudget(**values)


START_CASES = [
    ({"goal": ""}, "goal"),
    ({"goal": "x" * 20_001}, "goal"),
    ({"budget": None}, "budget"),
    ({"budget": budget(tokens=0)}, "budget.tokens"),
    ({"budget": budget(cost_micros=-1)}, "budget.cost_micros"),
    ({"budget": budget(currency="euro")}, "budget.currency"),
    ({"deadline": ""}, "deadline"),
    ({"deadline": "2030-01-01T00:00:00"}, "deadline"),
    ({"deadline": "past"}, "deadline"),
    ({"deadline": "far"}, "deadline"),
    ({"capability_scope": []}, "capability_scope"),
    ({"capability_scope": ["a", "a"]}, "capability_scope"),
    ({"capability_scope": [""]}, "capability_scope[0]"),
    ({"data_scope": ["x" * 501]}, "data_scope[0]"),
    ({"stop_conditions": ["s"] * 21}, "stop_conditions"),
    ({"max_consecutive_failures": 0}, "max_consecutive_failures"),
    ({"max_consecutive_failures": 101}, "max_consecutive_failures"),
    ({"started_by": ""}, "started_by"),
    ({"idempotency_key": ""}, "idempotency_key"),
    ({"branch_node_id": ""}, "branch_node_id"),
    ({"estimate_id": "not-an-estimate"}, "estimate_id"),  # an id, but not a UUID
]


@pytest.mark.parametrize(("fields", "field"), START_CASES, ids=[c[1] for c in START_CASES])
async def test_a_bad_start_names_its_field_and_writes_nothing(tree_stub, db, fields, field):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    values = dict(fields)
    if values.get("deadline") == "past":
        values["deadline"] = past()
    elif values.get("deadline") == "far":
        values["deadline"] = far()
    node = values.pop("branch_node_id", question.id)
    request = start_request(node, **{k: v for k, v in values.items() if v is not None})
    if "budget" in values and values["budget"] is None:
        request.ClearField("budget")
    before = tuple(await db.fetchrow(COUNT))
    failure = await refused(tree_stub.StartTask(request), BAD, "invalid_argument")
    assert field in [v.field for v in failure.violations], failure
    assert tuple(await db.fetchrow(COUNT)) == before


async def test_a_start_on_a_node_that_does_not_exist_is_not_found(tree_stub):
    await refused(start(tree_stub, MISSING), grpc.StatusCode.NOT_FOUND, "not_found")
    failure = await refused(start(tree_stub, "not-a-uuid"), BAD, "invalid_argument")
    assert [v.field for v in failure.violations] == ["branch_node_id"]


def claim_request(**fields: Any) -> tasks_pb2.ClaimTaskRequest:
    values: dict[str, Any] = {"idempotency_key": "k-claim", "worker_id": "w", "lease_seconds": 30}
    values.update(fields)
    return tasks_pb2.ClaimTaskRequest(**values)


CASES = [
    ("ClaimTask", claim_request(worker_id=""), "worker_id"),
    ("ClaimTask", claim_request(lease_seconds=4), "lease_seconds"),
    ("ClaimTask", claim_request(lease_seconds=601), "lease_seconds"),
    ("ClaimTask", claim_request(tree_id="x"), "tree_id"),
    ("ClaimTask", claim_request(branch_node_id="x"), "branch_node_id"),
    ("ClaimTask", claim_request(capabilities=["a", "a"]), "capabilities"),
    ("ClaimTask", claim_request(idempotency_key=""), "idempotency_key"),
    ("HeartbeatTask", tasks_pb2.HeartbeatTaskRequest(**{**LEASE, "task_id": ""}), "task_id"),
    (
        "HeartbeatTask",
        tasks_pb2.HeartbeatTaskRequest(**{**LEASE, "lease_token": ""}),
        "lease_token",
    ),
    ("ReportTaskProgress", tasks_pb2.ReportTaskProgressRequest(**LEASE), "message"),
    (
        "ReportTaskProgress",
        tasks_pb2.ReportTaskProgressRequest(
            **LEASE, message="m", spend=tasks_pb2.TaskSpend(tokens=-1)
        ),
        "spend.tokens",
    ),
    (
        "ReportTaskProgress",
        tasks_pb2.ReportTaskProgressRequest(**LEASE, message="m", evidence=[""]),
        "evidence[0]",
    ),
    ("CompleteTask", tasks_pb2.CompleteTaskRequest(**LEASE), "result"),
    (
        "CompleteTask",
        tasks_pb2.CompleteTaskRequest(
            **LEASE, result="r", spend=tasks_pb2.TaskSpend(cost_micros=-5)
        ),
        "spend.cost_micros",
    ),
    ("FailTask", tasks_pb2.FailTaskRequest(**LEASE), "message"),
    ("GetTask", tasks_pb2.GetTaskRequest(task_id=""), "task_id"),
    ("ListTasks", tasks_pb2.ListTasksRequest(tree_id=""), "tree_id"),
    ("ListTasks", tasks_pb2.ListTasksRequest(tree_id=MISSING, page_size=501), "page_size"),
    ("ListTasks", tasks_pb2.ListTasksRequest(tree_id=MISSING, states=[UNKNOWN_STATE]), "states[0]"),
    ("ListTasks", tasks_pb2.ListTasksRequest(tree_id=MISSING, page_token="x"), "page_token"),
    (
        "InstructTask",
        tasks_pb2.InstructTaskRequest(
            idempotency_key="k",
            task_id=MISSING,
            instruction=tasks_pb2.TASK_RESUME,
            instructed_by="u",
        ),
        "expected_revision",
    ),
    (
        "InstructTask",
        tasks_pb2.InstructTaskRequest(
            idempotency_key="k", task_id=MISSING, expected_revision=1, instructed_by="u"
        ),
        "instruction",
    ),
    (
        "InstructTask",
        tasks_pb2.InstructTaskRequest(
            idempotency_key="k",
            task_id=MISSING,
            expected_revision=1,
            instruction=tasks_pb2.TASK_CANCEL,
            budget=budget(),
            instructed_by="u",
        ),
        "instruction",
    ),
    (
        "InstructTask",
        tasks_pb2.InstructTaskRequest(
            idempotency_key="k",
            task_id=MISSING,
            expected_revision=1,
            instruction=tasks_pb2.TASK_RESUME,
            budget=budget(currency="E"),
            instructed_by="u",
        ),
        "budget.currency",
    ),
    (
        "InstructTask",
        tasks_pb2.InstructTaskRequest(
            idempotency_key="k",
            task_id=MISSING,
            expected_revision=1,
            instruction=tasks_pb2.TASK_RESUME,
        ),
        "instructed_by",
    ),
    (
        "AcceptObservation",
        tasks_pb2.AcceptObservationRequest(idempotency_key="k", task_id=MISSING),
        "accepted_by",
    ),
    (
        "AcceptObservation",
        tasks_pb2.AcceptObservationRequest(idempotency_key="k", task_id="x", accepted_by="u"),
        "task_id",
    ),
]


@pytest.mark.parametrize(
    ("method", "request_", "field"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES]
)
async def test_every_task_rpc_names_the_bad_field(tree_stub, db, method, request_, field):
    before = tuple(await db.fetchrow(COUNT))
    failure = await refused(getattr(tree_stub, method)(request_), BAD, "invalid_argument")
    assert field in [v.field for v in failure.violations], failure
    assert tuple(await db.fetchrow(COUNT)) == before


WORKER_CALLS = ["HeartbeatTask", "ReportTaskProgress", "CompleteTask", "FailTask"]


@pytest.mark.parametrize("method", WORKER_CALLS)
async def test_a_worker_call_on_a_task_that_does_not_exist_is_not_found(tree_stub, method):
    request_type = getattr(tasks_pb2, f"{method.removesuffix('Task')}TaskRequest", None)
    request_type = request_type or getattr(tasks_pb2, f"{method}Request")
    request = request_type(**LEASE)
    for text_field in ("message", "result"):
        if text_field in request.DESCRIPTOR.fields_by_name:
            setattr(request, text_field, "x")
    request.idempotency_key = f"k-{method}"
    await refused(getattr(tree_stub, method)(request), grpc.StatusCode.NOT_FOUND, "not_found")


async def test_reads_and_user_actions_on_missing_tasks_are_not_found(tree_stub):
    nf = grpc.StatusCode.NOT_FOUND
    await refused(tree_stub.GetTask(tasks_pb2.GetTaskRequest(task_id=MISSING)), nf, "not_found")
    await refused(tree_stub.ListTasks(tasks_pb2.ListTasksRequest(tree_id=MISSING)), nf, "not_found")
    await refused(
        tree_stub.InstructTask(
            tasks_pb2.InstructTaskRequest(
                idempotency_key="k-instruct-missing",
                task_id=MISSING,
                expected_revision=1,
                instruction=tasks_pb2.TASK_CANCEL,
                instructed_by="u",
            )
        ),
        nf,
        "not_found",
    )
    await refused(
        tree_stub.AcceptObservation(
            tasks_pb2.AcceptObservationRequest(
                idempotency_key="k-accept-missing", task_id=MISSING, accepted_by="u"
            )
        ),
        nf,
        "not_found",
    )


async def test_an_unfinished_tasks_observation_cannot_be_accepted(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id)
    task = await start(tree_stub, question.id)
    await claim(tree_stub, tree.id)
    await refused(
        tree_stub.AcceptObservation(
            tasks_pb2.AcceptObservationRequest(
                idempotency_key=f"k-{task.id}", task_id=task.id, accepted_by="u"
            )
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "failed_precondition",
    )
