"""Who may do what with a delegated task: a worker only works it (claim, heartbeat, report,
complete, fail, read) and can never extend it; only the user's confirmation grant gives a task
new instructions or makes its observation an answer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio

from devtools.pgcluster import roles
from mirrortree import callers
from mirrortree.v1 import tasks_pb2, tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.tree_service.tasking import claim, complete, in_future, progress, refused, start
from tree_service import app as tree_app
from tree_service.config import Settings as TreeSettings

SECRET = b"task-confirmation-secret-0123456789abcd"
HOST = "task-host-token-0123456789"
WORKER = "task-worker-token-0123456"
ALICES = "alices-worker-token-012345"  # a worker serving alice's trees only
CALLERS = f"desk:host_app:{HOST},bee:worker:{WORKER},ant:worker:{ALICES}:alice"
DENIED = grpc.StatusCode.PERMISSION_DENIED


@pytest_asyncio.fixture(scope="module")
async def guarded_stub(cluster, tree_service) -> AsyncIterator[tree_pb2_grpc.TreeServiceStub]:
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),
            migrate=False,
            listen="127.0.0.1:0",
            callers=callers.parse_callers(CALLERS),
            confirmation_secret=SECRET,
        )
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
        yield tree_pb2_grpc.TreeServiceStub(channel)
    await service.stop()


def bearer(token: str, grant: str = "") -> tuple[tuple[str, str], ...]:
    metadata = (("authorization", f"Bearer {token}"),)
    return (*metadata, (callers.CONFIRMATION_HEADER, grant)) if grant else metadata


class As:
    """A stub that sends one caller's token (and grant) on every call."""

    def __init__(self, stub, token: str, grant: str = "") -> None:
        self._stub, self._metadata = stub, bearer(token, grant)

    def __getattr__(self, name: str):
        method = getattr(self._stub, name)
        return lambda request: method(request, metadata=self._metadata)


async def stopped_task(stub) -> tuple[str, tasks_pb2.Task, str]:
    host, worker = As(stub, HOST), As(stub, WORKER)
    tree = (
        await host.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="alice")
        )
    ).tree
    question = (
        await host.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree.id, text="q")
        )
    ).node
    task = await start(host, question.id)
    lease = await claim(worker, tree.id)
    stopped = await progress(worker, task.id, lease.lease_token, 1_000)
    assert stopped.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS
    return tree.id, stopped.task, lease.lease_token


def resume(task: tasks_pb2.Task, by: str = "user-1") -> tasks_pb2.InstructTaskRequest:
    return tasks_pb2.InstructTaskRequest(
        idempotency_key=unique("k"),
        task_id=task.id,
        expected_revision=task.revision,
        instruction=tasks_pb2.TASK_RESUME,
        budget=tasks_pb2.TaskBudget(tokens=5_000, cost_micros=500_000, currency="EUR"),
        deadline=in_future(hours=3),
        instructed_by=by,
    )


async def test_a_workers_attempt_to_extend_its_task_is_refused(guarded_stub):
    tree_id, task, _ = await stopped_task(guarded_stub)
    worker = As(guarded_stub, WORKER)
    await refused(worker.InstructTask(resume(task)), DENIED, "permission_denied")
    # Not with a grant it got hold of either: the role may not give instructions at all.
    grant = callers.issue_grant(SECRET, "instruct_task", tree_id, "user-1")
    await refused(
        As(guarded_stub, WORKER, grant).InstructTask(resume(task)), DENIED, "permission_denied"
    )
    # Nor start a wider task of its own, nor accept its own results.
    await refused(worker.StartTask(tasks_pb2.StartTaskRequest()), DENIED, "permission_denied")
    await refused(
        worker.AcceptObservation(tasks_pb2.AcceptObservationRequest(task_id=task.id)),
        DENIED,
        "permission_denied",
    )
    found = await worker.GetTask(tasks_pb2.GetTaskRequest(task_id=task.id))
    assert found.task.budget.tokens == 1_000
    assert found.task.state == tasks_pb2.TASK_NEEDS_INSTRUCTIONS


async def test_only_the_users_grant_gives_a_task_new_instructions(guarded_stub):
    tree_id, task, _ = await stopped_task(guarded_stub)
    host = As(guarded_stub, HOST)
    await refused(host.InstructTask(resume(task)), DENIED, "confirmation_required")
    wrong = callers.issue_grant(SECRET, "instruct_task", tree_id, "user-2")
    await refused(
        As(guarded_stub, HOST, wrong).InstructTask(resume(task)), DENIED, "confirmation_required"
    )
    grant = callers.issue_grant(SECRET, "instruct_task", tree_id, "user-1")
    resumed = await As(guarded_stub, HOST, grant).InstructTask(resume(task))
    assert resumed.task.state == tasks_pb2.TASK_QUEUED
    assert resumed.task.budget.tokens == 5_000


async def test_only_the_users_grant_accepts_an_observation(guarded_stub):
    host, worker = As(guarded_stub, HOST), As(guarded_stub, WORKER)
    tree_id, _, _ = await stopped_task(guarded_stub)
    question = (
        await host.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=tree_id, text="q2")
        )
    ).node
    task = await start(host, question.id)
    lease = await claim(worker, tree_id)
    await complete(worker, task.id, lease.lease_token, "found it")
    request = tasks_pb2.AcceptObservationRequest(
        idempotency_key=unique("k"), task_id=task.id, accepted_by="user-1"
    )
    await refused(host.AcceptObservation(request), DENIED, "confirmation_required")
    grant = callers.issue_grant(SECRET, "accept_observation", tree_id, "user-1")
    accepted = await As(guarded_stub, HOST, grant).AcceptObservation(request)
    assert accepted.answer_id


async def test_a_worker_limited_to_owners_claims_only_from_their_trees(guarded_stub):
    host, worker = As(guarded_stub, HOST), As(guarded_stub, ALICES)
    bobs = (
        await host.CreateTree(
            tree_pb2.CreateTreeRequest(idempotency_key=unique("k"), title="t", owner="bob")
        )
    ).tree
    question = (
        await host.AskQuestion(
            tree_pb2.AskQuestionRequest(idempotency_key=unique("k"), tree_id=bobs.id, text="q")
        )
    ).node
    await start(host, question.id)
    await refused(claim(worker, ""), DENIED, "permission_denied")
    await refused(claim(worker, bobs.id), DENIED, "permission_denied")
    assert (await claim(As(guarded_stub, WORKER), bobs.id)).HasField("task")


@pytest.mark.parametrize("method", sorted(callers.WORKER_METHODS))
def test_every_worker_method_is_a_task_rpc(method):
    service = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
    assert method in service.methods_by_name
    assert service.methods_by_name[method].input_type.file.name.endswith("tasks.proto")
