"""The access RPCs: the switches gating the story-graph tools, session context, bindings."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from mirrortree.v1 import tree_pb2
from tree_service.access import messages
from tree_service.access.store import AccessStore
from tree_service.domain import AppSettings, SessionContext
from tree_service.servicing import Ctx, ServicerBase


async def settings_message(read: Awaitable[AppSettings]) -> tree_pb2.Settings:
    return messages.settings_to_proto(await read)


async def context_message(read: Awaitable[SessionContext]) -> tree_pb2.SessionContext:
    return messages.context_to_proto(await read)


class AccessRpcs(ServicerBase):
    """TreeService RPCs of switches, session contexts and bindings (mixed into TreeServicer)."""

    access: AccessStore

    async def GetSettings(
        self, request: tree_pb2.GetSettingsRequest, context: Ctx
    ) -> tree_pb2.Settings:
        async with self.primary.pool.acquire() as conn:
            return messages.settings_to_proto(await self.access.read_settings(conn))

    async def SetAppEnabled(
        self, request: tree_pb2.SetAppEnabledRequest, context: Ctx
    ) -> tree_pb2.Settings:
        enabled, expected = messages.app_request(request)
        return await self._write(
            "SetAppEnabled",
            request,
            tree_pb2.Settings,
            lambda conn: settings_message(self.access.set_app(conn, enabled, expected)),
        )

    async def SetCapability(
        self, request: tree_pb2.SetCapabilityRequest, context: Ctx
    ) -> tree_pb2.Settings:
        enabled, assignments, expected = messages.capability_request(request)
        return await self._write(
            "SetCapability",
            request,
            tree_pb2.Settings,
            lambda conn: settings_message(
                self.access.set_capability(conn, enabled, assignments, expected)
            ),
        )

    async def SetSessionStoryGraph(
        self, request: tree_pb2.SetSessionStoryGraphRequest, context: Ctx
    ) -> tree_pb2.SessionContext:
        session, enabled = messages.switch_request(request)
        return await self._write(
            "SetSessionStoryGraph",
            request,
            tree_pb2.SessionContext,
            lambda conn: context_message(self.access.set_session_switch(conn, session, enabled)),
        )

    async def SaveSessionContext(
        self, request: tree_pb2.SaveSessionContextRequest, context: Ctx
    ) -> tree_pb2.SessionContext:
        session, state, expected = messages.save_request(request)
        return await self._write(
            "SaveSessionContext",
            request,
            tree_pb2.SessionContext,
            lambda conn: context_message(self.access.save_context(conn, session, state, expected)),
        )

    async def GetSessionContext(
        self, request: tree_pb2.GetSessionContextRequest, context: Ctx
    ) -> tree_pb2.SessionContext:
        async with self.primary.pool.acquire() as conn:
            return messages.context_to_proto(
                await self.access.read_context(conn, request.session_id)
            )

    async def CreateBinding(
        self, request: tree_pb2.CreateBindingRequest, context: Ctx
    ) -> tree_pb2.CreateBindingResponse:
        session_id, runtime, allowed = messages.binding_request(request)

        async def action(conn: Any) -> tree_pb2.CreateBindingResponse:
            binding = await self.access.create_binding(conn, session_id, runtime, allowed)
            return messages.binding_to_proto(binding)

        def without_token(
            response: tree_pb2.CreateBindingResponse,
        ) -> tree_pb2.CreateBindingResponse:
            copy = tree_pb2.CreateBindingResponse()
            copy.CopyFrom(response)
            copy.token = ""
            return copy

        return await self._write(
            "CreateBinding",
            request,
            tree_pb2.CreateBindingResponse,
            action,
            stored=without_token,
        )
