"""The conversation-tree RPCs: trees, questions, answers, continuations, adoption, and the reads
of trees, nodes and paths."""

from __future__ import annotations

from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.conversation import messages
from tree_service.conversation.store import ConversationStore
from tree_service.nodes.store import NodeStore
from tree_service.paging import (
    DEFAULT_PAGE,
    DEFAULT_PATH_PAGE,
    MAX_PAGE,
    MAX_PATH_PAGE,
    byte_page,
    offset_page,
)
from tree_service.servicing import Ctx, ServicerBase


class ConversationRpcs(ServicerBase):
    """TreeService RPCs of the conversation tree (mixed into TreeServicer)."""

    conversation: ConversationStore
    nodes: NodeStore

    async def CreateTree(
        self, request: tree_pb2.CreateTreeRequest, context: Ctx
    ) -> tree_pb2.CreateTreeResponse:
        new = messages.new_tree(request)

        async def action(conn: Any) -> tree_pb2.CreateTreeResponse:
            tree = await self.nodes.create_tree(conn, new)
            return tree_pb2.CreateTreeResponse(tree=convert.tree_to_proto(tree))

        return await self._write("CreateTree", request, tree_pb2.CreateTreeResponse, action)

    async def GetTree(
        self, request: tree_pb2.GetTreeRequest, context: Ctx
    ) -> tree_pb2.GetTreeResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        check.done()
        tree = await self.nodes.get_tree(request.tree_id)
        return tree_pb2.GetTreeResponse(tree=convert.tree_to_proto(tree))

    async def AskQuestion(
        self, request: tree_pb2.AskQuestionRequest, context: Ctx
    ) -> tree_pb2.AskQuestionResponse:
        question = messages.new_question(request)
        return await self._append_node(
            "AskQuestion",
            request,
            tree_pb2.AskQuestionResponse,
            lambda conn: self.conversation.ask_question(conn, question),
        )

    async def EditQuestion(
        self, request: tree_pb2.EditQuestionRequest, context: Ctx
    ) -> tree_pb2.EditQuestionResponse:
        edit = messages.question_edit(request)
        return await self._append_node(
            "EditQuestion",
            request,
            tree_pb2.EditQuestionResponse,
            lambda conn: self.conversation.edit_question(conn, edit),
        )

    async def AddAnswer(
        self, request: tree_pb2.AddAnswerRequest, context: Ctx
    ) -> tree_pb2.AddAnswerResponse:
        answer = messages.new_answer(request)
        return await self._append_node(
            "AddAnswer",
            request,
            tree_pb2.AddAnswerResponse,
            lambda conn: self.conversation.add_answer(conn, answer),
        )

    async def AddContinuation(
        self, request: tree_pb2.AddContinuationRequest, context: Ctx
    ) -> tree_pb2.AddContinuationResponse:
        continuation = messages.new_continuation(request)
        return await self._append_node(
            "AddContinuation",
            request,
            tree_pb2.AddContinuationResponse,
            lambda conn: self.conversation.add_continuation(conn, continuation),
        )

    async def AdoptAnswer(
        self, request: tree_pb2.AdoptAnswerRequest, context: Ctx
    ) -> tree_pb2.AdoptAnswerResponse:
        question_id, answer_id, expected = messages.adoption(request)

        async def action(conn: Any) -> tree_pb2.AdoptAnswerResponse:
            question = await self.conversation.adopt(conn, question_id, answer_id, expected)
            return tree_pb2.AdoptAnswerResponse(question=convert.node_to_proto(question))

        return await self._write("AdoptAnswer", request, tree_pb2.AdoptAnswerResponse, action)

    async def GetNode(
        self, request: tree_pb2.GetNodeRequest, context: Ctx
    ) -> tree_pb2.GetNodeResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        check.done()
        node = await self.nodes.get_node(request.node_id)
        return tree_pb2.GetNodeResponse(node=convert.node_to_proto(node))

    async def GetPath(
        self, request: tree_pb2.GetPathRequest, context: Ctx
    ) -> tree_pb2.GetPathResponse:
        check = convert.Checker()
        check.identifier("node_id", request.node_id)
        limit = check.page_size(request.page_size, DEFAULT_PATH_PAGE, MAX_PATH_PAGE)
        offset = convert.page_token(check, request.page_token)
        check.done()
        nodes, length = await self.nodes.get_path(request.node_id, offset, limit)
        page, token = offset_page(nodes, offset, length)
        return tree_pb2.GetPathResponse(nodes=page, next_page_token=token, path_length=length)

    async def ListNodes(
        self, request: tree_pb2.ListNodesRequest, context: Ctx
    ) -> tree_pb2.ListNodesResponse:
        check = convert.Checker()
        check.identifier("tree_id", request.tree_id)
        limit = check.page_size(request.page_size, DEFAULT_PAGE, MAX_PAGE)
        after = convert.page_token(check, request.page_token)
        lifecycles = messages.lifecycle_filter(check, list(request.lifecycles))
        check.done()
        nodes = await self.nodes.list_nodes(
            request.tree_id, after, limit + 1, request.include_archived, lifecycles
        )
        page = byte_page(nodes[:limit])
        more = len(nodes) > len(page)
        return tree_pb2.ListNodesResponse(
            nodes=page,
            next_page_token=str(page[-1].ordinal) if more else "",
        )
