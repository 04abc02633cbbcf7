"""A bud's stream messages checked field by field: opening it, each chunk, completing it."""

from __future__ import annotations

from mirrortree.v1 import tree_pb2
from tree_service import convert
from tree_service.domain import AnswerState, Generated, NewAnswer

MAX_CHUNK = 16_000


def bud_open(message: tree_pb2.StreamAnswerRequest.Open) -> NewAnswer:
    check = convert.Checker()
    check.idempotency_key(message.idempotency_key)
    check.identifier("open.question_id", message.question_id)
    check.identifier("open.extends_answer_id", message.extends_answer_id, required=False)
    made = convert.generated(check, "open.content", message.content)
    choice = convert.realm_choice(check, message.realm, message.world, "open.")
    check.identifier("open.context_version_id", message.context_version_id, required=False)
    check.done()
    return NewAnswer(
        message.question_id,
        "",
        made,
        choice,
        AnswerState.STREAMING,
        message.extends_answer_id or None,
        message.context_version_id or None,
    )


def chunk(message: tree_pb2.StreamAnswerRequest.Chunk, expected_seq: int, length: int) -> None:
    """A chunk must be the next in sequence (or a re-send of an acknowledged one), and the
    bud's text (`length` code points so far) may not outgrow an answer's limit: a sealed or
    frozen answer is then read whole in one response."""
    check = convert.Checker()
    if message.seq < 1 or message.seq > expected_seq:
        check.fail(
            "chunk.seq",
            f"is {message.seq}; the next chunk is {expected_seq} (1-based, without gaps)",
        )
    # Not convert.Checker.text: whitespace is content inside a stream ("\n\n" between paragraphs),
    # so any non-empty text is a chunk.
    if not message.text:
        check.fail("chunk.text", "must not be empty")
    elif len(message.text) > MAX_CHUNK:
        check.fail(
            "chunk.text", f"is {len(message.text)} characters long; the limit is {MAX_CHUNK}"
        )
    elif "\x00" in message.text:
        check.fail("chunk.text", "contains a NUL character")
    elif message.seq == expected_seq and length + len(message.text) > convert.MAX_ANSWER:
        check.fail(
            "chunk.text",
            f"would make the answer {length + len(message.text)} characters long; the limit "
            f"is {convert.MAX_ANSWER} (continue in a new answer that extends this one)",
        )
    check.done()


def bud_complete(message: tree_pb2.StreamAnswerRequest.Complete) -> Generated:
    check = convert.Checker()
    made = convert.generated(check, "complete.content", message.content)
    check.done()
    return made
