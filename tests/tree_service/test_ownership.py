"""The ownership registry (tree_service/ownership.py) against the catalog, and the rule it
serves against every RPC: a host app limited to some owners is refused each request that names
another owner's record, of every kind, in every field that can name one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import pytest_asyncio
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor

from devtools.pgcluster import roles
from mirrortree import callers
from mirrortree.fieldpaths import field_at
from mirrortree.rpcstatus import describe
from mirrortree.v1 import options_pb2, tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.tree_service.costs_helpers import estimate
from tests.tree_service.helpers import answer, ask, canonicalize, new_tree, proposals
from tests.tree_service.tasking import start
from tree_service import app as tree_app
from tree_service import ownership
from tree_service.config import Settings as TreeSettings

SECRET = b"test-confirmation-secret-0123456789abcdef"
LIMITED = "limited-app-token-0123456789"  # a host app serving alice's trees only
SERVICE = tree_pb2.DESCRIPTOR.services_by_name["TreeService"]
K = options_pb2


@dataclass(frozen=True)
class Records:
    """One record of every kind a tree owns, all of one owner's."""

    owner: str
    tree: str
    by_kind: dict[int, str]


async def records_of(stub: Any, owner: str) -> Records:
    tree = await new_tree(stub, owner=owner)
    question = await ask(stub, tree.id, "Which harbour?")
    chosen = await answer(stub, question.id, "The north one")
    other = await answer(stub, question.id, "The south one")
    version = await canonicalize(
        stub, tree.id, leaf=chosen.id, candidates=proposals(tree_pb2.REAL_EXPERIENCE)
    )
    ruling = await stub.RecordArbiterRuling(
        tree_pb2.RecordArbiterRulingRequest(
            idempotency_key=unique("k"),
            node_id=chosen.id,
            arbiter="arbiter",
            action="book",
            allowed=True,
            reason="canon",
        )
    )
    commitment = await stub.RecordCommitment(
        tree_pb2.RecordCommitmentRequest(
            idempotency_key=unique("k"),
            node_id=question.id,
            kind=tree_pb2.STATED_FACT,  # a safety stop would hold the tasks started below
            statement="a fact",
            stated_by=owner,
        )
    )
    context = await stub.AssembleContext(
        tree_pb2.AssembleContextRequest(
            idempotency_key=unique("k"), node_id=question.id, budget=10_000
        )
    )
    grant = await stub.GrantCitationAuthorization(
        tree_pb2.GrantCitationAuthorizationRequest(
            idempotency_key=unique("k"), tree_id=tree.id, grantor=owner, grantee="someone"
        )
    )
    invitation = await stub.InviteCanonicalization(
        tree_pb2.InviteCanonicalizationRequest(
            idempotency_key=unique("k"), node_id=other.id, reason="key", proposed_by="system"
        )
    )
    costed = await estimate(stub, tree.id, question.id)
    task = await start(stub, other.id)
    return Records(
        owner,
        tree.id,
        {
            K.ID_KIND_TREE: tree.id,
            K.ID_KIND_NODE: chosen.id,
            K.ID_KIND_SOURCE: question.id,  # a question's message source is its own id
            K.ID_KIND_MAIN_LINE_VERSION: version.id,
            K.ID_KIND_CANON_CANDIDATE: version.candidates[0].id,
            K.ID_KIND_ARBITER_RULING: ruling.ruling.id,
            K.ID_KIND_COMMITMENT: commitment.commitment.id,
            K.ID_KIND_CONTEXT_VERSION: context.context_version_id,
            K.ID_KIND_CITATION_AUTHORIZATION: grant.authorization.id,
            K.ID_KIND_CANON_INVITATION: invitation.invitation.id,
            K.ID_KIND_ESTIMATE: costed.id,
            K.ID_KIND_TASK: task.id,
            K.ID_KIND_OWNER: owner,
        },
    )


@pytest_asyncio.fixture(scope="module")
async def limited_service(cluster, tree_service) -> AsyncIterator[tree_app.TreeService]:
    service = await tree_app.start(
        TreeSettings(
            dsn=roles.writer_dsn(cluster.primary_dsn),
            migrate=False,  # the session's tree_service has migrated
            listen="127.0.0.1:0",
            callers=callers.parse_callers(f"shop:host_app:{LIMITED}:alice"),
            confirmation_secret=SECRET,
        )
    )
    yield service
    await service.stop()


@pytest_asyncio.fixture(scope="module")
async def limited(limited_service) -> AsyncIterator[tree_pb2_grpc.TreeServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{limited_service.port}") as channel:
        yield tree_pb2_grpc.TreeServiceStub(channel)


@pytest_asyncio.fixture(scope="module")
async def worlds(tree_stub) -> tuple[Records, Records]:
    """alice's records (the limited app's) and bob's, written by an unlimited caller."""
    return await records_of(tree_stub, "alice"), await records_of(tree_stub, "bob")


def owned_fields(
    message: Descriptor, prefix: tuple[FieldDescriptor, ...] = ()
) -> Iterator[tuple[tuple[FieldDescriptor, ...], int]]:
    """Every path to a field of `message` that names a tree's record or an owner."""
    for field in message.fields:
        path = (*prefix, field)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            entry = field.message_type
            if entry is not None and not entry.GetOptions().map_entry and len(prefix) < 4:
                yield from owned_fields(entry, path)
        elif ownership.KINDS.get(ownership.kind_of(field), ownership.Kind(None, False)).owned:
            yield path, ownership.kind_of(field)


def cases() -> Iterator[tuple[MethodDescriptor, tuple[FieldDescriptor, ...], int]]:
    for method in SERVICE.methods:
        for path, kind in owned_fields(method.input_type):
            yield method, path, kind


CASES = list(cases())


def request_naming(
    method: MethodDescriptor, path: tuple[FieldDescriptor, ...], value: str, user: str
) -> Any:
    """A request of `method` whose field at `path` is `value` (and whose confirming user, if
    the method needs one, is `user`); every other field is left as the type's default."""
    request: Any = message_factory.GetMessageClass(method.input_type)()
    if "idempotency_key" in method.input_type.fields_by_name:
        request.idempotency_key = unique("k")
    confirmed = callers.CONFIRMED.get(method.name)
    if confirmed is not None:
        *parents, user_field = confirmed.user_field.split(".")
        holder = request
        for name in parents:
            holder = getattr(holder, name)
        setattr(holder, user_field, user)
    holder = request
    for field in path[:-1]:
        holder = getattr(holder, field.name)
        if field.is_repeated:
            holder = holder.add()
    named = path[-1]
    if named.is_repeated:
        getattr(holder, named.name).append(value)
    else:
        setattr(holder, named.name, value)
    return request


def metadata(method: MethodDescriptor, world: Records) -> tuple[tuple[str, str], ...]:
    """The limited app's token and, for a method only the user may call, a grant that confirms
    the call for `world`'s tree (or owner): what stops the call is the owner limit alone."""
    sent = [("authorization", f"Bearer {LIMITED}")]
    confirmed = callers.CONFIRMED.get(method.name)
    if confirmed is not None:
        subject_kind = ownership.kind_of(field_at(method.input_type, confirmed.subject_field))
        subject = f"owner:{world.owner}" if subject_kind == K.ID_KIND_OWNER else world.tree
        grant = callers.issue_grant(SECRET, confirmed.action, subject, world.owner)
        sent.append((callers.CONFIRMATION_HEADER, grant))
    return tuple(sent)


async def call(stub: Any, method: MethodDescriptor, request: Any, meta: Any) -> Any:
    rpc = getattr(stub, method.name)
    if method.client_streaming:
        stream = rpc(metadata=meta, timeout=30)
        await stream.write(request)
        await stream.done_writing()
        return [response async for response in stream]
    if method.server_streaming:
        async for first in rpc(request, metadata=meta, timeout=30):
            return first
        return None
    return await rpc(request, metadata=meta, timeout=30)


async def refusal_of(stub: Any, method: MethodDescriptor, request: Any, meta: Any) -> str:
    """The reason the call was refused with ("" when it was not refused)."""
    try:
        await call(stub, method, request, meta)
    except grpc.aio.AioRpcError as error:
        failure = describe(error)
        return f"{failure.code.name}/{failure.reason}"
    return ""


async def test_the_test_world_holds_a_record_of_every_owned_kind(worlds):
    """A kind added to the registry is exercised here too, or this test names what is missing."""
    owned = {kind for kind, entry in ownership.KINDS.items() if entry.owned}
    assert {kind for _, _, kind in CASES} <= owned
    for world in worlds:
        missing = owned - world.by_kind.keys()
        assert not missing, [K.IdKind.Name(kind) for kind in missing]


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    CASES,
    ids=[f"{m.name}.{'.'.join(f.name for f in p)}" for m, p, _ in CASES],
)
async def test_a_host_app_limited_to_owners_is_refused_another_owners_record(
    limited, worlds, method, path, kind
):
    alice, bob = worlds
    theirs = request_naming(method, path, bob.by_kind[kind], bob.owner)
    refused = await refusal_of(limited, method, theirs, metadata(method, bob))
    assert refused == "PERMISSION_DENIED/permission_denied"
    # The same request naming alice's record passes the owner limit (it may fail otherwise).
    mine = request_naming(method, path, alice.by_kind[kind], alice.owner)
    assert await refusal_of(limited, method, mine, metadata(method, alice)) != refused


async def test_the_owned_records_view_reads_every_owned_table_and_no_other(tree_service, db):
    used = {
        row["table_name"]
        for row in await db.fetch(
            "SELECT table_name FROM information_schema.view_table_usage "
            "WHERE view_name = 'owned_records'"
        )
    }
    owned = {entry.table for entry in ownership.KINDS.values() if entry.owned and entry.table}
    assert used == owned


async def test_every_table_with_an_id_column_is_a_kind_or_says_why_no_request_names_it(
    tree_service, db
):
    tables = {
        row["table_name"]
        for row in await db.fetch(
            "SELECT c.table_name FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema = 'public' AND c.column_name = 'id' "
            "AND t.table_type = 'BASE TABLE'"
        )
    }
    assert "nodes" in tables  # the catalog was read, migrated
    named = {entry.table for entry in ownership.KINDS.values() if entry.table}
    assert tables - named - ownership.UNNAMED_TABLES.keys() == set(), (
        "a table whose ids a request may name: give it an IdKind (options.proto) and a KINDS "
        "entry, or say in UNNAMED_TABLES why no request names it"
    )
    assert (named | ownership.UNNAMED_TABLES.keys()) - tables == set(), "an entry lost its table"


# Tables keyed by one uuid column other than `id`, and the table that column references.
KEYED_BY_ANOTHER = """
SELECT c.conrelid::regclass::text AS keyed, f.confrelid::regclass::text AS referenced
FROM pg_constraint c
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
LEFT JOIN pg_constraint f
    ON f.conrelid = c.conrelid AND f.contype = 'f' AND f.conkey = c.conkey
WHERE c.contype = 'p' AND cardinality(c.conkey) = 1 AND a.attname <> 'id'
  AND a.atttypid = 'uuid'::regtype AND c.connamespace = 'public'::regnamespace
"""


async def test_a_table_keyed_by_another_tables_id_is_reached_through_that_kind(tree_service, db):
    """A branch, a transplant or a purged node is named by its node's or tree's id, so the kind
    of that id covers it; a table keyed by a uuid of its own must be a kind of its own."""
    rows = await db.fetch(KEYED_BY_ANOTHER)
    assert rows  # branches, transplants, purged_nodes: the catalog was read
    named = {entry.table for entry in ownership.KINDS.values() if entry.table}
    unreached = [(r["keyed"], r["referenced"]) for r in rows if r["referenced"] not in named]
    assert not unreached, "a table whose key no request can name: give it an IdKind"
