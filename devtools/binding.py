"""Issue a runtime binding token for the MCP gateway, through TreeService's public API.

    python -m devtools.binding --project ID [--runtime NAME] [--session TREE_ID]
                                 [--grant global | --grant project:ID ...] [--enable]
                                 [--target HOST:PORT]

A binding ties a connection to one (session, runtime); its project is the session's, fixed when
the session's tree was created. Without --session the command opens a session of its own in
the project (one per project and owner: running it again reuses it). The token is printed once
on stdout (only its hash is stored); everything else goes to stderr.

The story-graph tools answer only while four switches are on: the supervisor app, the
`story-graph` capability, its assignment to the runtime, and the session's own switch. The
command says which one is off; with --enable it switches the app and the capability on and
assigns the capability to the runtime (the user's decision, so never by default).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import grpc

from devtools.storyfile import TARGET_ENV, add_target_argument
from mirrortree import callers
from mirrortree.protoscope import global_scope, project_scope
from mirrortree.rpcstatus import describe
from mirrortree.scopes import ScopeError, ScopeValue
from mirrortree.switches import CAPABILITY, switches_off
from mirrortree.v1 import common_pb2, tree_pb2, tree_pb2_grpc

DEFAULT_RUNTIME = "OpenCode"
DEFAULT_OWNER = "me"
CALL_TIMEOUT_S = 30.0

EXIT_REFUSED = 1


@dataclass(frozen=True)
class Issued:
    token: str
    session_id: str
    project_id: str
    runtime: str
    switched_off: tuple[str, ...]  # the installation's switches still off, as sentences
    session_off: bool  # the session's own switch (SetSessionStoryGraph) is off


def grant(value: str) -> common_pb2.Scope:
    """`global` or `project:ID[,ID...]` as a Scope (argparse type)."""
    try:
        if value == "global":
            return global_scope()
        if value.startswith("project:"):
            ids = value.removeprefix("project:").split(",")
            return project_scope(ScopeValue.of_projects(ids).projects)
    except ScopeError as error:
        raise argparse.ArgumentTypeError(f"{value!r}: {error}") from None
    raise argparse.ArgumentTypeError(f"{value!r} is neither 'global' nor 'project:ID[,ID...]'")


def session_key(owner: str, project_id: str) -> str:
    """One session per owner and project, however often the command runs (keys are short
    printable ASCII; names need not be)."""
    digest = hashlib.sha256(f"{owner}\0{project_id}".encode()).hexdigest()
    return f"binding-session:{digest}"


async def enable(stub: tree_pb2_grpc.TreeServiceStub, runtime: str) -> tree_pb2.Settings:
    """Switch the app and the capability on and assign the capability to `runtime`."""
    settings: tree_pb2.Settings = await stub.GetSettings(
        tree_pb2.GetSettingsRequest(), timeout=CALL_TIMEOUT_S
    )
    if not settings.heartbeat_enabled:
        settings = await stub.SetAppEnabled(
            tree_pb2.SetAppEnabledRequest(
                idempotency_key=uuid.uuid4().hex,
                enabled=True,
                expected_revision=settings.app_revision,
            ),
            timeout=CALL_TIMEOUT_S,
        )
    capability = settings.story_graph
    if not capability.enabled or runtime not in capability.assignments:
        assignments = list(capability.assignments)
        if runtime not in assignments:
            assignments.append(runtime)
        settings = await stub.SetCapability(
            tree_pb2.SetCapabilityRequest(
                idempotency_key=uuid.uuid4().hex,
                capability_id=CAPABILITY,
                enabled=True,
                assignments=assignments,
                expected_revision=capability.revision,
            ),
            timeout=CALL_TIMEOUT_S,
        )
    return settings


async def issue(
    target: str,
    *,
    project_id: str,
    runtime: str = DEFAULT_RUNTIME,
    session_id: str = "",
    owner: str = DEFAULT_OWNER,
    grants: Sequence[common_pb2.Scope] = (),
    switch_on: bool = False,
) -> Issued:
    interceptors = callers.client_interceptors(os.environ)
    async with grpc.aio.insecure_channel(target, interceptors=interceptors) as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        if session_id:
            tree = (
                await stub.GetTree(
                    tree_pb2.GetTreeRequest(tree_id=session_id), timeout=CALL_TIMEOUT_S
                )
            ).tree
            if project_id and tree.project_id != project_id:
                raise BindingRefused(
                    f"session {session_id} is in project {tree.project_id or '(none)'!r}, not "
                    f"{project_id!r}; a session's project is fixed when it is created (leave "
                    "--session out to open a session in the project)"
                )
        else:
            tree = (
                await stub.CreateTree(
                    tree_pb2.CreateTreeRequest(
                        idempotency_key=session_key(owner, project_id),
                        title=f"Agent session in {project_id}",
                        owner=owner,
                        project_id=project_id,
                    ),
                    timeout=CALL_TIMEOUT_S,
                )
            ).tree
        if switch_on:
            settings = await enable(stub, runtime)
        else:
            settings = await stub.GetSettings(tree_pb2.GetSettingsRequest(), timeout=CALL_TIMEOUT_S)
        binding = await stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=uuid.uuid4().hex,
                session_id=tree.id,
                runtime=runtime,
                allowed_scopes=list(grants),
            ),
            timeout=CALL_TIMEOUT_S,
        )
        session = await stub.GetSessionContext(
            tree_pb2.GetSessionContextRequest(session_id=tree.id), timeout=CALL_TIMEOUT_S
        )
    return Issued(
        binding.token,
        tree.id,
        binding.project_id,
        runtime,
        tuple(
            switches_off(
                app=settings.heartbeat_enabled,
                capability=settings.story_graph.enabled,
                assignments=settings.story_graph.assignments,
                runtime=runtime,
                session=True,  # said apart: --enable does not change it
            )
        ),
        session_off=not session.story_graph_enabled,
    )


class BindingRefused(Exception):
    """What the user asked for cannot be done; the message says why."""


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devtools.binding",
        description="Issue a binding token for the MCP gateway: the story-graph tools then "
        "read the session's project (and the scopes granted). The token goes to stdout, once.",
    )
    parser.add_argument("--project", required=True, help="the project the session reads")
    parser.add_argument(
        "--runtime", default=DEFAULT_RUNTIME, help=f"the agent runtime (default {DEFAULT_RUNTIME})"
    )
    parser.add_argument(
        "--session",
        default="",
        metavar="TREE_ID",
        help="bind this existing session (a tree of the same project) instead of opening one",
    )
    parser.add_argument(
        "--owner", default=DEFAULT_OWNER, help="owner of the session opened for the binding"
    )
    parser.add_argument(
        "--grant",
        type=grant,
        action="append",
        default=[],
        metavar="SCOPE",
        help="a scope a call may also name explicitly: 'global' or 'project:ID[,ID...]' "
        "(repeatable; never a default)",
    )
    parser.add_argument(
        "--enable",
        action="store_true",
        help="switch the supervisor app and the story-graph capability on and assign the "
        "capability to the runtime",
    )
    add_target_argument(parser, environ)
    args = parser.parse_args(argv)
    try:
        issued = asyncio.run(
            issue(
                args.target,
                project_id=args.project,
                runtime=args.runtime,
                session_id=args.session,
                owner=args.owner,
                grants=args.grant,
                switch_on=args.enable,
            )
        )
    except BindingRefused as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except grpc.RpcError as error:
        failure = describe(error)
        hint = ""
        if failure.code is grpc.StatusCode.UNAVAILABLE:
            hint = f"; is the stack running? (--target or ${TARGET_ENV} names another address)"
        print(f"error: TreeService at {args.target}: {failure.message}{hint}", file=sys.stderr)
        return EXIT_REFUSED
    print(
        f"binding for session {issued.session_id} (project {issued.project_id!r}, runtime "
        f"{issued.runtime!r}); the token is shown once:",
        file=sys.stderr,
    )
    for why in issued.switched_off:
        print(f"warning: the tools stay hidden while {why} (--enable)", file=sys.stderr)
    if issued.session_off:
        print(
            "warning: the tools stay hidden while the story graph is switched off for this "
            "session (TreeService.SetSessionStoryGraph)",
            file=sys.stderr,
        )
    print(issued.token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
