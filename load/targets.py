"""A deployment named by its addresses, as `python -m load` and `python -m bench.run` both take
it: the options (or MIRRORTREE_LOAD_* variables), the loopback rule, the tokens from the
environment, and the session and binding a run reads through.

Without Locust: bench.run imports it too, and Locust must not be imported before load's own
__main__ has switched gevent's monkey-patching off.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from mirrortree.v1 import tree_pb2, tree_pb2_grpc

CALL_TIMEOUT_S = 30.0
Metadata = list[tuple[str, str]]


@dataclass(frozen=True)
class Targets:
    tree: str
    graph: str
    gateway: str  # the MCP endpoint URL; "" = no MCP users
    project: str
    caller_token: str = ""  # TreeService caller token (host_app), when callers are configured
    binding_token: str = ""  # "" = mint one for the run's session
    confirmation_secret: str = ""  # signs Canonicalize's user-confirmation grant when set

    @classmethod
    def from_env(cls, tree: str, graph: str, gateway: str, project: str) -> Targets:
        """The addresses, with the tokens of MIRRORTREE_CALLER_TOKEN, MIRRORTREE_BINDING_TOKEN
        and MIRRORTREE_CONFIRMATION_SECRET."""
        env = os.environ.get
        return cls(
            tree=tree,
            graph=graph,
            gateway=gateway,
            project=project,
            caller_token=env("MIRRORTREE_CALLER_TOKEN", ""),
            binding_token=env("MIRRORTREE_BINDING_TOKEN", ""),
            confirmation_secret=env("MIRRORTREE_CONFIRMATION_SECRET", ""),
        )


@dataclass(frozen=True)
class Session:
    """The run's session (a tree in its project) and the binding token its reads carry."""

    session_id: str
    binding_token: str
    lsn: str  # the consistency token of the last write that opened it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--tree, --graph, --primary-dsn, --replica-dsn and --allow-remote."""
    env = os.environ.get
    parser.add_argument(
        "--tree", default=env("MIRRORTREE_LOAD_TREE", ""), help="TreeService host:port"
    )
    parser.add_argument(
        "--graph", default=env("MIRRORTREE_LOAD_GRAPH", ""), help="StoryGraph host:port"
    )
    parser.add_argument(
        "--primary-dsn",
        default=env("MIRRORTREE_LOAD_PRIMARY_DSN", ""),
        help="with --tree: the primary, for the raw point-query baseline",
    )
    parser.add_argument(
        "--replica-dsn",
        default=env("MIRRORTREE_LOAD_REPLICA_DSN", ""),
        help="with --tree: a replica, for the raw point-query baseline",
    )
    parser.add_argument(
        "--allow-remote", action="store_true", help="allow addresses beyond loopback"
    )


def check_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, *addresses: str
) -> None:
    """The DSNs go with a given deployment; every address (the options', `addresses` and the
    DSNs' hosts) is on loopback unless --allow-remote."""
    if (args.primary_dsn or args.replica_dsn) and not args.tree:
        parser.error(
            "--primary-dsn and --replica-dsn go with --tree and --graph "
            "(a stack the run starts itself has its own)"
        )
    if args.allow_remote:
        return
    for address in (
        args.tree,
        args.graph,
        *addresses,
        *dsn_hosts(args.primary_dsn),
        *dsn_hosts(args.replica_dsn),
    ):
        if address and not loopback(address):
            parser.error(f"{address} is not a loopback address; --allow-remote allows it")


def loopback(address: str) -> bool:
    """Whether host[:port] names this machine only (every address its name resolves to)."""
    try:
        infos = socket.getaddrinfo(urlsplit(f"//{address}").hostname or "", None)
    except (OSError, ValueError):
        return False
    return all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def dsn_hosts(dsn: str) -> list[str]:
    """The host[:port]s a PostgreSQL URI names; a Unix socket's folder is local and left out."""
    if not dsn:
        return []
    parts = urlsplit(dsn)
    hosts = parts.netloc.rpartition("@")[2].split(",")
    hosts += parse_qs(parts.query).get("host", [])
    return [host for host in hosts if host and not host.startswith("/")]


def caller_metadata(caller_token: str) -> Metadata:
    return [("authorization", f"Bearer {caller_token}")] if caller_token else []


def binding_metadata(binding_token: str) -> Metadata:
    return [("authorization", f"Bearer {binding_token}")]


async def switch_app_on(
    stub: tree_pb2_grpc.TreeServiceStub, metadata: Metadata | None = None
) -> None:
    """The supervisor app gates the story-graph reads, and new installations start it off."""
    settings = await stub.GetSettings(
        tree_pb2.GetSettingsRequest(), metadata=metadata, timeout=CALL_TIMEOUT_S
    )
    if not settings.heartbeat_enabled:
        await stub.SetAppEnabled(
            tree_pb2.SetAppEnabledRequest(
                idempotency_key=f"load-app-on-{settings.app_revision}",
                enabled=True,
                expected_revision=settings.app_revision,
            ),
            metadata=metadata,
            timeout=CALL_TIMEOUT_S,
        )


async def open_session(
    stub: tree_pb2_grpc.TreeServiceStub, targets: Targets, *, title: str, owner: str
) -> Session:
    """Switch the app on if it is off; create the run's session in its project and, unless the
    targets carry a binding token, a binding for it."""
    md = caller_metadata(targets.caller_token)
    await switch_app_on(stub, md)
    created = await stub.CreateTree(
        tree_pb2.CreateTreeRequest(
            idempotency_key=uuid.uuid4().hex, title=title, owner=owner, project_id=targets.project
        ),
        metadata=md,
        timeout=CALL_TIMEOUT_S,
    )
    if targets.binding_token:
        return Session(created.tree.id, targets.binding_token, created.consistency.lsn)
    binding = await stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=uuid.uuid4().hex, session_id=created.tree.id, runtime="Model"
        ),
        metadata=md,
        timeout=CALL_TIMEOUT_S,
    )
    return Session(created.tree.id, binding.token, binding.consistency.lsn)
