"""A small demo dataset, written through TreeService's public API (never straight to SQL).

The story follows the acceptance scenario of the story-graph contract: decision A, a later
evidenced revision to B, an added option C that does not replace B, and an event whose time is
unknown. Every write uses fixed idempotency keys and result ids, so loading it twice changes
nothing; only the runtime binding is new each time (its token is shown once).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import grpc

from mirrortree.protoscope import project_scope, time_range
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc

DEMO_PROJECT = "demo"
DEMO_RESULT = "demo-review-2026-10-01"


@dataclass(frozen=True)
class DemoInfo:
    session_id: str
    project_id: str
    binding_token: str
    consistency: common_pb2.ConsistencyToken


def _key(name: str) -> str:
    return f"demo:{name}"


async def load(tree_target: str) -> DemoInfo:
    """Write the demo tree, its questions and one review result; issue a binding."""
    async with grpc.aio.insecure_channel(tree_target) as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        tree = (
            await stub.CreateTree(
                tree_pb2.CreateTreeRequest(
                    idempotency_key=_key("tree"),
                    title="Choosing the storage engine",
                    owner="demo-user",
                    project_id=DEMO_PROJECT,
                )
            )
        ).tree
        first = await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=_key("q1"),
                tree_id=tree.id,
                text="Which database should the sync server use?",
            )
        )
        sqlite = await stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=_key("a1"),
                question_id=first.node.id,
                text="Start with SQLite: zero set-up while we prototype.",
                content=tree_pb2.GeneratedContent(
                    conditions=tree_pb2.RunConditions(model_strategy="demo/balanced"),
                    reasoning_summary="Prototype stage; one writer; no ops budget.",
                ),
            )
        )
        second = await stub.AskQuestion(
            tree_pb2.AskQuestionRequest(
                idempotency_key=_key("q2"),
                tree_id=tree.id,
                parent_id=sqlite.node.id,
                text="SQLite cannot take concurrent writers; should we move to PostgreSQL?",
            )
        )
        postgres = await stub.AddAnswer(
            tree_pb2.AddAnswerRequest(
                idempotency_key=_key("a2"),
                question_id=second.node.id,
                text="Yes: move the sync server to PostgreSQL; the load test shows contention.",
                content=tree_pb2.GeneratedContent(evidence=["load test: 40% lock waits"]),
            )
        )
        await _adopt_once(stub, second.node, postgres.node.id)
        # The user confirms this path into the real-experience main line (same key on every
        # run: a replay, not a second version).
        await stub.Canonicalize(
            tree_pb2.CanonicalizeRequest(
                idempotency_key=_key("canonicalize"),
                tree_id=tree.id,
                leaf_node_id=postgres.node.id,
                confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="demo-user"),
            )
        )
        await stub.RecordReview(_review(first.node, second.node))
        binding = await stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=_key(f"binding-{uuid.uuid4().hex}"),
                session_id=tree.id,
                runtime="OpenCode",
            )
        )
    return DemoInfo(tree.id, DEMO_PROJECT, binding.token, binding.consistency)


async def _adopt_once(
    stub: tree_pb2_grpc.TreeServiceStub, question: tree_pb2.Node, answer_id: str
) -> None:
    """Adopt the answer unless an earlier run already did (the question's revision moved)."""
    current = (await stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    if current.adopted_answer_id != answer_id:
        await stub.AdoptAnswer(
            tree_pb2.AdoptAnswerRequest(
                idempotency_key=_key("adopt"),
                question_id=question.id,
                answer_id=answer_id,
                expected_revision=current.revision,
            )
        )


def _source(ref_id: str, node: tree_pb2.Node, fragment: str) -> tree_pb2.SourceReferenceInput:
    start = node.text.find(fragment)
    return tree_pb2.SourceReferenceInput(
        id=ref_id,
        source_type="message",
        source_id=node.id,
        source_version=str(node.revision),
        fragment=fragment,
        fragment_start=max(start, 0),
        fragment_end=max(start, 0) + len(fragment),
        locator=common_pb2.SourceLocator(
            project_id=DEMO_PROJECT,
            session_id=node.tree_id,
            message_id=node.id,
            order=node.ordinal,
            role="user",
            known=True,
        ),
    )


def _review(first: tree_pb2.Node, second: tree_pb2.Node) -> tree_pb2.RecordReviewRequest:
    return tree_pb2.RecordReviewRequest(
        idempotency_key=_key("review"),
        result_id=DEMO_RESULT,
        scope=project_scope([DEMO_PROJECT]),
        phase="daily",
        covered=time_range("2026-09-28T00:00:00Z", "2026-10-01T00:00:00Z"),
        review_generated_at="2026-10-01T08:00:00+08:00",
        source_references=[
            _source("src-q1", first, "Which database should the sync server use?"),
            _source("src-q2", second, "SQLite cannot take concurrent writers"),
        ],
        story_lines=[
            tree_pb2.StoryLineInput(
                id="line-storage",
                title="Storage engine for the sync server",
                event_ids=["ev-decide-a", "ev-revise-b", "ev-option-c", "ev-benchmark"],
                entity_ids=["ent-storage"],
            )
        ],
        events=[
            tree_pb2.EventInput(
                id="ev-decide-a",
                kind=tree_pb2.DECISION,
                title="Decision A: use SQLite for the sync server",
                description="Chosen for zero set-up while the team prototypes.",
                event_time=common_pb2.EventTime(
                    start="2026-09-28T10:00:00Z", precision=common_pb2.MINUTE, basis="message"
                ),
                confirmation_state=common_pb2.CONFIRMED,
                entity_ids=["ent-storage"],
                source_reference_ids=["src-q1"],
            ),
            tree_pb2.EventInput(
                id="ev-revise-b",
                kind=tree_pb2.DECISION,
                title="Decision B: move the sync server to PostgreSQL",
                description=(
                    "Revised because SQLite cannot take concurrent writers; B replaces A with "
                    "the load test as evidence."
                ),
                event_time=common_pb2.EventTime(
                    start="2026-09-30T15:30:00Z", precision=common_pb2.MINUTE, basis="message"
                ),
                confirmation_state=common_pb2.CONFIRMED,
                entity_ids=["ent-storage"],
                source_reference_ids=["src-q2"],
            ),
            tree_pb2.EventInput(
                id="ev-option-c",
                kind=tree_pb2.DISCUSSION,
                title="Option C: put a Redis cache in front",
                description="Raised as an extra option; nothing says it replaces PostgreSQL.",
                event_time=common_pb2.EventTime(
                    start="2026-09-30T16:00:00Z", precision=common_pb2.HOUR, basis="message"
                ),
                confirmation_state=common_pb2.AUTO_GENERATED,
            ),
            tree_pb2.EventInput(
                id="ev-benchmark",
                kind=tree_pb2.MILESTONE,
                title="Write benchmark run against PostgreSQL",
                description="Mentioned without a date; when it happened is unknown.",
                confirmation_state=common_pb2.AUTO_GENERATED,
            ),
        ],
        entities=[
            tree_pb2.EntityInput(
                id="ent-storage",
                label="Sync server storage engine",
                description="Currently PostgreSQL (decided, not yet migrated).",
                confirmation_state=common_pb2.CONFIRMED,
            )
        ],
        summaries=[
            tree_pb2.SummaryInput(
                id="sum-2026-10-01",
                title="Storage plan changed from SQLite to PostgreSQL",
                text=(
                    "A (SQLite) was revised to B (PostgreSQL) on evidence of write contention. "
                    "C (Redis cache) is an open option. The migration is decided, not done."
                ),
                fact_refs=[
                    common_pb2.ObjectRef(type=common_pb2.EVENT, id="ev-decide-a"),
                    common_pb2.ObjectRef(type=common_pb2.EVENT, id="ev-revise-b"),
                ],
            )
        ],
    )


async def wait_until_readable(graph_target: str, info: DemoInfo) -> None:
    """Block until a replica serving graph_target has replayed the demo writes."""
    async with grpc.aio.insecure_channel(graph_target) as channel:
        graph = graph_pb2_grpc.StoryGraphStub(channel)
        await graph.Search(
            graph_pb2.SearchRequest(
                query="storage",
                scope=project_scope([info.project_id]),
                options=graph_pb2.ReadOptions(min_consistency=info.consistency),
            ),
            timeout=30,
        )
