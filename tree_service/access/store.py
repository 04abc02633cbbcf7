"""Access: the switches that gate the story-graph tools (W4), each session's context state
with its own switch, and the bindings that let a runtime read a session's scopes.

The switches are independent rows, so switching the app off and on again keeps every
session's choice and the capability's assignments as the user left them. A session's context
state carries a revision: the explicit switch bumps it, and an autosave must name the revision
it was read at, so a stale autosave can never turn a session back on (or off).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid

import asyncpg

from mirrortree.validation import shown
from tree_service import rules
from tree_service.access import queries
from tree_service.domain import (
    CAPABILITY_ID,
    SESSION_SWITCH,
    AppSettings,
    IssuedBinding,
    SessionContext,
)
from tree_service.errors import InvalidInput, NotFound, RevisionConflict


def token_hash(token: str) -> bytes:
    """Binding tokens are stored and looked up by SHA-256 only."""
    return hashlib.sha256(token.encode()).digest()


def _context(session: uuid.UUID, row: asyncpg.Record) -> SessionContext:
    state = json.loads(row["context_state"])
    return SessionContext(
        session_id=str(session),
        story_graph_enabled=state.get(SESSION_SWITCH, True) is not False,
        context_state=json.dumps(state, ensure_ascii=False),
        revision=row["context_revision"],
    )


class AccessStore:
    """Switches, session contexts and bindings on the primary."""

    @staticmethod
    async def read_settings(conn: asyncpg.Connection) -> AppSettings:
        row = await conn.fetchrow(queries.SELECT_SETTINGS)
        return AppSettings(
            heartbeat_enabled=row["heartbeat_enabled"],
            app_revision=row["app_revision"],
            story_graph_enabled=row["enabled"],
            assignments=tuple(row["assignments"]),
            capability_revision=row["capability_revision"],
        )

    async def set_app(self, conn: asyncpg.Connection, enabled: bool, expected: int) -> AppSettings:
        if await conn.fetchval(queries.UPDATE_APP, enabled, expected) is None:
            current = (await self.read_settings(conn)).app_revision
            raise RevisionConflict("app setting", "heartbeat_enabled", expected, current)
        return await self.read_settings(conn)

    async def set_capability(
        self, conn: asyncpg.Connection, enabled: bool, assignments: list[str], expected: int
    ) -> AppSettings:
        updated = await conn.fetchval(
            queries.UPDATE_CAPABILITY, CAPABILITY_ID, enabled, assignments, expected
        )
        if updated is None:
            current = (await self.read_settings(conn)).capability_revision
            raise RevisionConflict("capability", CAPABILITY_ID, expected, current)
        return await self.read_settings(conn)

    @staticmethod
    async def set_session_switch(
        conn: asyncpg.Connection, session: uuid.UUID, enabled: bool
    ) -> SessionContext:
        row = await conn.fetchrow(queries.SET_SESSION_SWITCH, session, enabled)
        if row is None:
            raise NotFound("session", str(session))
        return _context(session, row)

    @staticmethod
    async def save_context(
        conn: asyncpg.Connection, session: uuid.UUID, state: str, expected: int
    ) -> SessionContext:
        row = await conn.fetchrow(queries.SAVE_CONTEXT, session, state, expected)
        if row is None:
            current = await conn.fetchrow(queries.SELECT_CONTEXT, session)
            if current is None:
                raise NotFound("session", str(session))
            raise RevisionConflict(
                "session context", str(session), expected, current["context_revision"]
            )
        return _context(session, row)

    @staticmethod
    async def read_context(conn: asyncpg.Connection, session_id: str) -> SessionContext:
        try:
            session = uuid.UUID(session_id)
        except ValueError:
            raise InvalidInput.one(
                "session_id", f"{shown(session_id)} is not a session id"
            ) from None
        row = await conn.fetchrow(queries.SELECT_CONTEXT, session)
        if row is None:
            raise NotFound("session", session_id)
        return _context(session, row)

    @staticmethod
    async def create_binding(
        conn: asyncpg.Connection, session_id: str, runtime: str, allowed_scopes: list[str]
    ) -> IssuedBinding:
        session_uuid = rules.parse_id(session_id, "session_id")
        session = await conn.fetchrow(queries.SELECT_SESSION_PROJECT, session_uuid)
        if session is None:
            raise NotFound("session", session_id)
        binding_id = uuid.uuid4()
        token = f"mtb_{secrets.token_urlsafe(32)}"
        await conn.execute(
            queries.INSERT_BINDING,
            binding_id,
            token_hash(token),
            session_uuid,
            runtime,
            allowed_scopes,
        )
        return IssuedBinding(str(binding_id), token, session_id, runtime, session["project_id"])
