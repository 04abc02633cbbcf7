"""Who may call TreeService, and the user-confirmation grants without which no one may do what
only the user may do (canonicalize, purge, approve a charge, …).

Callers present a per-caller bearer token (`authorization: Bearer <token>`); the token names
the caller and its role:

- `host_app`: writes trees and mints runtime bindings for its sessions; canonicalizing also
  needs a user-confirmation grant; an entry may name the owners whose trees it serves, and
  then every tree a call refers to must belong to one of them;
- `operator`: all of host_app, plus the app-wide switches (SetAppEnabled, SetCapability);
- `gateway`: nothing on TreeService (it only resolves bindings, on graph_service);
- `viewer`: only reads (methods named Get…, List… or Watch…), for read-only views such as
  the web view, and none of the writes a host app may do.
- `worker`: a delegated-task worker (T19): only the worker's side of the task protocol
  (WORKER_METHODS: claim, heartbeat, report, complete, fail, read a task). Its own role rather
  than host_app or operator so that a worker process, which runs model calls on the caller's
  behalf, can never start tasks, give them new instructions, accept their results or write
  trees; extending a task's budget, deadline or scope is not among its methods at all.

A user-confirmation grant is a short-lived credential (`x-mirrortree-confirmation` metadata)
signed with a secret that only the component which sees the user click holds; it names the
action, the tree and the user. Which RPCs need one, naming which action, user field and subject,
TreeService's proto declares (`option (needs_confirmation)`); each is refused unless the grant
matches its request, so a host app cannot do any of them on its own, whatever its request says.

Tokens rather than mTLS: they need no certificate authority or rotation tooling in a
two-container development stack, travel through any proxy as ordinary gRPC metadata, and map to
a caller in one dictionary look-up; transport encryption stays the deployment's TLS's job.

With no callers configured the service is open (the development default of `make run` and the
tests, logged loudly at start).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from mirrortree import handlers, rpcstatus
from mirrortree.fieldpaths import value_at
from mirrortree.v1 import options_pb2, tree_pb2

ROLES = ("host_app", "operator", "gateway", "viewer", "worker")
# A viewer may call only the methods whose names say they read.
READ_PREFIXES = ("Get", "List", "Watch")
CONFIRMATION_HEADER = "x-mirrortree-confirmation"
MAX_GRANT_LIFETIME_S = 300
MAX_CREDENTIAL_CHARS = 2048
OPERATOR_ONLY = frozenset({"SetAppEnabled", "SetCapability"})
WORKER_METHODS = frozenset(
    {"ClaimTask", "HeartbeatTask", "ReportTaskProgress", "CompleteTask", "FailTask", "GetTask"}
)


@dataclass(frozen=True)
class Confirmed:
    """What a method's user-confirmation grant must name: its action, the user in the request's
    `user_field` and the tree of what its `subject_field` names (field paths of the request)."""

    action: str
    user_field: str
    subject_field: str

    def user_of(self, request: Any) -> str:
        return str(value_at(request, self.user_field))


def _confirmed_methods() -> dict[str, Confirmed]:
    """Method → the grant it needs: the acts only the user may perform, as TreeService's proto
    declares them (`option (needs_confirmation)`, protos/mirrortree/v1/options.proto)."""
    service = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
    extension: Any = options_pb2.needs_confirmation  # the stubs type it as a FieldDescriptor
    found = {}
    for method in service.methods:
        options = method.GetOptions()
        if options.HasExtension(extension):
            if method.client_streaming or method.server_streaming:
                # The grant is checked on the one request of a unary call; fail closed.
                raise TypeError(f"{method.name} needs a confirmation but is not unary")
            grant = options.Extensions[extension]
            found[method.name] = Confirmed(grant.action, grant.user_field, grant.subject_field)
    return found


CONFIRMED = _confirmed_methods()
# Methods every caller may use: health checks and reflection are not TreeService's.
_PUBLIC_SERVICES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


@dataclass(frozen=True)
class Caller:
    name: str
    role: str
    owners: frozenset[str] = frozenset()  # empty: trees of any owner


# The owners of the trees a request refers to (tree_service.ownership.TreeOwners).
OwnersOf = Callable[[Any], Awaitable[set[str]]]
# What a confirmed request's grant must name as its tree, given the request and its subject
# field: a tree id, "owner:<owner>", or "" when the id matches nothing (TreeOwners.subject_of).
SubjectOf = Callable[[Any, str], Awaitable[str]]


def parse_callers(text: str) -> dict[str, Caller]:
    """`name:role:token[:owner|owner...]` entries, comma-separated, as a token → caller map
    (ValueError if bad)."""
    callers: dict[str, Caller] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, role, token, owners = [*entry.split(":", 3), "", "", ""][:4]
        if not name or role not in ROLES or len(token) < 16:
            raise ValueError(
                f"caller entry {name or entry[:20]!r}: use name:role:token with role one of "
                f"{', '.join(ROLES)} and a token of at least 16 characters"
            )
        if token in callers:
            raise ValueError(f"caller {name!r} reuses another caller's token")
        callers[token] = Caller(name, role, frozenset(filter(None, owners.split("|"))))
    return callers


def issue_grant(secret: bytes, action: str, tree_id: str, user_id: str, ttl_s: int = 120) -> str:
    """A user-confirmation grant (for the component that sees the user confirm, and tests)."""
    payload = {"act": action, "tree": tree_id, "user": user_id, "exp": int(time.time()) + ttl_s}
    body = _b64(json.dumps(payload, separators=(",", ":")).encode())
    return f"{body}.{_b64(_sign(secret, body))}"


def grant_problem(secret: bytes, grant: str, action: str, tree_id: str, user_id: str) -> str | None:
    """Why `grant` does not confirm action on tree_id by user_id now; None when it does."""
    if not grant:
        return "a user-confirmation grant is required (x-mirrortree-confirmation metadata)"
    body, _, signature = grant.partition(".")
    try:
        expected = _sign(secret, body)
        if not hmac.compare_digest(base64.urlsafe_b64decode(signature + "=="), expected):
            return "the user-confirmation grant is not validly signed"
        claims = json.loads(base64.urlsafe_b64decode(body + "=="))
    except (ValueError, TypeError):
        return "the user-confirmation grant is malformed"
    if not isinstance(claims, dict):
        return "the user-confirmation grant is malformed"
    now = time.time()
    expires = claims.get("exp")
    if not isinstance(expires, int) or expires < now or expires > now + MAX_GRANT_LIFETIME_S:
        return "the user-confirmation grant has expired (or claims too long a life)"
    if (claims.get("act"), claims.get("tree"), claims.get("user")) != (action, tree_id, user_id):
        return "the user-confirmation grant is for another action, tree or user"
    return None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _sign(secret: bytes, body: str) -> bytes:
    return hmac.new(secret, body.encode(), hashlib.sha256).digest()


def _bearer(metadata: Mapping[str, Any]) -> str:
    value = metadata.get("authorization")
    if not isinstance(value, str):
        return ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class CallerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Authenticates each TreeService call's caller and checks its role and grant."""

    def __init__(
        self,
        callers: Mapping[str, Caller],
        confirmation_secret: bytes,
        owners_of: OwnersOf,
        subject_of: SubjectOf,
    ) -> None:
        self._callers = dict(callers)
        self._secret = confirmation_secret
        self._owners_of = owners_of
        self._subject_of = subject_of

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(_PUBLIC_SERVICES):
            return handler
        method = details.method.rsplit("/", 1)[-1]
        metadata = dict(details.invocation_metadata or ())
        token = _bearer(metadata)
        caller = self._callers.get(token) if len(token) <= MAX_CREDENTIAL_CHARS else None
        if caller is None:
            return _refusal(
                handler,
                grpc.StatusCode.UNAUTHENTICATED,
                "unauthenticated",
                "TreeService needs a caller token: authorization metadata 'Bearer <token>'",
            )
        if (
            caller.role == "gateway"
            or (method in OPERATOR_ONLY and caller.role != "operator")
            or (caller.role == "viewer" and not method.startswith(READ_PREFIXES))
            or (caller.role == "worker" and method not in WORKER_METHODS)
        ):
            return _refusal(
                handler,
                grpc.StatusCode.PERMISSION_DENIED,
                "permission_denied",
                f"caller {caller.name!r} (role {caller.role}) may not call {method}",
            )
        if caller.owners:
            handler = _owned(handler, caller, self._owners_of)
        confirmed = CONFIRMED.get(method)
        if confirmed is None:  # (every confirmed method is unary: _confirmed_methods)
            return handler
        grant = str(metadata.get(CONFIRMATION_HEADER) or "")
        return _confirmed(handler, self._secret, confirmed, grant, self._subject_of)


def _refusal(
    handler: grpc.RpcMethodHandler, code: grpc.StatusCode, reason: str, message: str
) -> grpc.RpcMethodHandler:
    async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await rpcstatus.abort(context, code, reason, message)

    async def refuse_stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await rpcstatus.abort(context, code, reason, message)
        yield  # pragma: no cover - abort raises

    return handlers.rewrap(
        handler, lambda _b, _r, streaming: refuse_stream if streaming else refuse
    )


def _claims_anywhere(request: Any) -> bool:
    """A ClaimTask naming no tree or branch, which could take a task of any owner's tree."""
    descriptor = getattr(request, "DESCRIPTOR", None)
    return (
        descriptor is not None
        and descriptor.name == "ClaimTaskRequest"
        and not (request.tree_id or request.branch_node_id)
    )


def _owned(handler: grpc.RpcMethodHandler, caller: Caller, owners_of: OwnersOf) -> Any:
    """handler, refusing a request that refers to a tree of an owner the caller does not serve."""

    async def check(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if _claims_anywhere(request):
            await rpcstatus.abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "permission_denied",
                f"caller {caller.name!r} serves only the trees of its own owners; name the "
                "tree (tree_id) or branch (branch_node_id) to claim a task from",
            )
        foreign = sorted((await owners_of(request)) - caller.owners)
        if foreign:
            await rpcstatus.abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "permission_denied",
                f"caller {caller.name!r} serves only the trees of its own owners; this call "
                f"refers to {len(foreign)} other owner(s)",
            )

    def unary(behavior: Any) -> Any:
        async def checked(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await check(request, context)
            return await behavior(request, context)

        return checked

    def streamed(behavior: Any, streaming_response: bool) -> Any:
        def each(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            async def checked() -> Any:
                async for request in requests:
                    await check(request, context)
                    yield request

            return checked()

        if streaming_response:

            async def stream(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                async for item in behavior(each(requests, context), context):
                    yield item

            return stream

        async def single(requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            return await behavior(each(requests, context), context)

        return single

    def unary_stream(behavior: Any) -> Any:
        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await check(request, context)
            async for item in behavior(request, context):
                yield item

        return stream

    def wrap(behavior: Any, streaming_request: bool, streaming_response: bool) -> Any:
        if streaming_request:
            return streamed(behavior, streaming_response)
        return unary_stream(behavior) if streaming_response else unary(behavior)

    return handlers.rewrap(handler, wrap)


def _confirmed(
    handler: grpc.RpcMethodHandler,
    secret: bytes,
    confirmed: Confirmed,
    grant: str,
    subject_of: SubjectOf,
) -> grpc.RpcMethodHandler:
    behavior = handler.unary_unary

    async def checked(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        tree_id = await subject_of(request, confirmed.subject_field)
        # Ids that match no tree reach the RPC, which refuses them (NOT_FOUND): nothing to act on.
        if tree_id:
            user_id = confirmed.user_of(request)
            problem = grant_problem(secret, grant, confirmed.action, tree_id, user_id)
            if problem is not None:
                await rpcstatus.abort(
                    context,
                    grpc.StatusCode.PERMISSION_DENIED,
                    "confirmation_required",
                    f"{problem}; only the user's own confirmation may {confirmed.action}",
                )
        return await behavior(request, context)

    return grpc.unary_unary_rpc_method_handler(
        checked,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


CALLER_TOKEN_ENV = "MIRRORTREE_CALLER_TOKEN"


class _WithCallerToken(
    grpc.aio.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.UnaryStreamClientInterceptor,  # type: ignore[misc]
    grpc.aio.StreamUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.StreamStreamClientInterceptor,  # type: ignore[misc]
):
    """Adds the caller token to every call of a client channel."""

    def __init__(self, token: str) -> None:
        self._value = f"Bearer {token}"

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        if "authorization" not in metadata:
            metadata.add("authorization", self._value)
        return grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            metadata,
            details.credentials,
            details.wait_for_ready,
        )

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(self._details(details), requests)

    async def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(self._details(details), requests)


def client_interceptors(environ: Mapping[str, str]) -> list[grpc.aio.ClientInterceptor]:
    """For a TreeService client channel: send MIRRORTREE_CALLER_TOKEN, when set, on every call."""
    token = environ.get(CALLER_TOKEN_ENV, "")
    return [_WithCallerToken(token)] if token else []
