"""The RPCs of branch states (T13)."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.lifecycle import messages
from tree_service.lifecycle.store import LifecycleStore
from tree_service.servicing import Ctx, ServicerBase

DEFAULT_BRANCH_PAGE = 50
MAX_BRANCH_PAGE = 500


class LifecycleRpcs(ServicerBase):
    """TreeService RPCs of branch states (mixed into TreeServicer)."""

    lifecycle: LifecycleStore

    async def SetBranchState(
        self, request: tree_pb2.SetBranchStateRequest, context: Ctx
    ) -> tree_pb2.SetBranchStateResponse:
        change = messages.state_change(request)

        async def action(conn: Any) -> tree_pb2.SetBranchStateResponse:
            branch = await self.lifecycle.set_state(conn, change)
            return tree_pb2.SetBranchStateResponse(branch=messages.branch_to_proto(branch))

        return await self._write("SetBranchState", request, tree_pb2.SetBranchStateResponse, action)

    async def GetBranch(
        self, request: tree_pb2.GetBranchRequest, context: Ctx
    ) -> tree_pb2.GetBranchResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        check.done()
        branch = await self.lifecycle.get_branch(request.node_id)
        return tree_pb2.GetBranchResponse(branch=messages.branch_to_proto(branch))

    async def ListBranches(
        self, request: tree_pb2.ListBranchesRequest, context: Ctx
    ) -> tree_pb2.ListBranchesResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        limit = check.page_size(request.page_size, DEFAULT_BRANCH_PAGE, MAX_BRANCH_PAGE)
        after = convert.page_token(check, request.page_token)
        states = messages.state_filter(check, list(request.states))
        check.done()
        found = await self.lifecycle.list_branches(
            request.tree_id, after, limit + 1, request.include_archived, states
        )
        page = found[:limit]
        return tree_pb2.ListBranchesResponse(
            branches=[messages.branch_to_proto(b) for b, _ in page],
            next_page_token=str(page[-1][1]) if len(found) > limit else "",
        )
