"""The operations of the mix, timed on the asyncio loop, and the ledger of what was acknowledged.

Every operation returns its Samples; load.users fires them as Locust request events. A write
enters the ledger only once the service acknowledged it, so load.verify can check that each one
is readable at the end.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from load.targets import (
    CALL_TIMEOUT_S,
    Metadata,
    Targets,
    binding_metadata,
    caller_metadata,
    open_session,
)
from mirrortree.callers import CONFIRMATION_HEADER, issue_grant
from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc

T = TypeVar("T")
Req = tree_pb2.StreamAnswerRequest
CONFLICT_REASON = "revision_conflict"
EMPTY_CALL = "health Check (an empty call)"
OWNER = "load-user"
# Words the entities' labels draw on, so searches hit a few of them, not one or all.
WORDS = ("harbor", "meadow", "copper", "lantern", "orchid", "glacier", "ember", "falcon")


@dataclass(frozen=True)
class Sample:
    """One timed call: a failure has a reason; a deliberate conflict is counted apart."""

    name: str
    ms: float
    reason: str | None = None
    conflict: bool = False


@dataclass(frozen=True)
class Review:
    entity_id: str
    source_ref_id: str
    term: str
    fragment: str
    consistency: common_pb2.ConsistencyToken
    result_id: str = ""


@dataclass
class Ledger:
    """Acknowledged writes (touched only on the loop thread)."""

    trees: set[str] = field(default_factory=set)
    nodes: dict[str, str] = field(default_factory=dict)  # node id -> text
    buds: dict[str, str] = field(default_factory=dict)  # bud id -> acknowledged chunks joined
    chunks: int = 0
    versions: dict[str, set[str]] = field(default_factory=dict)  # tree id -> main-line versions
    reviews: list[Review] = field(default_factory=list)


@dataclass
class Conversation:
    """One tree writer's tree and where its next question goes."""

    tree_id: str = ""
    parent_id: str = ""  # the last adopted answer ("" = the root)
    version: int = 0  # the main line's current version (0 = none yet)
    steps: int = 0


def error_reason(exc: BaseException) -> str:
    """The ErrorReason of a failed call (its status code without one), an MCP tool error's
    code, or the exception's type."""
    if isinstance(exc, ToolFailed):
        return exc.code
    if isinstance(exc, grpc.RpcError):
        failure = describe(exc)
        return failure.reason or failure.code.name
    return type(exc).__name__


class Workload:
    def __init__(self, targets: Targets) -> None:
        self.targets = targets
        self.ledger = Ledger()
        self.session_id = ""
        self._tree_channel: grpc.aio.Channel | None = None
        self._graph_channel: grpc.aio.Channel | None = None
        self.tree: tree_pb2_grpc.TreeServiceStub
        self.graph: graph_pb2_grpc.StoryGraphStub
        self.health: health_pb2_grpc.HealthStub
        self.binding_token = targets.binding_token

    # ---- set-up ------------------------------------------------------------------------

    def tree_metadata(self, grant: tuple[str, str] | None = None) -> Metadata:
        metadata = caller_metadata(self.targets.caller_token)
        if grant is not None and self.targets.confirmation_secret:
            action, tree_id = grant
            token = issue_grant(self.targets.confirmation_secret.encode(), action, tree_id, OWNER)
            metadata.append((CONFIRMATION_HEADER, token))
        return metadata

    def graph_metadata(self) -> Metadata:
        return binding_metadata(self.binding_token)

    async def open(self) -> None:
        """Connect; switch the app on if it is off; create the run's session and binding."""
        self._tree_channel = grpc.aio.insecure_channel(self.targets.tree)
        self._graph_channel = grpc.aio.insecure_channel(self.targets.graph)
        self.tree = tree_pb2_grpc.TreeServiceStub(self._tree_channel)
        self.graph = graph_pb2_grpc.StoryGraphStub(self._graph_channel)
        self.health = health_pb2_grpc.HealthStub(self._graph_channel)
        session = await open_session(self.tree, self.targets, title="Load session", owner=OWNER)
        self.session_id = session.session_id
        self.binding_token = session.binding_token

    async def close(self) -> None:
        for channel in (self._tree_channel, self._graph_channel):
            if channel is not None:
                await channel.close()

    # ---- timing ------------------------------------------------------------------------

    async def timed(
        self,
        samples: list[Sample],
        name: str,
        call: Callable[[], Awaitable[T]],
        *,
        conflict: bool = False,
    ) -> T | None:
        """Await call(); record its sample; None when it failed (or conflicted, as meant)."""
        started = time.perf_counter()
        try:
            result = await call()
        except Exception as exc:
            ms = (time.perf_counter() - started) * 1000
            reason = error_reason(exc)
            if conflict and reason == CONFLICT_REASON:
                samples.append(Sample(name, ms, conflict=True))
            else:
                samples.append(Sample(name, ms, reason))
            return None
        ms = (time.perf_counter() - started) * 1000
        samples.append(Sample(name, ms, "conflict_not_detected" if conflict else None))
        return result

    # ---- tree writes -------------------------------------------------------------------

    async def tree_step(self, talk: Conversation, bud_chunks: int) -> list[Sample]:
        """One turn of a conversation: a question, an answer or a bud, its adoption, a stale
        adoption (the deliberate conflict), and now and then Canonicalize."""
        samples: list[Sample] = []
        md = self.tree_metadata()
        if not talk.tree_id or talk.steps >= 12:
            created = await self.timed(
                samples,
                "CreateTree",
                lambda: self.tree.CreateTree(
                    tree_pb2.CreateTreeRequest(
                        idempotency_key=uuid.uuid4().hex,
                        title=f"Load tree {random.randrange(10**6)}",
                        owner=OWNER,
                        project_id=self.targets.project,
                    ),
                    metadata=md,
                    timeout=CALL_TIMEOUT_S,
                ),
            )
            if created is None:
                return samples
            self.ledger.trees.add(created.tree.id)
            talk.tree_id, talk.parent_id, talk.steps, talk.version = created.tree.id, "", 0, 0
        talk.steps += 1
        text = f"Question {uuid.uuid4().hex[:12]}: which {random.choice(WORDS)} option holds?"
        asked = await self.timed(
            samples,
            "AskQuestion",
            lambda: self.tree.AskQuestion(
                tree_pb2.AskQuestionRequest(
                    idempotency_key=uuid.uuid4().hex,
                    tree_id=talk.tree_id,
                    parent_id=talk.parent_id,
                    text=text,
                ),
                metadata=md,
                timeout=CALL_TIMEOUT_S,
            ),
        )
        if asked is None:
            return samples
        question = asked.node
        self.ledger.nodes[question.id] = text
        if random.random() < 0.5:
            answer_id = await self._answer(samples, question.id)
        else:
            answer_id = await self._bud(samples, question.id, bud_chunks)
        if not answer_id:
            return samples

        def adopt(revision: int) -> Callable[[], Awaitable[tree_pb2.AdoptAnswerResponse]]:
            return lambda: self.tree.AdoptAnswer(
                tree_pb2.AdoptAnswerRequest(
                    idempotency_key=uuid.uuid4().hex,
                    question_id=question.id,
                    answer_id=answer_id,
                    expected_revision=revision,
                ),
                metadata=md,
                timeout=CALL_TIMEOUT_S,
            )

        current = await self.timed(
            samples,
            "GetNode",
            lambda: self.tree.GetNode(
                tree_pb2.GetNodeRequest(node_id=question.id), metadata=md, timeout=CALL_TIMEOUT_S
            ),
        )
        if current is None:
            return samples
        revision = current.node.revision
        if await self.timed(samples, "AdoptAnswer", adopt(revision)) is None:
            return samples
        # The deliberate conflict: the same adoption again with the revision it has just moved.
        await self.timed(samples, "AdoptAnswer stale", adopt(revision), conflict=True)
        talk.parent_id = answer_id
        if talk.steps % 4 == 0:
            expected = talk.version
            canonical = await self.timed(
                samples,
                "Canonicalize",
                lambda: self.tree.Canonicalize(
                    tree_pb2.CanonicalizeRequest(
                        idempotency_key=uuid.uuid4().hex,
                        tree_id=talk.tree_id,
                        leaf_node_id=answer_id,
                        confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id=OWNER),
                        expected_version=expected,
                    ),
                    metadata=self.tree_metadata(("canonicalize", talk.tree_id)),
                    timeout=CALL_TIMEOUT_S,
                ),
            )
            if canonical is not None:
                talk.version = canonical.version.version
                self.ledger.versions.setdefault(talk.tree_id, set()).add(canonical.version.id)
        return samples

    async def _answer(self, samples: list[Sample], question_id: str) -> str:
        text = f"Answer {uuid.uuid4().hex[:12]}: take the {random.choice(WORDS)} route."
        added = await self.timed(
            samples,
            "AddAnswer",
            lambda: self.tree.AddAnswer(
                tree_pb2.AddAnswerRequest(
                    idempotency_key=uuid.uuid4().hex, question_id=question_id, text=text
                ),
                metadata=self.tree_metadata(),
                timeout=CALL_TIMEOUT_S,
            ),
        )
        if added is None:
            return ""
        self.ledger.nodes[added.node.id] = text
        return str(added.node.id)

    async def _bud(self, samples: list[Sample], question_id: str, count: int) -> str:
        """Stream an answer chunk by chunk; each acknowledged chunk enters the ledger."""
        call = self.tree.StreamAnswer(metadata=self.tree_metadata(), timeout=CALL_TIMEOUT_S * 4)
        bud_id = ""
        try:
            opened = await self.timed(
                samples,
                "StreamAnswer open",
                lambda: self._send(
                    call,
                    Req(open=Req.Open(idempotency_key=uuid.uuid4().hex, question_id=question_id)),
                ),
            )
            if opened is None:
                return ""
            bud_id = opened.opened.id
            self.ledger.buds[bud_id] = ""
            for seq in range(1, count + 1):
                text = f"chunk {seq} {random.choice(WORDS)} "
                acked = await self.timed(
                    samples,
                    "StreamAnswer chunk",
                    lambda: self._send(
                        call,
                        Req(chunk=Req.Chunk(seq=seq, text=text)),  # noqa: B023
                    ),
                )
                if acked is None:
                    return ""
                self.ledger.buds[bud_id] += text
                self.ledger.chunks += 1
            sealed = await self.timed(
                samples,
                "StreamAnswer seal",
                lambda: self._send(call, Req(complete=Req.Complete())),
            )
            if sealed is None:
                return ""
            await call.done_writing()
            # Wait for the call's status, as a client should: cancelling a call that is
            # ending races the server's final status, which grpc.aio then fails to free.
            await call.code()
            return bud_id
        finally:
            if not call.done():
                call.cancel()

    @staticmethod
    async def _send(call: Any, request: Req) -> tree_pb2.StreamAnswerResponse:
        await call.write(request)
        response = await call.read()
        if response is grpc.aio.EOF:
            raise EOFError("the stream ended before the acknowledgement")
        return response  # type: ignore[no-any-return]

    # ---- story graph -------------------------------------------------------------------

    async def ingest_step(self) -> list[Sample]:
        """RecordReview of one entity with its source reference (unique ids, a shared term)."""
        samples: list[Sample] = []
        serial = uuid.uuid4().hex[:16]
        term = random.choice(WORDS)
        entity_id, ref_id = f"load-ent-{serial}", f"load-src-{serial}"
        fragment = f"Message {serial} says the {term} service needs a second look."
        request = tree_pb2.RecordReviewRequest(
            idempotency_key=f"load-review-{serial}",
            result_id=f"load-{serial}",
            scope=project_scope([self.targets.project]),
            phase="daily",
            review_generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            entities=[
                tree_pb2.EntityInput(
                    id=entity_id,
                    label=f"{term} service {serial}",
                    description=f"The {term} service, as load conversation {serial} names it.",
                    revision="1",
                    confirmation_state=common_pb2.CONFIRMED,
                    source_reference_ids=[ref_id],
                )
            ],
            source_references=[
                tree_pb2.SourceReferenceInput(
                    id=ref_id,
                    source_type="message",
                    source_id=str(uuid.uuid4()),
                    source_version="1",
                    fragment=fragment,
                    fragment_start=0,
                    fragment_end=len(fragment),
                    locator=common_pb2.SourceLocator(
                        project_id=self.targets.project,
                        session_id=self.session_id,
                        message_id=str(uuid.uuid4()),
                        role="user",
                        known=True,
                    ),
                )
            ],
        )
        recorded = await self.timed(
            samples,
            "RecordReview",
            lambda: self.tree.RecordReview(
                request, metadata=self.tree_metadata(), timeout=CALL_TIMEOUT_S
            ),
        )
        if recorded is not None:
            self.ledger.reviews.append(
                Review(entity_id, ref_id, term, fragment, recorded.consistency, request.result_id)
            )
        return samples

    def pick(self) -> Review | None:
        """A random one of the latest acknowledged reviews."""
        recent = self.ledger.reviews[-500:]
        return random.choice(recent) if recent else None

    async def grpc_read_step(self) -> list[Sample]:
        """Search, GetContext and ReadSource over gRPC, read-your-writes by the write's token."""
        samples: list[Sample] = []
        review = self.pick()
        md, t = self.graph_metadata(), CALL_TIMEOUT_S
        options = graph_pb2.ReadOptions(min_consistency=review.consistency if review else None)
        term = review.term if review else random.choice(WORDS)
        # The bare round trip under the mix, beside the report's baselines measured quiet.
        await self.timed(
            samples,
            EMPTY_CALL,
            lambda: self.health.Check(health_pb2.HealthCheckRequest(), timeout=t),
        )
        await self.timed(
            samples,
            "Search",
            lambda: self.graph.Search(
                graph_pb2.SearchRequest(query=term, options=options), metadata=md, timeout=t
            ),
        )
        if review is None:
            return samples
        ref = common_pb2.ObjectRef(type=common_pb2.ENTITY, id=review.entity_id)
        await self.timed(
            samples,
            "GetContext",
            lambda: self.graph.GetContext(
                graph_pb2.GetContextRequest(object_ref=ref, options=options), metadata=md, timeout=t
            ),
        )
        await self.timed(
            samples,
            "ReadSource",
            lambda: self.graph.ReadSource(
                graph_pb2.ReadSourceRequest(
                    source_reference_id=review.source_ref_id, options=options
                ),
                metadata=md,
                timeout=t,
            ),
        )
        return samples


class ToolFailed(Exception):
    """An MCP tool answered with an error result; its code is the reason."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code
