"""Whatever a client sends to StoryGraph, it gets OK or one of the errors graph.proto documents
for that RPC, with its machine reason — never INTERNAL or UNKNOWN, never a logged traceback.

Requests are generated over a small story recorded once: weird text, NUL and huge strings,
cursors that are forged, truncated or another read's, time ranges with and without zones,
unknown enum numbers, extreme page sizes and offsets, scopes that are malformed or not granted,
callers that are bindings, trusted sessions or neither, and fields this service does not know.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import pytest_asyncio
from google.protobuf.message import Message
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mirrortree.protoscope import global_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.graph_service.story import options, project_scope, record, ref
from tests.graph_service.test_read_source import referenced_question

INVALID = grpc.StatusCode.INVALID_ARGUMENT
# What graph.proto says each RPC may answer: code → machine reasons (DEADLINE_EXCEEDED and
# CANCELLED are the client's own and never come back here).
FAILED_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
CONTEXT_CODES: dict[grpc.StatusCode, set[str]] = {
    INVALID: {"invalid_argument", "invalid_cursor", "as_of_unsupported"},
    grpc.StatusCode.NOT_FOUND: {"not_found"},
    FAILED_PRECONDITION: {"scope_required", "stale_cursor", "historical_version_unavailable"},
    grpc.StatusCode.PERMISSION_DENIED: {"scope_mismatch", "disabled"},
    grpc.StatusCode.UNAUTHENTICATED: {"unauthenticated"},
    grpc.StatusCode.OUT_OF_RANGE: {"response_too_large"},
    grpc.StatusCode.UNAVAILABLE: {"consistency_timeout", "replica_unavailable"},
}
SEARCH_CODES = {
    **CONTEXT_CODES,
    FAILED_PRECONDITION: {"scope_required", "stale_cursor"},
    grpc.StatusCode.RESOURCE_EXHAUSTED: {"search_budget_exceeded"},
}
READ_SOURCE_CODES = {
    **CONTEXT_CODES,
    FAILED_PRECONDITION: {*CONTEXT_CODES[FAILED_PRECONDITION], "source_unavailable"},
}
RESOLVE_CODES = {
    grpc.StatusCode.UNAUTHENTICATED: {"unauthenticated"},
    # consistency_timeout: every replica too far behind the primary (graph_service.replicas).
    grpc.StatusCode.UNAVAILABLE: {"replica_unavailable", "consistency_timeout"},
}
DOCUMENTED = {
    "Search": SEARCH_CODES,
    "GetContext": CONTEXT_CODES,
    "ReadSource": READ_SOURCE_CODES,
    "ResolveBinding": RESOLVE_CODES,
}
FUZZ = settings(
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass(frozen=True)
class Story:
    """The recorded story and what a well-behaved client would have collected from it."""

    project: str
    granted: str  # a project the binding was granted besides its own
    session_id: str
    token: str
    consistency: common_pb2.ConsistencyToken
    source_reference_id: str  # a saved message fragment (versions and current exist)
    document_reference_id: str  # a recorded document's fragment
    result_id: str
    cursors: dict[str, str]  # a real next_cursor of each read


async def record_story(tree_stub, graph_stub) -> Story:
    """A project with a session, its binding (granted one more project), a saved message
    fragment, and a review of an entity and four events citing a recorded document."""
    project, granted = unique("fuzz"), unique("fuzz-granted")
    session = (await create_tree(tree_stub, project_id=project)).tree
    binding = await tree_stub.CreateBinding(
        tree_pb2.CreateBindingRequest(
            idempotency_key=unique("k"),
            session_id=session.id,
            runtime="Continue",
            allowed_scopes=[project_scope(granted)],
        )
    )
    text = "We decided to move the sync server to PostgreSQL; the sidecar stays for now."
    _, _, message_ref, _ = await referenced_question(
        tree_stub, text, "move the sync server to PostgreSQL", project
    )
    document_ref = unique("src")
    written = await record(
        tree_stub,
        project,
        sources=[
            tree_pb2.SourceReferenceInput(
                id=document_ref,
                source_type="document",
                source_id=unique("doc"),
                fragment="Steps to migrate: dump, restore, switch the reader. " * 20,
            )
        ],
        entities=[tree_pb2.EntityInput(id="hub", label="Sync hub", description="The hub " * 40)],
        events=[
            tree_pb2.EventInput(
                id=f"ev-{i}",
                kind=tree_pb2.DECISION,
                title=f"Step {i} of the migration",
                entity_ids=["hub"],
                source_reference_ids=[document_ref],
                event_time=common_pb2.EventTime(start=f"2026-10-01T0{i}:00:00Z"),
            )
            for i in range(4)
        ],
    )
    read = options(written)
    scope = project_scope(project)
    search = await graph_stub.Search(
        graph_pb2.SearchRequest(query="Step", scope=scope, page_size=1, options=read)
    )
    collection = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(common_pb2.ENTITY, "hub"), scope=scope, page_size=1, options=read
        )
    )
    fragment = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=ref(common_pb2.ENTITY, "hub"),
            scope=scope,
            content_page_size=1,
            options=read,
        )
    )
    source = await graph_stub.ReadSource(
        graph_pb2.ReadSourceRequest(
            source_reference_id=document_ref, scope=scope, page_size=5, options=read
        )
    )
    cursors = {
        "search": search.page.next_cursor,
        "collection": next(c.page.next_cursor for c in collection.collections if c.page.has_more),
        "content": next(
            i.content.next_cursor
            for c in fragment.collections
            for i in c.items
            if i.content.next_cursor
        ),
        "read_source": source.page.next_cursor,
    }
    assert all(cursors.values()), cursors
    return Story(
        project,
        granted,
        session.id,
        binding.token,
        written.consistency,
        message_ref,
        document_ref,
        search.hits[0].result_id,
        cursors,
    )


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def story(tree_stub, graph_stub) -> Story:
    return await record_story(tree_stub, graph_stub)


# ---- strategies ------------------------------------------------------------------------------

WEIRD = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\x1f",
        "\u200b",
        "\ufeff",
        "\U0001f600" * 3,
        "e\u0301",
        "\u202eevil",
        "\uffff",
        "\U0010ffff",
        "%",
        "_",
        "\\",
        "'; drop table x; --",
        "x" * 201,
        "x" * 501,
        "y" * 100_000,
        "\u00e9" * 20_000,
    ]
)
TEXT = st.one_of(WEIRD, st.text(max_size=30), st.text(min_size=200, max_size=600))
INT32 = st.one_of(
    st.sampled_from([0, 1, -1, 50, 51, 8000, 8001, 2**31 - 1, -(2**31)]),
    st.integers(-(2**31), 2**31 - 1),
)
INT64 = st.one_of(
    st.sampled_from([0, 1, -1, 2**53, 2**63 - 1, -(2**63)]), st.integers(-(2**63), 2**63 - 1)
)
ENUM = st.one_of(st.integers(0, 10), INT32)
TIMES = st.one_of(
    st.sampled_from(
        [
            "",
            "2026-10-01T00:00:00Z",
            "2026-10-01T08:00:00+08:00",
            "2026-10-01T00:00:00",  # no zone
            "2026-10-01",
            "2026-13-01T00:00:00Z",
            "0001-01-01T00:00:00+14:00",
            "9999-12-31T23:59:59-14:00",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999Z",
            "2026-10-01T00:00:00+24:00",
            "2026-10-01T00:00:00Z\x00",
            " 2026-10-01T00:00:00Z ",
            "2026-W40-1T00:00Z",
            "now",
            "2" * 10_000,
        ]
    ),
    st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()),
    TEXT,
)


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually a good value, now and then a bad one: a request then carries one or two bad
    fields and gets past validation into the reads often enough to exercise them."""
    return st.sampled_from([*[True] * 9, False]).flatmap(lambda ok: good if ok else bad)


def time_range(start: str, end: str) -> common_pb2.TimeRange:
    value = common_pb2.TimeRange(to=end)
    setattr(value, "from", start)
    return value


GOOD_TIMES = st.sampled_from(
    ["", "2026-09-30T00:00:00Z", "2026-10-01T02:00:00+00:00", "2026-10-01T08:00:00+08:00"]
)
TIME_RANGES = mostly(
    st.builds(time_range, GOOD_TIMES, GOOD_TIMES) | st.just(common_pb2.TimeRange()),
    st.builds(time_range, TIMES, TIMES),
)


@st.composite
def bad_scopes(draw: st.DrawFn) -> common_pb2.Scope:
    if draw(st.booleans()):
        unset = common_pb2.Scope()
        setattr(unset, "global", False)  # set, but false: `global` must be true when set
        return unset
    ids = draw(
        st.one_of(
            st.lists(TEXT, max_size=3),
            st.just(["p"] * 51),
            st.just([f"p{i}" for i in range(51)]),
            st.just([f"{i:03}" + "\u00e9" * 197 for i in range(50)]),  # the longest valid set
        )
    )
    return common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=ids))


def scopes(story: Story) -> st.SearchStrategy[common_pb2.Scope]:
    good = st.sampled_from(
        [
            common_pb2.Scope(),
            project_scope(story.project),
            project_scope(story.project),
            project_scope(story.granted),
            project_scope(story.project, story.granted),
            project_scope("other-project"),
            global_scope(),
        ]
    )
    return mostly(good, bad_scopes())


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@st.composite
def bad_cursors(draw: st.DrawFn, story: Story) -> str:
    real = st.sampled_from(sorted(story.cursors.values()))
    kind = draw(st.sampled_from(["other", "truncated", "edited", "forged", "text"]))
    if kind == "other":
        return draw(real)
    if kind == "truncated":
        cursor = draw(real)
        return cursor[: draw(st.integers(0, len(cursor) - 1))]
    if kind == "edited":
        cursor = draw(real)
        at = draw(st.integers(0, len(cursor) - 1))
        return (
            cursor[:at]
            + draw(st.sampled_from(["A", "_", "-", ".", "=", "é", "\x00"]))
            + cursor[at + 1 :]
        )
    if kind == "forged":
        payload: object = draw(
            st.sampled_from(
                [
                    {
                        "v": 1,
                        "t": "search",
                        "f": "",
                        "s": "global",
                        "o": "explicit",
                        "r": 0,
                        "p": [],
                    },
                    {"v": 1, "t": "read_source", "p": [10**30, "x"]},
                    [],
                    "x",
                    None,
                ]
            )
        )
        return f"{b64(json.dumps(payload).encode())}.{b64(b'0' * 16)}"
    return draw(TEXT | st.just("a" * 2049) | st.just("." * 5))


def cursors(story: Story, *own: str) -> st.SearchStrategy[str]:
    """Mostly none or the tool's own cursors (with whatever other fields were drawn)."""
    good = st.sampled_from(["", "", *(story.cursors[name] for name in own)])
    return mostly(good, bad_cursors(story))


def read_options(story: Story) -> st.SearchStrategy[graph_pb2.ReadOptions]:
    session = mostly(
        st.sampled_from(["", story.session_id]),
        st.sampled_from([str(uuid.uuid4()), "not-a-uuid", "{" + story.session_id + "}"])
        | st.uuids().map(str)
        | TEXT,
    )
    # Never an LSN ahead of the replica: waiting for it is a documented timeout, but slow.
    lsn = mostly(
        st.just(story.consistency.lsn),
        st.sampled_from(["", "0/0", "not-an-lsn", "1/2/3", "0/" + "F" * 9, "\x00"])
        | TEXT.map(lambda s: s.replace("/", "")),
    )
    return st.builds(
        lambda session_id, lsn: graph_pb2.ReadOptions(
            session_id=session_id, min_consistency=common_pb2.ConsistencyToken(lsn=lsn)
        ),
        session,
        lsn,
    )


def metadata_of(story: Story) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    bad = [
        f"bearer   {story.token}  ",
        "Bearer mtb_not_a_binding",
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Bearer " + "t" * 5_000,
    ]
    return mostly(
        st.sampled_from([(), (("authorization", f"Bearer {story.token}"),)]),
        st.sampled_from(bad).map(lambda v: (("authorization", v),)),
    )


def with_unknown_fields(message: Message, extra: bytes) -> Message:
    """The message as a newer client would send it: fields this service does not know."""
    if extra:
        message.MergeFromString(message.SerializeToString() + extra)
    return message


UNKNOWN_FIELDS = mostly(
    st.just(b""),
    st.sampled_from(
        [
            b"\xa2\x06\x0a2026-10-01",  # field 100 (as_of), a string
            b"\xf8\x06\x01",  # field 111, a varint
            b"\xa2\x06\x00\xa8\x06\x07",  # as_of empty, and field 101
        ]
    ),
)
GOOD_TYPES = st.sampled_from(list(range(1, 10)))


def object_refs(story: Story) -> st.SearchStrategy[common_pb2.ObjectRef]:
    good = st.sampled_from(
        [
            ref(common_pb2.ENTITY, "hub"),
            ref(common_pb2.EVENT, "ev-0"),
            ref(common_pb2.EVENT, "ev-3"),
            ref(common_pb2.SOURCE_REFERENCE, story.document_reference_id),
            ref(common_pb2.SOURCE_REFERENCE, story.source_reference_id),
            ref(common_pb2.EVENT, "hub"),
            ref(common_pb2.PREFERENCE, "nope"),
        ]
    )
    ids = st.sampled_from(["hub", "ev-0", "nope"]) | TEXT
    return mostly(good, st.builds(common_pb2.ObjectRef, type=ENUM, id=ids))


def searches(story: Story) -> st.SearchStrategy[Message]:
    return st.builds(
        lambda extra, **fields: with_unknown_fields(graph_pb2.SearchRequest(**fields), extra),
        UNKNOWN_FIELDS,
        query=mostly(st.sampled_from(["Step", "step 2", "hub", "migration", "é"]), TEXT),
        scope=scopes(story),
        object_types=mostly(
            st.lists(GOOD_TYPES, max_size=3),
            st.lists(ENUM, max_size=3) | st.just(list(range(20, 2_000))),
        ),
        time_range=TIME_RANGES,
        time_basis=mostly(st.integers(0, 3), ENUM),
        page_size=mostly(st.integers(0, 50), INT32),
        cursor=cursors(story, "search"),
        options=read_options(story),
    )


def contexts(story: Story) -> st.SearchStrategy[Message]:
    return st.builds(
        lambda extra, **fields: with_unknown_fields(graph_pb2.GetContextRequest(**fields), extra),
        UNKNOWN_FIELDS,
        object_ref=object_refs(story),
        scope=scopes(story),
        mode=mostly(st.integers(0, 2), ENUM),
        time_range=TIME_RANGES,
        time_basis=mostly(st.integers(0, 3), ENUM),
        page_size=mostly(st.integers(0, 50), INT32),
        cursor=cursors(story, "collection", "content"),
        content_page_size=mostly(st.integers(0, 8000), INT32),
        options=read_options(story),
        result_id=mostly(st.sampled_from(["", story.result_id]), st.just("res-unknown") | TEXT),
    )


def source_reads(story: Story) -> st.SearchStrategy[Message]:
    return st.builds(
        lambda extra, **fields: with_unknown_fields(graph_pb2.ReadSourceRequest(**fields), extra),
        UNKNOWN_FIELDS,
        source_reference_id=mostly(
            st.sampled_from([story.source_reference_id, story.document_reference_id]),
            st.just("src-unknown") | TEXT,
        ),
        scope=scopes(story),
        read_kind=mostly(st.integers(0, 3), ENUM),
        source_version=mostly(
            st.sampled_from(["", "", "1", "2"]),
            st.sampled_from(["0", "999999999999999999", "-1", "1e3", "٣"]) | TEXT,
        ),
        offset=mostly(st.integers(0, 400), INT64),
        page_size=mostly(st.integers(0, 8000), INT32),
        cursor=cursors(story, "read_source"),
        options=read_options(story),
    )


def bindings(story: Story) -> st.SearchStrategy[Message]:
    tokens = st.sampled_from([story.token, story.token + "x", "mtb_x"]) | TEXT
    return st.builds(graph_pb2.ResolveBindingRequest, token=tokens)


# ---- the property ----------------------------------------------------------------------------


async def answered_as_documented(
    graph_stub, method: str, request: Message, metadata: tuple[tuple[str, str], ...], caplog
) -> None:
    caplog.clear()
    try:
        await getattr(graph_stub, method)(request, metadata=metadata, timeout=60)
        event("OK")
    except grpc.aio.AioRpcError as error:
        failure = describe(error)
        event(f"{failure.code.name} {failure.reason}")
        documented = DOCUMENTED[method]
        assert failure.code in documented, (failure, request)
        assert failure.reason in documented[failure.code], (failure, request)
        assert failure.message.strip(), failure
        if failure.reason == "invalid_argument":
            assert failure.violations, failure
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not logged, [r.getMessage() for r in logged]


STRATEGIES: dict[str, Callable[[Story], st.SearchStrategy[Message]]] = {
    "Search": searches,
    "GetContext": contexts,
    "ReadSource": source_reads,
    "ResolveBinding": bindings,
}


@pytest.mark.parametrize("method", list(STRATEGIES))
@FUZZ
@given(data=st.data())
async def test_any_request_gets_ok_or_a_documented_error(graph_stub, story, caplog, method, data):
    request = data.draw(STRATEGIES[method](story), label="request")
    metadata = data.draw(metadata_of(story), label="metadata")
    await answered_as_documented(graph_stub, method, request, metadata, caplog)
