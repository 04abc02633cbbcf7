"""A session's context state: JSON that PostgreSQL's jsonb cannot store is refused at the
edge, naming the field, and the stored state is left as it was."""

from __future__ import annotations

import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import new_tree

NOT_STORABLE = {
    "nan": '{"a": NaN}',
    "infinity": '{"a": -Infinity}',
    "number_beyond_a_double": '{"a": 1e400}',
    "nul_character": '{"a": "x\\u0000y"}',
    "nul_in_a_key": '{"x\\u0000": 1}',
    "lone_surrogate": '{"a": ["\\ud800"]}',
    "deep_nesting": '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "nesting_beyond_the_limit": '{"a": ' + "[" * 100 + "]" * 100 + "}",
}


# Valid JSON, but not the object a session context is.
NOT_AN_OBJECT = {"null": "null", "array": "[]", "number": "1", "string": '"text"', "true": "true"}
REFUSED = NOT_STORABLE | NOT_AN_OBJECT


@pytest.mark.parametrize("state", REFUSED.values(), ids=REFUSED.keys())
async def test_json_that_is_no_storable_object_is_refused_naming_context_state(tree_stub, state):
    session = await new_tree(tree_stub)
    read = await tree_stub.GetSessionContext(
        tree_pb2.GetSessionContextRequest(session_id=session.id)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.SaveSessionContext(
            tree_pb2.SaveSessionContextRequest(
                idempotency_key=unique("k"),
                session_id=session.id,
                context_state=state,
                expected_revision=read.revision,
            )
        )
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.reason == "invalid_argument"
    assert [v.field for v in failure.violations] == ["context_state"]
    after = await tree_stub.GetSessionContext(
        tree_pb2.GetSessionContextRequest(session_id=session.id)
    )
    assert after.revision == read.revision


async def test_ordinary_nested_json_with_escapes_is_saved(tree_stub):
    session = await new_tree(tree_stub)
    read = await tree_stub.GetSessionContext(
        tree_pb2.GetSessionContextRequest(session_id=session.id)
    )
    state = '{"a": ' + "[" * 98 + "]" * 98 + ', "b": "\\ud83d\\ude00\\n", "c": 1.5e300}'
    saved = await tree_stub.SaveSessionContext(
        tree_pb2.SaveSessionContextRequest(
            idempotency_key=unique("k"),
            session_id=session.id,
            context_state=state,
            expected_revision=read.revision,
        )
    )
    assert saved.revision == read.revision + 1
