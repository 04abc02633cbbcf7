"""What the TreeService bad-input fuzz tests share: the values requests are generated from and
the check every call is held to.

Whatever a client sends, every TreeService RPC answers OK or one of the codes its rpc comment
documents, with a message (and, for bad input, a named field) — never INTERNAL or UNKNOWN, never
an error logged by the server, and a refused write leaves no row behind.

Requests are generated from weird strings, wrong and unknown ids, out-of-range numbers and
unknown enum values, mixed with the valid ids of a small real conversation so that the checks
get past the first field. Examples are derandomized: the same requests every run.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, tree_pb2
from tests.conftest import unique

Req = tree_pb2.StreamAnswerRequest


Code = grpc.StatusCode


READ = {Code.OK, Code.INVALID_ARGUMENT, Code.NOT_FOUND}


# The file comment: a reused idempotency key is ALREADY_EXISTS for every mutating RPC.
APPEND = {*READ, Code.FAILED_PRECONDITION, Code.ALREADY_EXISTS}


FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")),
    deadline=None,
    derandomize=os.environ.get("FUZZ_RANDOM", "") == "",
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
    invitation: str = ""  # a pending invitation to canonicalize `sibling`
    candidate: str = ""  # a pending canon candidate of `version`

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
            *filter(None, [self.invitation, self.candidate]),
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
       (SELECT coalesce(sum(version), 0) FROM main_lines),
       (SELECT coalesce(sum(revision), 0) FROM branches),
       (SELECT count(*) FROM branch_transitions),
       (SELECT count(*) FROM canon_invitations WHERE state <> 'pending'),
       (SELECT count(*) FROM canon_invitations),
       (SELECT coalesce(sum(revision), 0) FROM canon_candidates),
       (SELECT count(*) FROM merge_references), (SELECT count(*) FROM transplants),
       (SELECT count(*) FROM authorized_citations)
"""


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
