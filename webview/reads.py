"""Everything the web view reads, through TreeService and StoryGraph over gRPC only.

The tree is read with the web view's own TreeService caller credential, the story graph with
the signed-in caller's binding token, so graph_service applies that binding's scope to every
story read exactly as it does for the MCP tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import grpc

from gateway import credentials
from mirrortree import tracing
from mirrortree.logs import REQUEST_ID_HEADER, new_request_id
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from webview.config import Settings

# How much of a tree one page shows: beyond it the page says the tree was cut, never hides it.
MAX_NODES = 5_000
MAX_VERSIONS = 200
# A source page reads at most this many code points of the whole source around a fragment.
MAX_SOURCE_CHARS = 400_000
MAX_CONTENT_CHARS = 200_000
# A story page follows a collection's cursors up to this many items; past it the page says so.
MAX_ITEMS = 500

OBJECT_TYPES = {
    "story_line": common_pb2.STORY_LINE,
    "event": common_pb2.EVENT,
    "entity": common_pb2.ENTITY,
    "entity_change": common_pb2.ENTITY_CHANGE,
    "relation": common_pb2.RELATION,
    "summary": common_pb2.SUMMARY,
    "leaf_fact": common_pb2.LEAF_FACT,
    "source_reference": common_pb2.SOURCE_REFERENCE,
    "preference": common_pb2.PREFERENCE,
}
TYPE_NAMES = {number: name for name, number in OBJECT_TYPES.items()}


@dataclass
class TreeData:
    """A tree as one page shows it: its nodes in creation order, its moved branches and its
    main-line versions (newest first), each list cut at its cap (and saying so)."""

    tree: tree_pb2.Tree
    nodes: list[tree_pb2.Node] = field(default_factory=list)
    nodes_cut: bool = False
    branches: dict[str, tree_pb2.Branch] = field(default_factory=dict)
    versions: list[tree_pb2.MainLineVersion] = field(default_factory=list)
    versions_cut: bool = False


@dataclass
class SourceData:
    """A source reference's saved fragment, and the whole source version it was cut from
    when that version is still kept (else why not)."""

    snapshot: graph_pb2.ReadSourceResponse
    fragment: str
    whole: str | None
    whole_note: str


class Readers:
    """The two gRPC channels, opened lazily inside the running event loop."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._tree_channel: grpc.aio.Channel | None = None
        self._graph_channel: grpc.aio.Channel | None = None

    @property
    def tree(self) -> tree_pb2_grpc.TreeServiceStub:
        if self._tree_channel is None:
            self._tree_channel = grpc.aio.insecure_channel(
                self._settings.tree_target, interceptors=tracing.client_interceptors()
            )
        return tree_pb2_grpc.TreeServiceStub(self._tree_channel)

    @property
    def graph(self) -> graph_pb2_grpc.StoryGraphStub:
        if self._graph_channel is None:
            self._graph_channel = grpc.aio.insecure_channel(
                self._settings.graph_target, interceptors=tracing.client_interceptors()
            )
        return graph_pb2_grpc.StoryGraphStub(self._graph_channel)

    async def close(self) -> None:
        for channel in (self._tree_channel, self._graph_channel):
            if channel is not None:
                await channel.close()
        self._tree_channel = self._graph_channel = None

    async def _call(self, rpc: Any, request: Any, token: str) -> Any:
        metadata = [(REQUEST_ID_HEADER, new_request_id())]
        if token:
            problem = credentials.token_problem(token)
            if problem is not None:
                raise credentials.failed(grpc.StatusCode.UNAUTHENTICATED, f"the token {problem}")
            metadata.append(("authorization", f"Bearer {token}"))
        timeout = self._settings.call_timeout_s
        return await credentials.await_rpc(
            rpc(request, timeout=timeout, metadata=metadata), timeout
        )

    async def tree_call(self, method: str, request: Any) -> Any:
        return await self._call(getattr(self.tree, method), request, self._settings.tree_token)

    async def graph_call(self, method: str, request: Any, token: str) -> Any:
        if not token:  # never an anonymous story read: graph_service may allow them
            raise credentials.failed(grpc.StatusCode.UNAUTHENTICATED, "no binding token")
        return await self._call(getattr(self.graph, method), request, token)

    # ---- who is asking ---------------------------------------------------------------------

    async def resolve_binding(self, token: str) -> graph_pb2.ResolveBindingResponse:
        response: graph_pb2.ResolveBindingResponse = await self.graph_call(
            "ResolveBinding", graph_pb2.ResolveBindingRequest(token=token), token
        )
        return response

    # ---- the tree --------------------------------------------------------------------------

    async def load_tree(self, tree_id: str) -> TreeData:
        tree = (await self.tree_call("GetTree", tree_pb2.GetTreeRequest(tree_id=tree_id))).tree
        data = TreeData(tree)
        token = ""
        while True:
            page = await self.tree_call(
                "ListNodes",
                tree_pb2.ListNodesRequest(
                    tree_id=tree_id, page_size=500, page_token=token, include_archived=True
                ),
            )
            data.nodes.extend(page.nodes)
            token = page.next_page_token
            if not token:
                break
            if len(data.nodes) >= MAX_NODES:
                data.nodes_cut = True
                break
        token = ""
        while True:
            branches = await self.tree_call(
                "ListBranches",
                tree_pb2.ListBranchesRequest(
                    tree_id=tree_id, include_archived=True, page_size=500, page_token=token
                ),
            )
            data.branches.update((b.node_id, b) for b in branches.branches)
            token = branches.next_page_token
            if not token or len(data.branches) >= MAX_NODES:
                break
        token = ""
        while True:
            versions = await self.tree_call(
                "ListMainLineVersions",
                tree_pb2.ListMainLineVersionsRequest(
                    tree_id=tree_id, page_size=100, page_token=token
                ),
            )
            data.versions.extend(versions.versions)
            token = versions.next_page_token
            if not token:
                break
            if len(data.versions) >= MAX_VERSIONS:
                data.versions_cut = True
                break
        return data

    async def node(self, node_id: str) -> tree_pb2.Node:
        response = await self.tree_call("GetNode", tree_pb2.GetNodeRequest(node_id=node_id))
        node: tree_pb2.Node = response.node
        return node

    # ---- the story graph -------------------------------------------------------------------

    async def search(self, query: str, token: str) -> graph_pb2.SearchResponse:
        response: graph_pb2.SearchResponse = await self.graph_call(
            "Search", graph_pb2.SearchRequest(query=query, page_size=50), token
        )
        return response

    async def context(
        self,
        ref: common_pb2.ObjectRef,
        mode: graph_pb2.ContextMode,
        token: str,
        cursor: str = "",
    ) -> graph_pb2.GetContextResponse:
        request = graph_pb2.GetContextRequest(
            object_ref=ref, mode=mode, page_size=50, content_page_size=8000, cursor=cursor
        )
        response: graph_pb2.GetContextResponse = await self.graph_call("GetContext", request, token)
        return response

    async def context_whole(
        self,
        ref: common_pb2.ObjectRef,
        mode: graph_pb2.ContextMode,
        token: str,
        names: tuple[str, ...],
    ) -> graph_pb2.GetContextResponse:
        """A context read whose `names` collections are followed page by page (up to
        MAX_ITEMS each), so a long timeline is shown whole rather than its first page."""
        response = await self.context(ref, mode, token)
        for found in response.collections:
            if found.name not in names:
                continue
            while found.page.has_more and len(found.items) < MAX_ITEMS:
                more = await self.context(ref, mode, token, found.page.next_cursor)
                page = next((c for c in more.collections if c.name == found.name), None)
                if page is None:
                    break
                found.items.extend(page.items)
                found.page.CopyFrom(page.page)
        return response

    async def item_json(
        self,
        ref: common_pb2.ObjectRef,
        mode: graph_pb2.ContextMode,
        item: graph_pb2.ContextItem,
        token: str,
    ) -> str:
        """The whole JSON document of an item's content, following its fragments."""
        text = item.content.text
        cursor = item.content.next_cursor
        while cursor and len(text) < MAX_CONTENT_CHARS:
            more = await self.context(ref, mode, token, cursor)
            fragments = [i.content for c in more.collections for i in c.items]
            if not fragments:
                break
            text += fragments[0].text
            cursor = fragments[0].next_cursor
        return text

    async def source(self, reference_id: str, token: str) -> SourceData:
        request = graph_pb2.ReadSourceRequest(source_reference_id=reference_id, page_size=8000)
        snapshot = await self._read_source(request, token)
        fragment = await self._rest_of(request, snapshot, token)
        whole: str | None = None
        note = ""
        version = snapshot.returned_version
        if not version:
            note = "the version this fragment was saved from is unknown"
        else:
            try:
                request = graph_pb2.ReadSourceRequest(
                    source_reference_id=reference_id,
                    read_kind=graph_pb2.VERSION,
                    source_version=version,
                    page_size=8000,
                )
                whole = await self._rest_of(request, await self._read_source(request, token), token)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                note = error.details() or "the whole source at this version is not kept"
        return SourceData(snapshot, fragment, whole, note)

    async def _read_source(
        self, request: graph_pb2.ReadSourceRequest, token: str
    ) -> graph_pb2.ReadSourceResponse:
        response: graph_pb2.ReadSourceResponse = await self.graph_call("ReadSource", request, token)
        return response

    async def _rest_of(
        self,
        request: graph_pb2.ReadSourceRequest,
        first: graph_pb2.ReadSourceResponse,
        token: str,
    ) -> str:
        text = first.text
        page = first
        while page.page.has_more and len(text) < MAX_SOURCE_CHARS:
            following = graph_pb2.ReadSourceRequest()
            following.CopyFrom(request)
            following.cursor = page.page.next_cursor
            page = await self._read_source(following, token)
            text += page.text
        return text
