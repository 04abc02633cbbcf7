"""A small demo dataset, written through TreeService's public API (never straight to SQL).

Two parts: a conversation tree (two questions, their answers, the adopted answer and a
user-confirmed main-line version, then beside that path a second candidate answer, a
verification of the adopted answer and a side question settled as a concluded branch), written
here; and the story graph, loaded from the story file
`demo_story.json` (see docs/story-file-format.md). The story follows the acceptance scenario of
the story-graph contract: a meeting-notes document with three revisions, decision A, a later
evidenced revision to B that replaces it, an added option C that does not replace B and
contradicts a confirmed preference, a task that is not started, an old event recorded last and
an event whose time is unknown. Every write uses fixed idempotency keys (the story file's are
derived from its content), so loading it twice changes nothing; only the runtime binding is new
each time (its token is shown once).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from importlib import resources

import grpc

from devtools import storyfile
from mirrortree.protoscope import project_scope
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc

DEMO_PROJECT = "demo"  # the project of the demo tree and of everything in demo_story.json
DEMO_STORY = "demo_story.json"


@dataclass(frozen=True)
class DemoInfo:
    session_id: str
    project_id: str
    binding_token: str
    consistency: common_pb2.ConsistencyToken


def _key(name: str) -> str:
    return f"demo:{name}"


async def load(tree_target: str) -> DemoInfo:
    """Write the demo tree and its questions, load the demo story file; issue a binding."""
    # Checked before anything is written, like every story file.
    story = demo_story()
    async with grpc.aio.insecure_channel(tree_target) as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        # New installations start with the supervisor app off; the demo switches it on, as a
        # user would, so the story-graph tools answer.
        settings = await stub.GetSettings(tree_pb2.GetSettingsRequest())
        if not settings.heartbeat_enabled:
            await stub.SetAppEnabled(
                tree_pb2.SetAppEnabledRequest(
                    idempotency_key=_key(f"app-on-{settings.app_revision}"),
                    enabled=True,
                    expected_revision=settings.app_revision,
                )
            )
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
        canonical = await stub.Canonicalize(
            tree_pb2.CanonicalizeRequest(
                idempotency_key=_key("canonicalize"),
                tree_id=tree.id,
                leaf_node_id=postgres.node.id,
                confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="demo-user"),
                candidates=[
                    tree_pb2.CandidateProposal(
                        kind="heart_trace",
                        text="Relief: the lock waits finally have an explanation.",
                    ),
                    tree_pb2.CandidateProposal(
                        kind="memory_candidate",
                        tier="long_term",
                        subject="sync server",
                        text="The sync server runs on PostgreSQL; SQLite lock waits ruled it out.",
                    ),
                ],
            )
        )
        # The user keeps the memory candidate: it becomes long-term memory of the project (a
        # version canonicalized by an older demo has none).
        for candidate in canonical.version.candidates:
            if candidate.kind == "memory_candidate":
                await stub.AcceptCanonCandidate(
                    tree_pb2.ReviewCanonCandidateRequest(
                        idempotency_key=_key("remember"),
                        candidate_id=candidate.id,
                        expected_revision=1,
                        reviewed_by="demo-user",
                        reason="Worth remembering",
                    )
                )
        await _side_work(stub, tree.id, first.node.id, sqlite.node.id, postgres.node.id)
        loaded = await storyfile.load_story(story, tree_target)
        binding = await stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=_key(f"binding-{uuid.uuid4().hex}"),
                session_id=tree.id,
                runtime="OpenCode",
            )
        )
    consistency = storyfile.latest(canonical.consistency, binding.consistency, loaded.consistency)
    return DemoInfo(tree.id, DEMO_PROJECT, binding.token, consistency)


async def _side_work(
    stub: tree_pb2_grpc.TreeServiceStub,
    tree_id: str,
    question_id: str,
    sqlite_id: str,
    postgres_id: str,
) -> None:
    """What grew beside the confirmed path: a second candidate answer, a verification of the
    adopted one, and a side question settled as a concluded branch."""
    await stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=_key("a1-alt"),
            question_id=question_id,
            text="Use PostgreSQL from day one: no migration later, one more service now.",
            content=tree_pb2.GeneratedContent(
                conditions=tree_pb2.RunConditions(model_strategy="demo/thorough")
            ),
        )
    )
    await stub.AddContinuation(
        tree_pb2.AddContinuationRequest(
            idempotency_key=_key("verify-postgres"),
            answer_id=postgres_id,
            kind=tree_pb2.VERIFICATION,
            text="Re-ran the load test against PostgreSQL: no lock waits at 8 concurrent writers.",
        )
    )
    side = await stub.AskQuestion(
        tree_pb2.AskQuestionRequest(
            idempotency_key=_key("q-wal"),
            tree_id=tree_id,
            parent_id=sqlite_id,
            text="Would SQLite in WAL mode be enough for several writers?",
        )
    )
    await stub.AddAnswer(
        tree_pb2.AddAnswerRequest(
            idempotency_key=_key("a-wal"),
            question_id=side.node.id,
            text="No: WAL lets readers run beside the writer, but still one writer at a time.",
        )
    )
    await stub.SetBranchState(
        tree_pb2.SetBranchStateRequest(
            idempotency_key=_key("conclude-wal"),
            node_id=side.node.id,
            state=tree_pb2.CONCLUDED,
            expected_revision=1,
            changed_by="demo-user",
            summary="WAL mode does not lift the single-writer limit; settled by moving to "
            "PostgreSQL.",
        )
    )


def demo_story() -> storyfile.Story:
    """The demo story file, read from the installed package."""
    text = resources.files("devtools").joinpath(DEMO_STORY).read_text(encoding="utf-8")
    return storyfile.parse_story_text(text, origin=DEMO_STORY)


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
