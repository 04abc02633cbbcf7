"""The RPCs of delegated tasks (T19) and the tree's event stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from mirrortree.timefmt import format_utc
from mirrortree.v1 import tasks_pb2
from tree_service import convert
from tree_service.servicing import Ctx, ServicerBase
from tree_service.tasks import messages
from tree_service.tasks.rules import Task, WorkReport
from tree_service.tasks.store import TaskStore
from tree_service.tasks.watch import EventHub, Heartbeat

DEFAULT_TASK_PAGE = 50
MAX_TASK_PAGE = 500
DEFAULT_HEARTBEAT_S = 15
MAX_HEARTBEAT_S = 60


def _work_response(task: Task) -> tasks_pb2.TaskWorkResponse:
    return tasks_pb2.TaskWorkResponse(
        task=messages.task_to_proto(task),
        keep_working=task.state.value == "running",
        remaining=messages.remaining_to_proto(task),
    )


class TaskRpcs(ServicerBase):
    """TreeService RPCs of delegated tasks and WatchTree (mixed into TreeServicer)."""

    tasks: TaskStore
    watch: EventHub

    async def StartTask(
        self, request: tasks_pb2.StartTaskRequest, context: Ctx
    ) -> tasks_pb2.TaskResponse:
        new = messages.new_task(request)

        async def action(conn: Any) -> tasks_pb2.TaskResponse:
            task = await self.tasks.start(conn, new)
            return tasks_pb2.TaskResponse(task=messages.task_to_proto(task))

        return await self._write("StartTask", request, tasks_pb2.TaskResponse, action)

    async def ClaimTask(
        self, request: tasks_pb2.ClaimTaskRequest, context: Ctx
    ) -> tasks_pb2.ClaimTaskResponse:
        claim = messages.claim(request)

        async def action(conn: Any) -> tasks_pb2.ClaimTaskResponse:
            task, token = await self.tasks.claim(conn, claim)
            if task is None:
                return tasks_pb2.ClaimTaskResponse()
            message = messages.task_to_proto(task)
            message.lease.token = token
            return tasks_pb2.ClaimTaskResponse(
                task=message, lease_token=token, remaining=messages.remaining_to_proto(task)
            )

        return await self._write("ClaimTask", request, tasks_pb2.ClaimTaskResponse, action)

    async def HeartbeatTask(
        self, request: tasks_pb2.HeartbeatTaskRequest, context: Ctx
    ) -> tasks_pb2.TaskWorkResponse:
        messages.heartbeat(request)

        async def action(conn: Any) -> tasks_pb2.TaskWorkResponse:
            task = await self.tasks.heartbeat(conn, request.task_id, request.lease_token)
            return _work_response(task)

        return await self._write("HeartbeatTask", request, tasks_pb2.TaskWorkResponse, action)

    async def _work(self, method: str, request: Any, report: WorkReport) -> Any:
        async def action(conn: Any) -> tasks_pb2.TaskWorkResponse:
            return _work_response(await self.tasks.work(conn, report))

        return await self._write(method, request, tasks_pb2.TaskWorkResponse, action)

    async def ReportTaskProgress(
        self, request: tasks_pb2.ReportTaskProgressRequest, context: Ctx
    ) -> tasks_pb2.TaskWorkResponse:
        response: tasks_pb2.TaskWorkResponse = await self._work(
            "ReportTaskProgress", request, messages.progress(request)
        )
        return response

    async def CompleteTask(
        self, request: tasks_pb2.CompleteTaskRequest, context: Ctx
    ) -> tasks_pb2.TaskWorkResponse:
        response: tasks_pb2.TaskWorkResponse = await self._work(
            "CompleteTask", request, messages.result(request)
        )
        return response

    async def FailTask(
        self, request: tasks_pb2.FailTaskRequest, context: Ctx
    ) -> tasks_pb2.TaskWorkResponse:
        response: tasks_pb2.TaskWorkResponse = await self._work(
            "FailTask", request, messages.failure(request)
        )
        return response

    async def GetTask(
        self, request: tasks_pb2.GetTaskRequest, context: Ctx
    ) -> tasks_pb2.GetTaskResponse:
        check = convert.Checker()
        check.identifier("task_id", request.task_id)
        check.done()
        task, reports = await self.tasks.get(request.task_id, request.include_reports)
        return tasks_pb2.GetTaskResponse(
            task=messages.task_to_proto(task),
            reports=[messages.report_to_proto(r) for r in reports],
        )

    async def ListTasks(
        self, request: tasks_pb2.ListTasksRequest, context: Ctx
    ) -> tasks_pb2.ListTasksResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        check.identifier("branch_node_id", request.branch_node_id, required=False)
        limit = check.page_size(request.page_size, DEFAULT_TASK_PAGE, MAX_TASK_PAGE)
        after = convert.page_token(check, request.page_token)
        states = messages.state_filter(check, list(request.states))
        check.done()
        found = await self.tasks.list(
            request.tree_id, request.branch_node_id or None, states, after, limit + 1
        )
        page = found[:limit]
        return tasks_pb2.ListTasksResponse(
            tasks=[messages.task_to_proto(t) for t in page],
            next_page_token=str(page[-1].position) if len(found) > limit else "",
        )

    async def InstructTask(
        self, request: tasks_pb2.InstructTaskRequest, context: Ctx
    ) -> tasks_pb2.TaskResponse:
        given = messages.instructions(request)

        async def action(conn: Any) -> tasks_pb2.TaskResponse:
            task = await self.tasks.instruct(conn, given)
            return tasks_pb2.TaskResponse(task=messages.task_to_proto(task))

        return await self._write("InstructTask", request, tasks_pb2.TaskResponse, action)

    async def AcceptObservation(
        self, request: tasks_pb2.AcceptObservationRequest, context: Ctx
    ) -> tasks_pb2.AcceptObservationResponse:
        check = convert.Checker()
        check.idempotency_key(request.idempotency_key)
        check.identifier("task_id", request.task_id)
        check.text("accepted_by", request.accepted_by, messages.MAX_NAME)
        check.done()

        async def action(conn: Any) -> tasks_pb2.AcceptObservationResponse:
            task, answer, revision = await self.tasks.accept(
                conn, request.task_id, request.accepted_by
            )
            return tasks_pb2.AcceptObservationResponse(
                task=messages.task_to_proto(task), answer_id=answer.id, tree_revision=revision
            )

        return await self._write(
            "AcceptObservation", request, tasks_pb2.AcceptObservationResponse, action
        )

    async def WatchTree(
        self, request: tasks_pb2.WatchTreeRequest, context: Ctx
    ) -> AsyncIterator[tasks_pb2.WatchTreeResponse]:
        """The tree's changes after a position, then live (see tree_service.tasks.watch)."""
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        if request.after_position < 0:
            check.fail("after_position", "must be 0 (from the first event) or a position seen")
        if not 0 <= request.heartbeat_seconds <= MAX_HEARTBEAT_S:
            check.fail("heartbeat_seconds", f"must be between 1 and {MAX_HEARTBEAT_S} (0: 15)")
        check.done()
        heartbeat_s = request.heartbeat_seconds or DEFAULT_HEARTBEAT_S
        stream = self.watch.events(request.tree_id, request.after_position, heartbeat_s)
        async for item in stream:
            if isinstance(item, Heartbeat):
                yield tasks_pb2.WatchTreeResponse(
                    heartbeat=tasks_pb2.WatchHeartbeat(
                        position=item.position, caught_up=item.caught_up
                    )
                )
            else:
                yield tasks_pb2.WatchTreeResponse(
                    event=tasks_pb2.TreeEvent(
                        position=item.position,
                        kind=item.kind,
                        subject_id=item.subject_id,
                        detail_json=item.detail_json,
                        created_at=format_utc(item.created_at),
                    )
                )
