"""Whatever a client sends, every TreeService RPC answers OK or one of the codes its rpc comment
documents, with a message (and, for bad input, a named field) — never INTERNAL or UNKNOWN, never
an error logged by the server, and a refused write leaves no row behind.

Requests are generated from weird strings, wrong and unknown ids, out-of-range numbers and
unknown enum values, mixed with the valid ids of a small real conversation so that the checks
get past the first field. Examples are derandomized: the same requests every run.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import grpc
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import adopt, answer, ask, canonicalize, new_tree

Req = tree_pb2.StreamAnswerRequest
Code = grpc.StatusCode

READ = {Code.OK, Code.INVALID_ARGUMENT, Code.NOT_FOUND}
# The file comment: a reused idempotency key is ALREADY_EXISTS for every mutating RPC.
APPEND = {*READ, Code.FAILED_PRECONDITION, Code.ALREADY_EXISTS}
FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# ---- the small real conversation the generated requests point into ------------------------


@dataclass(frozen=True)
class Conversation:
    """Real ids of every kind: two trees of two owners, nodes of every kind and state."""

    tree: str
    other_tree: str  # another owner's tree
    root: str  # question
    answer: str  # sealed, adopted
    sibling: str  # a second sealed answer of the root
    continuation: str
    follow_up: str  # question under `answer`
    follow_answer: str
    frozen: str  # frozen bud with one chunk
    empty_frozen: str  # frozen before its first chunk
    other_question: str  # in the other tree
    other_answer: str
    version: str  # main-line version of root → answer

    def ids(self) -> list[str]:
        return [
            self.tree,
            self.other_tree,
            self.root,
            self.answer,
            self.sibling,
            self.continuation,
            self.follow_up,
            self.follow_answer,
            self.frozen,
            self.empty_frozen,
            self.other_question,
            self.other_answer,
            self.version,
        ]


async def bud(stub, question_id: str, chunks: list[str]) -> str:
    """A bud frozen by a half-close after `chunks`."""
    messages = [Req(open=Req.Open(idempotency_key=unique("k"), question_id=question_id))]
    messages += [Req(chunk=Req.Chunk(seq=i, text=t)) for i, t in enumerate(chunks, 1)]
    opened = ""
    async for response in stub.StreamAnswer(iter(messages)):
        if response.HasField("opened"):
            opened = response.opened.id
    return opened


@pytest_asyncio.fixture(scope="module")
async def conversation(tree_stub) -> Conversation:
    tree = await new_tree(tree_stub)
    other = await new_tree(tree_stub, owner="someone-else")
    root = await ask(tree_stub, tree.id, "What is the plan?")
    first = await answer(tree_stub, root.id, "Plan A")
    sibling = await answer(tree_stub, root.id, "Plan B")
    await adopt(tree_stub, root.id, first.id, root.revision)
    continuation = await tree_stub.AddContinuation(
        tree_pb2.AddContinuationRequest(
            idempotency_key=unique("k"), answer_id=first.id, kind=tree_pb2.ELABORATION, text="c"
        )
    )
    follow_up = await ask(tree_stub, tree.id, "And then?", parent_id=first.id)
    follow_answer = await answer(tree_stub, follow_up.id, "Then B")
    version = await canonicalize(tree_stub, tree.id, leaf=first.id)
    other_question = await ask(tree_stub, other.id, "Elsewhere?")
    other_answer = await answer(tree_stub, other_question.id, "Yes")
    return Conversation(
        tree=tree.id,
        other_tree=other.id,
        root=root.id,
        answer=first.id,
        sibling=sibling.id,
        continuation=continuation.node.id,
        follow_up=follow_up.id,
        follow_answer=follow_answer.id,
        frozen=await bud(tree_stub, root.id, ["part one "]),
        empty_frozen=await bud(tree_stub, root.id, []),
        other_question=other_question.id,
        other_answer=other_answer.id,
        version=version.id,
    )


# ---- generated values ---------------------------------------------------------------------

ODD_CHARS = [
    "\x00", "\x01", "\x1f", "\x7f", "\t", "\n", "\r", "\u0085", "\u00a0", "\u200b", "\u200d",
    "\u2028", "\u202e", "\ufeff", "\ufffd", "\uffff", "\ue000", "\U0001f600", "\U0010ffff",
    "\u0378", "e\u0301", "\u4e16", "'", '"', "\\", "%", "{", "$1", "-", "_", " ",
]  # fmt: skip
LENGTHS = [127, 128, 199, 200, 201, 500, 501, 2_000, 2_001, 4_000, 4_001, 16_000, 16_001]
LENGTHS += [20_001, 100_000, 100_001]


def strings() -> st.SearchStrategy[str]:
    """Empty, whitespace, control characters, NUL, odd unicode (no lone surrogates: protobuf
    refuses to send those), long and over-long text."""
    return st.one_of(
        st.sampled_from(["", " ", " \t\n ", "\x00", "a\x00b", "ok", "Plan", "0", "-1"]),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=24),
        st.lists(st.sampled_from(ODD_CHARS), min_size=1, max_size=12).map("".join),
        st.builds(
            lambda unit, n: unit * n,
            st.sampled_from(["a", " ", "\U0001f600"]),
            st.sampled_from(LENGTHS),
        ),
    )


def ids(conversation: Conversation) -> st.SearchStrategy[str]:
    """Real ids of every kind (so checks get past the first field), unknown UUIDs, UUIDs in
    unusual spellings, and strings that are no id at all."""
    real = st.sampled_from(conversation.ids())
    spelled = st.builds(
        lambda value, spelling: spelling(value),
        real,
        st.sampled_from(
            [
                str.upper,
                lambda v: "{" + v + "}",
                lambda v: "urn:uuid:" + v,
                lambda v: v.replace("-", ""),
                lambda v: " " + v,
                lambda v: v + "\n",
                lambda v: v[:-1],
                lambda v: "+" + v.replace("-", "")[1:],
                lambda v: v.replace("-", "")[:16] + "_" + v.replace("-", "")[17:],
            ]
        ),
    )
    unknown = st.uuids().map(str)
    return st.one_of(real, real, real, spelled, unknown, strings())


def ints(bits: int = 64) -> st.SearchStrategy[int]:
    top = 2 ** (bits - 1)
    return st.one_of(
        st.sampled_from([0, 1, 2, 3, -1, top - 1, -top, 10**18, 10**18 - 1, 2**31, 2**31 - 1]),
        st.integers(-top, top - 1),
    ).filter(lambda v: -top <= v < top)


def page_tokens(conversation: Conversation) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(["", "0", "1", "2", "-1", "1e3", "٣", "999999999999999999", "10" * 10]),
        st.integers(0, 10**19).map(str),
        ids(conversation),
    )


def enums(values: list[int]) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from([*values, -1, 99, 2**31 - 1, -(2**31)]), st.integers(-5, 9))


REALMS = enums([0, 1, 2, 3])
DUPLICATE_KEYS = [f"fuzz-shared-key-{i}" for i in range(3)]
KEYS = st.one_of(
    st.builds(lambda: unique("fuzz")),
    st.builds(lambda: unique("fuzz")),
    st.sampled_from(DUPLICATE_KEYS),
    st.sampled_from(["", " ", "a b", "é", "k\x00", "x" * 128, "x" * 129]),
)
TIMES = st.one_of(
    st.sampled_from(
        [
            "",
            "2024-05-01T10:00:00Z",
            "2024-05-01T10:00:00+08:00",
            "2024-05-01T10:00:00",  # no zone
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "9999-12-31T23:59:59Z",
            "2024-05-01T10:00:00+24:00",
            "2024-05-01T10:00:00.1234567Z",
            " 2024-05-01T10:00:00Z ",
            "2024-05-01T10:00:00Z\x00",
            "now",
        ]
    ),
    strings(),
)


def nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


JSONISH = st.one_of(
    st.sampled_from(
        [
            "",
            "{}",
            "[]",
            "null",
            '{"story_graph_enabled": false}',
            '{"story_graph_enabled": "no"}',
            '{"a": NaN}',
            '{"a": 1e999}',
            '{"a": "\\u0000"}',
            '{"a": "\\ud800"}',
            '{"\\ud800": 1}',
            '{"a": 1' + "0" * 5000 + "}",
            '{"a": ' + "1" * 4000 + "}",
            '{"a": 1e-999}',
            '{"a": 1, "a": 2}',
            "{'a': 1}",
        ]
    ),
    st.integers(1, 200_000).map(lambda d: '{"a": ' + nested_json(min(d, 100_000)) + "}"),
    st.sampled_from([99, 100, 101, 5000]).map(lambda d: '{"a": ' + nested_json(d) + "}"),
    strings(),
)


def conditions() -> st.SearchStrategy[tree_pb2.RunConditions]:
    return st.builds(
        tree_pb2.RunConditions,
        model_strategy=strings(),
        parameters=st.dictionaries(strings(), strings(), max_size=3),
    )


def generated() -> st.SearchStrategy[tree_pb2.GeneratedContent]:
    return st.builds(
        tree_pb2.GeneratedContent,
        conditions=conditions(),
        reasoning_summary=strings(),
        evidence=st.lists(strings(), max_size=3),
        tool_trace=st.lists(
            st.builds(
                tree_pb2.ToolTraceEntry,
                tool=strings(),
                input_summary=strings(),
                output_summary=strings(),
            ),
            max_size=2,
        ),
        chain_of_thought=st.sampled_from(["", "", "", "hidden", "\x00"]),
    )


def attachments(conversation: Conversation) -> st.SearchStrategy[list[tree_pb2.Attachment]]:
    return st.lists(
        st.builds(
            tree_pb2.Attachment,
            id=ids(conversation),
            name=strings(),
            media_type=strings(),
            size_bytes=ints(),
        ),
        max_size=2,
    )


def citations(conversation: Conversation) -> st.SearchStrategy[list[tree_pb2.Citation]]:
    return st.lists(
        st.builds(
            tree_pb2.Citation,
            node_id=ids(conversation),
            start=st.one_of(st.integers(-2, 12), ints()),
            end=st.one_of(st.integers(-2, 12), ints()),
            note=strings(),
            snapshot=st.sampled_from(["", "", "x"]),
        ),
        max_size=2,
    )


def scopes() -> st.SearchStrategy[common_pb2.Scope]:
    return st.one_of(
        st.just(common_pb2.Scope()),
        st.builds(lambda g: common_pb2.Scope(**{"global": g}), st.booleans()),
        st.builds(
            lambda p: common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=p)),
            st.lists(strings(), max_size=3),
        ),
    )


# ---- the checks ---------------------------------------------------------------------------

# Rows a refused write must not add or change. Not node revisions: ending a bud (a stream's
# own freeze, or the sweeper freezing a bud another test lost) bumps them at any time.
COUNTED = """
SELECT (SELECT count(*) FROM trees), (SELECT coalesce(sum(revision + context_revision), 0)
        FROM trees),
       (SELECT count(*) FROM nodes),
       (SELECT count(*) FROM idempotency_keys), (SELECT count(*) FROM bindings),
       (SELECT count(*) FROM review_results), (SELECT count(*) FROM graph_objects),
       (SELECT count(*) FROM graph_links), (SELECT count(*) FROM bud_chunks),
       (SELECT count(*) FROM main_line_versions), (SELECT count(*) FROM canon_candidates),
       (SELECT count(*) FROM sources), (SELECT count(*) FROM preferences),
       (SELECT coalesce(sum(version), 0) FROM main_lines)
"""


@pytest_asyncio.fixture
async def db(cluster) -> Any:
    conn = await asyncpg.connect(cluster.primary_dsn)
    yield conn
    await conn.close()


@pytest.fixture
def server_errors(caplog) -> Callable[[], list[logging.LogRecord]]:
    """The error records the in-process server logged (tracebacks of failed handlers)."""
    caplog.set_level(logging.ERROR)

    def errors() -> list[logging.LogRecord]:
        found = [r for r in caplog.records if r.levelno >= logging.ERROR]
        caplog.clear()
        return found

    return errors


async def answered(
    db,
    server_errors,
    call: Callable[[], Awaitable[Any]],
    allowed: set[grpc.StatusCode],
    *,
    writes: bool,
) -> grpc.StatusCode:
    """Run one call; its status must be allowed and named, and a refused write changes no row."""
    server_errors()
    before = tuple(await db.fetchrow(COUNTED)) if writes else None
    try:
        await call()
        code = Code.OK
    except grpc.aio.AioRpcError as error:
        failure = describe(error)
        code = failure.code
        assert code not in (Code.INTERNAL, Code.UNKNOWN), failure
        assert code in allowed, failure
        assert failure.message and failure.reason, failure
        if code == Code.INVALID_ARGUMENT:
            assert failure.violations and all(v.field for v in failure.violations), failure
        if writes:
            assert tuple(await db.fetchrow(COUNTED)) == before, f"{failure} left rows behind"
    assert not server_errors()
    return code


def unary(stub_method, request) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        return await stub_method(request, timeout=30)

    return call


# ---- one property per RPC -------------------------------------------------------------------


@FUZZ
@given(data=st.data())
async def test_create_tree(tree_stub, db, server_errors, data):
    request = tree_pb2.CreateTreeRequest(
        idempotency_key=data.draw(KEYS),
        title=data.draw(strings()),
        owner=data.draw(strings()),
        project_id=data.draw(st.one_of(st.just(""), strings())),
        default_realm=data.draw(REALMS),
        default_world=data.draw(st.one_of(st.just(""), strings())),
    )
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ALREADY_EXISTS}
    await answered(db, server_errors, unary(tree_stub.CreateTree, request), allowed, writes=True)


@FUZZ
@given(data=st.data())
async def test_reads_by_id(tree_stub, conversation, db, server_errors, data):
    some_id = data.draw(ids(conversation))
    page_size = data.draw(ints(32))
    token = data.draw(page_tokens(conversation))
    calls = [
        unary(tree_stub.GetTree, tree_pb2.GetTreeRequest(tree_id=some_id)),
        unary(tree_stub.GetNode, tree_pb2.GetNodeRequest(node_id=some_id)),
        unary(
            tree_stub.GetPath,
            tree_pb2.GetPathRequest(node_id=some_id, page_size=page_size, page_token=token),
        ),
        unary(
            tree_stub.ListNodes,
            tree_pb2.ListNodesRequest(tree_id=some_id, page_size=page_size, page_token=token),
        ),
        unary(
            tree_stub.GetMainLineSnapshot,
            tree_pb2.GetMainLineSnapshotRequest(
                version_id=some_id, page_size=page_size, page_token=token
            ),
        ),
        unary(
            tree_stub.ListMainLineVersions,
            tree_pb2.ListMainLineVersionsRequest(
                tree_id=some_id,
                scope=data.draw(enums([0, 1, 2, 3])),
                world=data.draw(st.one_of(st.just(""), strings())),
                page_size=page_size,
                page_token=token,
            ),
        ),
        unary(tree_stub.GetSessionContext, tree_pb2.GetSessionContextRequest(session_id=some_id)),
    ]
    for call in calls:
        await answered(db, server_errors, call, READ, writes=False)


@FUZZ
@given(data=st.data())
async def test_ask_question(tree_stub, conversation, db, server_errors, data):
    request = tree_pb2.AskQuestionRequest(
        idempotency_key=data.draw(KEYS),
        tree_id=data.draw(ids(conversation)),
        parent_id=data.draw(st.one_of(st.just(""), ids(conversation))),
        text=data.draw(strings()),
        realm=data.draw(REALMS),
        world=data.draw(st.one_of(st.just(""), strings())),
        conditions=data.draw(conditions()),
        attachments=data.draw(attachments(conversation)),
        citations=data.draw(citations(conversation)),
    )
    await answered(db, server_errors, unary(tree_stub.AskQuestion, request), APPEND, writes=True)


@FUZZ
@given(data=st.data())
async def test_edit_question(tree_stub, conversation, db, server_errors, data):
    request = tree_pb2.EditQuestionRequest(
        idempotency_key=data.draw(KEYS),
        question_id=data.draw(ids(conversation)),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
        text=data.draw(strings()),
        conditions=data.draw(conditions()),
        attachments=data.draw(attachments(conversation)),
        citations=data.draw(citations(conversation)),
    )
    allowed = {*APPEND, Code.ABORTED}
    await answered(db, server_errors, unary(tree_stub.EditQuestion, request), allowed, writes=True)


@FUZZ
@given(data=st.data())
async def test_add_answer_and_continuation(tree_stub, conversation, db, server_errors, data):
    realm, world = data.draw(REALMS), data.draw(st.one_of(st.just(""), strings()))
    text, content = data.draw(strings()), data.draw(generated())
    key = data.draw(KEYS)
    add_answer = tree_pb2.AddAnswerRequest(
        idempotency_key=key,
        question_id=data.draw(ids(conversation)),
        text=text,
        content=content,
        realm=realm,
        world=world,
    )
    await answered(db, server_errors, unary(tree_stub.AddAnswer, add_answer), APPEND, writes=True)
    add_continuation = tree_pb2.AddContinuationRequest(
        idempotency_key=data.draw(st.one_of(st.just(key), KEYS)),
        answer_id=data.draw(ids(conversation)),
        kind=data.draw(enums([0, 1, 2, 3, 4])),
        text=text,
        content=content,
        realm=realm,
        world=world,
    )
    await answered(
        db, server_errors, unary(tree_stub.AddContinuation, add_continuation), APPEND, writes=True
    )


@FUZZ
@given(data=st.data())
async def test_adopt_answer(tree_stub, conversation, db, server_errors, data):
    request = tree_pb2.AdoptAnswerRequest(
        idempotency_key=data.draw(KEYS),
        question_id=data.draw(ids(conversation)),
        answer_id=data.draw(ids(conversation)),
        expected_revision=data.draw(st.one_of(st.integers(-1, 4), ints())),
    )
    allowed = {*APPEND, Code.ABORTED}
    await answered(db, server_errors, unary(tree_stub.AdoptAnswer, request), allowed, writes=True)


@FUZZ
@given(data=st.data())
async def test_canonicalize(tree_stub, conversation, db, server_errors, data):
    request = tree_pb2.CanonicalizeRequest(
        idempotency_key=data.draw(KEYS),
        tree_id=data.draw(ids(conversation)),
        confirmation=tree_pb2.UserConfirmation(
            confirmed=data.draw(st.sampled_from([True, True, False])),
            user_id=data.draw(st.one_of(st.just("user-1"), strings())),
            invitation_id=data.draw(st.one_of(st.just(""), strings())),
        ),
        expected_version=data.draw(st.one_of(st.integers(-1, 3), ints())),
    )
    selection = data.draw(st.sampled_from(["leaf", "nodes", "none"]))
    if selection == "leaf":
        request.leaf_node_id = data.draw(ids(conversation))
    elif selection == "nodes":
        request.nodes.node_ids.extend(data.draw(st.lists(ids(conversation), max_size=4)))
    allowed = {*APPEND, Code.ABORTED}
    await answered(db, server_errors, unary(tree_stub.Canonicalize, request), allowed, writes=True)


def stream_messages(conversation: Conversation) -> st.SearchStrategy[list[Req]]:
    opening = st.builds(
        lambda key, question, extends, content, realm, world: Req(
            open=Req.Open(
                idempotency_key=key,
                question_id=question,
                extends_answer_id=extends,
                content=content,
                realm=realm,
                world=world,
            )
        ),
        KEYS,
        ids(conversation),
        st.one_of(st.just(""), st.just(conversation.frozen), ids(conversation)),
        generated(),
        REALMS,
        st.one_of(st.just(""), strings()),
    )
    chunk = st.builds(
        lambda seq, text: Req(chunk=Req.Chunk(seq=seq, text=text)),
        st.one_of(st.integers(-1, 4), ints()),
        st.one_of(st.just("text "), strings()),
    )
    complete = st.builds(lambda content: Req(complete=Req.Complete(content=content)), generated())
    anything = st.one_of(opening, chunk, chunk, complete, st.just(Req()))
    return st.builds(
        lambda first, rest: [first, *rest],
        st.one_of(opening, anything),
        st.lists(anything, max_size=5),
    )


@FUZZ
@given(data=st.data())
async def test_stream_answer(tree_stub, conversation, db, server_errors, data):
    messages = data.draw(stream_messages(conversation))
    opened: list[str] = []

    async def call() -> None:
        # In step: each message waits for its answer. A client that writes on after the server
        # has refused the stream meets a known grpcio asyncio client race that replaces the
        # server's status with INTERNAL "Internal error from Core" (grpc/grpc#36066).
        stream = tree_stub.StreamAnswer(timeout=30)
        for message in messages:
            await stream.write(message)
            response = await stream.read()
            if response.HasField("opened"):
                opened.append(response.opened.id)
        await stream.done_writing()
        assert await stream.read() is grpc.aio.EOF

    # A bud that opened and then met a bad message is frozen with what was acknowledged, so
    # only a stream that never opened a bud must leave no row behind.
    server_errors()
    before = tuple(await db.fetchrow(COUNTED))
    code = await answered(db, server_errors, call, APPEND, writes=False)
    if code != Code.OK and not opened:
        assert tuple(await db.fetchrow(COUNTED)) == before, f"{code} left rows behind"


def review_request(conversation: Conversation, data) -> tree_pb2.RecordReviewRequest:
    object_ids = st.one_of(st.sampled_from(["e1", "n1", "r1", "mainline-x"]), strings())
    refs = st.lists(st.one_of(st.sampled_from(["r1", "r2"]), strings()), max_size=2)
    object_refs = st.builds(common_pb2.ObjectRef, type=enums(list(range(10))), id=object_ids)
    event_times = st.builds(
        common_pb2.EventTime,
        start=TIMES,
        end=TIMES,
        precision=enums(list(range(7))),
        basis=strings(),
        known=st.booleans(),
    )
    confirmations = enums([0, 1, 2, 3, 4])
    source = st.builds(
        tree_pb2.SourceReferenceInput,
        id=st.one_of(st.sampled_from(["r1", "r2"]), object_ids),
        source_type=st.one_of(st.just("message"), strings()),
        source_id=st.one_of(ids(conversation), st.just("")),
        source_version=strings(),
        fragment=strings(),
        fragment_start=st.one_of(st.integers(-1, 5), ints()),
        fragment_end=st.one_of(st.integers(-1, 5), ints()),
        locator=st.builds(
            common_pb2.SourceLocator,
            project_id=strings(),
            session_id=ids(conversation),
            message_id=ids(conversation),
            order=ints(),
            role=strings(),
            known=st.booleans(),
        ),
    )
    relation = st.builds(
        lambda i, kind, a, b, reason, cited, state, effective, fr, tr: tree_pb2.RelationInput(
            id=i,
            kind=kind,
            to=b,
            reason=reason,
            source_reference_ids=cited,
            confirmation_state=state,
            effective_at=effective,
            from_revision=fr,
            to_revision=tr,
            **{"from": a},
        ),
        object_ids,
        enums([0, 1, 2, 3, 4]),
        object_refs,
        object_refs,
        strings(),
        refs,
        confirmations,
        TIMES,
        st.one_of(st.just(""), strings()),
        st.one_of(st.just(""), strings()),
    )
    return tree_pb2.RecordReviewRequest(
        idempotency_key=data.draw(KEYS),
        result_id=data.draw(st.one_of(st.builds(lambda: unique("result")), object_ids)),
        scope=data.draw(scopes()),
        phase=data.draw(st.one_of(st.just("daily"), strings())),
        covered=common_pb2.TimeRange(**{"from": data.draw(TIMES), "to": data.draw(TIMES)}),
        review_generated_at=data.draw(TIMES),
        story_lines=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.StoryLineInput,
                    id=object_ids,
                    title=strings(),
                    event_ids=st.lists(object_ids, max_size=2),
                    entity_ids=st.lists(object_ids, max_size=2),
                ),
                max_size=1,
            )
        ),
        events=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.EventInput,
                    id=object_ids,
                    kind=enums([0, 1, 2, 3, 4]),
                    title=strings(),
                    description=strings(),
                    event_time=event_times,
                    confirmation_state=confirmations,
                    entity_ids=st.lists(object_ids, max_size=2),
                    source_reference_ids=refs,
                ),
                max_size=2,
            )
        ),
        entities=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.EntityInput,
                    id=object_ids,
                    label=strings(),
                    description=strings(),
                    revision=strings(),
                    confirmation_state=confirmations,
                    source_reference_ids=refs,
                ),
                max_size=2,
            )
        ),
        summaries=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.SummaryInput,
                    id=object_ids,
                    title=strings(),
                    text=strings(),
                    fact_refs=st.lists(object_refs, max_size=2),
                ),
                max_size=1,
            )
        ),
        source_references=data.draw(st.lists(source, max_size=2)),
        excluded_source_types=data.draw(st.lists(strings(), max_size=2)),
        relations=data.draw(st.lists(relation, max_size=2)),
        entity_changes=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.EntityChangeInput,
                    id=object_ids,
                    entity_id=object_ids,
                    event_id=st.one_of(st.just(""), object_ids),
                    change_type=st.one_of(st.just("completed"), strings()),
                    description=strings(),
                    entity_revision=strings(),
                    applies_at=event_times,
                    source_reference_ids=refs,
                    confirmation_state=confirmations,
                ),
                max_size=1,
            )
        ),
        leaf_facts=data.draw(
            st.lists(
                st.builds(
                    tree_pb2.LeafFactInput,
                    id=object_ids,
                    text=strings(),
                    about=st.lists(object_refs, max_size=2),
                    source_reference_ids=refs,
                    event_time=event_times,
                    confirmation_state=confirmations,
                ),
                max_size=2,
            )
        ),
        coverage_gaps=data.draw(st.lists(strings(), max_size=2)),
    )


@FUZZ
@given(data=st.data())
async def test_record_review(tree_stub, conversation, db, server_errors, data):
    request = review_request(conversation, data)
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ALREADY_EXISTS}
    await answered(db, server_errors, unary(tree_stub.RecordReview, request), allowed, writes=True)


@FUZZ
@given(data=st.data())
async def test_record_source_and_set_preference(tree_stub, conversation, db, server_errors, data):
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ABORTED, Code.ALREADY_EXISTS}
    source = tree_pb2.RecordSourceRequest(
        idempotency_key=data.draw(KEYS),
        source_id=data.draw(st.one_of(st.sampled_from(["s1", "s2"]), ids(conversation))),
        source_type=data.draw(
            st.one_of(st.sampled_from(["task_status", "knowledge", "document"]), strings())
        ),
        project_id=data.draw(st.one_of(st.just(""), strings())),
        title=data.draw(strings()),
        text=data.draw(strings()),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
        deleted=data.draw(st.booleans()),
    )
    await answered(db, server_errors, unary(tree_stub.RecordSource, source), allowed, writes=True)
    preference = tree_pb2.SetPreferenceRequest(
        idempotency_key=data.draw(KEYS),
        preference_id=data.draw(st.one_of(st.sampled_from(["p1", "p2"]), strings())),
        scope=data.draw(scopes()),
        subject=data.draw(strings()),
        text=data.draw(strings()),
        about=data.draw(
            st.lists(
                st.builds(common_pb2.ObjectRef, type=enums(list(range(10))), id=strings()),
                max_size=2,
            )
        ),
        confirmed_by=data.draw(st.one_of(st.just("user-1"), strings())),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
    )
    await answered(
        db, server_errors, unary(tree_stub.SetPreference, preference), allowed, writes=True
    )


@FUZZ
@given(data=st.data())
async def test_settings_switches(tree_stub, db, server_errors, data):
    # Other modules need the app and capability as they left them: a write that this
    # property lets through sets the values they already have.
    current = await tree_stub.GetSettings(tree_pb2.GetSettingsRequest())
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ABORTED, Code.ALREADY_EXISTS}
    revision = st.one_of(st.integers(-1, 3), ints())
    app = tree_pb2.SetAppEnabledRequest(
        idempotency_key=data.draw(KEYS),
        enabled=current.heartbeat_enabled,
        expected_revision=data.draw(st.one_of(st.just(current.app_revision), revision)),
    )
    await answered(db, server_errors, unary(tree_stub.SetAppEnabled, app), allowed, writes=True)
    capability = tree_pb2.SetCapabilityRequest(
        idempotency_key=data.draw(KEYS),
        capability_id=data.draw(st.one_of(st.just("story-graph"), strings())),
        enabled=current.story_graph.enabled,
        assignments=data.draw(
            st.one_of(
                st.just(list(current.story_graph.assignments)),
                st.lists(st.one_of(st.just("Model"), strings()), max_size=2),
            )
        ),
        expected_revision=data.draw(st.one_of(st.just(current.story_graph.revision), revision)),
    )
    if list(capability.assignments) != list(current.story_graph.assignments):
        capability.expected_revision = data.draw(revision.filter(lambda r: r < 1 or r > 10**6))
    await answered(
        db, server_errors, unary(tree_stub.SetCapability, capability), allowed, writes=True
    )


@FUZZ
@given(data=st.data())
async def test_session_context_and_bindings(tree_stub, conversation, db, server_errors, data):
    # Sessions are trees; the fuzz only writes to the conversation's own session.
    session = data.draw(ids(conversation))
    switch = tree_pb2.SetSessionStoryGraphRequest(
        idempotency_key=data.draw(KEYS), session_id=session, enabled=data.draw(st.booleans())
    )
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ALREADY_EXISTS}
    await answered(
        db, server_errors, unary(tree_stub.SetSessionStoryGraph, switch), allowed, writes=True
    )
    save = tree_pb2.SaveSessionContextRequest(
        idempotency_key=data.draw(KEYS),
        session_id=session,
        context_state=data.draw(JSONISH),
        expected_revision=data.draw(st.one_of(st.integers(-1, 3), ints())),
    )
    await answered(
        db,
        server_errors,
        unary(tree_stub.SaveSessionContext, save),
        {*allowed, Code.ABORTED},
        writes=True,
    )
    binding = tree_pb2.CreateBindingRequest(
        idempotency_key=data.draw(KEYS),
        session_id=session,
        runtime=data.draw(st.one_of(st.sampled_from(["Model", "OpenCode"]), strings())),
        allowed_scopes=data.draw(st.lists(scopes(), max_size=2)),
    )
    await answered(db, server_errors, unary(tree_stub.CreateBinding, binding), allowed, writes=True)


def valid_review(conversation: Conversation) -> tree_pb2.RecordReviewRequest:
    """A result that is recorded as it is: one of each kind of object, in one fixed project,
    so that later results may link to (and conflict with) earlier ones."""
    e, n, r = common_pb2.EVENT, common_pb2.ENTITY, common_pb2.SOURCE_REFERENCE
    return tree_pb2.RecordReviewRequest(
        idempotency_key=unique("fuzz"),
        result_id=unique("result"),
        scope=common_pb2.Scope(projects=common_pb2.ProjectSet(project_ids=["fuzz-project"])),
        phase="daily",
        review_generated_at="2024-05-01T10:00:00Z",
        covered=common_pb2.TimeRange(**{"from": "2024-04-30T00:00:00Z"}),
        source_references=[
            tree_pb2.SourceReferenceInput(
                id="r1",
                source_type="message",
                source_id=conversation.answer,
                fragment="Plan A",
                fragment_end=6,
            )
        ],
        events=[
            tree_pb2.EventInput(
                id="e1",
                kind=tree_pb2.DECISION,
                title="Plan A",
                entity_ids=["n1"],
                source_reference_ids=["r1"],
                event_time=common_pb2.EventTime(start="2024-04-30T12:00:00+08:00", known=True),
            ),
            tree_pb2.EventInput(id="e0", kind=tree_pb2.DECISION, title="Plan 0"),
        ],
        entities=[tree_pb2.EntityInput(id="n1", label="The plan", source_reference_ids=["r1"])],
        story_lines=[tree_pb2.StoryLineInput(id="l1", title="Plans", event_ids=["e1"])],
        relations=[
            tree_pb2.RelationInput(
                id="x1",
                kind=tree_pb2.REPLACES,
                to=common_pb2.ObjectRef(type=e, id="e0"),
                reason="decided",
                source_reference_ids=["r1"],
                effective_at="2024-04-30T12:00:00Z",
                **{"from": common_pb2.ObjectRef(type=e, id="e1")},  # type: ignore[arg-type]
            )
        ],
        entity_changes=[
            tree_pb2.EntityChangeInput(
                id="c1", entity_id="n1", event_id="e1", change_type="decided"
            )
        ],
        leaf_facts=[
            tree_pb2.LeafFactInput(
                id="f1",
                text="Plan A was chosen",
                about=[common_pb2.ObjectRef(type=n, id="n1")],
                source_reference_ids=["r1"],
            )
        ],
        summaries=[
            tree_pb2.SummaryInput(
                id="s1", title="Day", text="t", fact_refs=[common_pb2.ObjectRef(type=r, id="r1")]
            )
        ],
        excluded_source_types=["attachment"],
        coverage_gaps=["none"],
    )


def _set(path: str) -> Callable[[tree_pb2.RecordReviewRequest, str], None]:
    """A setter of one string field (`events[0].title`) or list (`coverage_gaps[]`)."""

    def setter(request: tree_pb2.RecordReviewRequest, value: str) -> None:
        target: Any = request
        *parents, last = path.split(".")
        for part in parents:
            name, _, index = part.partition("[")
            target = getattr(target, name)
            if index:
                target = target[int(index.rstrip("]"))]
        if last.endswith("[]"):
            getattr(target, last[:-2]).append(value)
        else:
            setattr(target, last, value)

    return setter


REVIEW_FIELDS = [
    "result_id",
    "phase",
    "review_generated_at",
    "covered.to",
    "scope.projects.project_ids[]",
    "source_references[0].id",
    "source_references[0].source_type",
    "source_references[0].source_id",
    "source_references[0].source_version",
    "source_references[0].fragment",
    "source_references[0].locator.session_id",
    "events[0].id",
    "events[0].title",
    "events[0].event_time.start",
    "events[0].event_time.end",
    "events[0].entity_ids[]",
    "events[0].source_reference_ids[]",
    "entities[0].id",
    "entities[0].label",
    "entities[0].revision",
    "story_lines[0].event_ids[]",
    "relations[0].id",
    "relations[0].to.id",
    "relations[0].reason",
    "relations[0].from_revision",
    "relations[0].effective_at",
    "entity_changes[0].entity_id",
    "entity_changes[0].change_type",
    "leaf_facts[0].text",
    "leaf_facts[0].about[0].id",
    "summaries[0].fact_refs[0].id",
    "excluded_source_types[]",
    "coverage_gaps[]",
]


@FUZZ
@given(data=st.data())
async def test_record_review_with_one_bad_field(tree_stub, conversation, db, server_errors, data):
    request = valid_review(conversation)
    for path in data.draw(st.lists(st.sampled_from(REVIEW_FIELDS), min_size=1, max_size=2)):
        value = data.draw(
            st.one_of(strings(), TIMES, ids(conversation), st.sampled_from(["e0", "e1", "r1"]))
        )
        _set(path)(request, value)
    allowed = {Code.OK, Code.INVALID_ARGUMENT, Code.ALREADY_EXISTS}
    await answered(db, server_errors, unary(tree_stub.RecordReview, request), allowed, writes=True)
