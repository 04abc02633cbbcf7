"""Fuzzed requests to the conversation-tree RPCs — CreateTree, the reads by id, AskQuestion,
EditQuestion, AddAnswer, AddContinuation, AdoptAnswer, Canonicalize and StreamAnswer — are
answered OK or with a documented, named refusal that writes nothing (see `fuzzing`)."""

from __future__ import annotations

import grpc
from hypothesis import given
from hypothesis import strategies as st

from mirrortree.v1 import tree_pb2
from tests.tree_service.fuzzing import (
    APPEND,
    COUNTED,
    FUZZ,
    KEYS,
    READ,
    REALMS,
    Code,
    Conversation,
    Req,
    answered,
    attachments,
    citations,
    conditions,
    enums,
    generated,
    ids,
    ints,
    page_tokens,
    strings,
    unary,
)


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
