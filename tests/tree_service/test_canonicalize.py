"""Canonicalization: user-confirmed only, scope ruled by the realms, immutable numbered
main-line versions, and per scope only the candidates the canonical-scope table allows (with
the content the caller proposed) and none of the forbidden side effects."""

from __future__ import annotations

import uuid

import asyncpg
import grpc
import pytest

from mirrortree.rpcstatus import describe
from mirrortree.v1 import tree_pb2
from tests.conftest import unique
from tests.tree_service.helpers import (
    adopt,
    answer,
    ask,
    canonicalize,
    confirmation,
    new_tree,
    proposals,
)


async def effects_and_candidates(
    dsn: str, tree_id: str
) -> tuple[int, list[tuple[str, str, str, str]]]:
    conn = await asyncpg.connect(dsn)
    try:
        effects = await conn.fetchval(
            "SELECT count(*) FROM effects WHERE tree_id = $1", uuid.UUID(tree_id)
        )
        candidates = await conn.fetch(
            "SELECT c.kind, c.detail, c.status, c.text FROM canon_candidates c "
            "JOIN main_line_versions v ON v.id = c.version_id WHERE v.tree_id = $1 "
            "ORDER BY c.position",
            uuid.UUID(tree_id),
        )
    finally:
        await conn.close()
    return effects, [(r["kind"], r["detail"], r["status"], r["text"]) for r in candidates]


def pending(scope: int) -> list[tuple[str, str, str, str]]:
    return [(p.kind, p.tier, "pending", p.text) for p in proposals(scope)]


async def path_in(stub, realm: int, world: str = ""):
    tree = await new_tree(stub)
    question = await ask(stub, tree.id, "q", realm=realm, world=world)
    a = await answer(stub, question.id, "a")
    return tree, question, a


async def test_real_realm_canonicalizes_into_the_real_experience_main_line(cluster, tree_stub):
    tree, question, a = await path_in(tree_stub, tree_pb2.REAL)
    version = await canonicalize(
        tree_stub, tree.id, leaf=a.id, candidates=proposals(tree_pb2.REAL_EXPERIENCE)
    )
    assert version.scope == tree_pb2.REAL_EXPERIENCE
    assert (version.version, list(version.node_ids)) == (1, [question.id, a.id])
    effects, candidates = await effects_and_candidates(cluster.primary_dsn, tree.id)
    assert candidates == pending(tree_pb2.REAL_EXPERIENCE)
    assert [(c.kind, c.detail, c.subject, c.text) for c in version.candidates] == [
        (p.kind, p.tier, p.subject, p.text) for p in proposals(tree_pb2.REAL_EXPERIENCE)
    ]
    assert effects == 0  # no bond, persona change, authorization or real action
    assert {"bond", "authorization", "real_world_action", "persona_change"} <= set(
        version.forbidden_effects
    )
    assert list(version.manual_extractions) == []


async def test_world_realm_canonicalizes_into_that_worlds_canon_only(cluster, tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.WORLD, "Arden")
    version = await canonicalize(
        tree_stub, tree.id, leaf=a.id, candidates=proposals(tree_pb2.WORLD_CANON)
    )
    assert (version.scope, version.world) == (tree_pb2.WORLD_CANON, "Arden")
    effects, candidates = await effects_and_candidates(cluster.primary_dsn, tree.id)
    assert candidates == pending(tree_pb2.WORLD_CANON)
    assert effects == 0  # no real truth, bond, authorization, cost or external consequence
    assert {"real_truth_update", "cost", "external_consequence"} <= set(version.forbidden_effects)


async def test_rehearsal_canonicalizes_into_a_rehearsal_record_only(cluster, tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REHEARSAL)
    version = await canonicalize(
        tree_stub, tree.id, leaf=a.id, candidates=proposals(tree_pb2.REHEARSAL_RECORD)
    )
    assert version.scope == tree_pb2.REHEARSAL_RECORD
    effects, candidates = await effects_and_candidates(cluster.primary_dsn, tree.id)
    assert candidates == pending(tree_pb2.REHEARSAL_RECORD)
    assert effects == 0  # no real record, bond, authorization, persona truth or action
    assert list(version.manual_extractions) == ["insight", "opinion", "hypothesis"]
    assert "real_record" in version.forbidden_effects


async def test_the_service_proposes_no_candidate_itself(cluster, tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    version = await canonicalize(tree_stub, tree.id, leaf=a.id)
    assert list(version.candidates) == []
    assert (await effects_and_candidates(cluster.primary_dsn, tree.id))[1] == []


@pytest.mark.parametrize(
    ("realm", "world", "kind"),
    [
        (tree_pb2.REAL, "", "world_memory"),
        (tree_pb2.WORLD, "Arden", "memory_candidate"),
        (tree_pb2.REHEARSAL, "", "heart_trace"),
    ],
)
async def test_a_candidate_its_scope_does_not_allow_is_refused_and_nothing_written(
    cluster, tree_stub, realm, world, kind
):
    tree, _, a = await path_in(tree_stub, realm, world)
    fine = tree_pb2.CandidateProposal(kind="real_record", text="t")
    if realm != tree_pb2.REAL:
        fine.kind = "world_record" if realm == tree_pb2.WORLD else "rehearsal_record"
    wrong = tree_pb2.CandidateProposal(kind=kind, text="t")
    if kind != "heart_trace":
        wrong.subject = "s"
    if kind == "memory_candidate":
        wrong.tier = "core"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=a.id, candidates=[fine, wrong])
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert failure.violations[0].field == "candidates[1].kind"
    assert "may produce" in failure.violations[0].description
    listed = await tree_stub.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id)
    )
    assert list(listed.versions) == []
    assert (await effects_and_candidates(cluster.primary_dsn, tree.id))[1] == []


@pytest.mark.parametrize(
    ("proposal", "field"),
    [
        (tree_pb2.CandidateProposal(kind="memory_candidate", subject="s", text="t"), "tier"),
        (
            tree_pb2.CandidateProposal(
                kind="memory_candidate", tier="forever", subject="s", text="t"
            ),
            "tier",
        ),
        (tree_pb2.CandidateProposal(kind="heart_trace", tier="core", text="t"), "tier"),
        (tree_pb2.CandidateProposal(kind="memory_candidate", tier="core", text="t"), "subject"),
        (tree_pb2.CandidateProposal(kind="heart_trace", subject="s", text="t"), "subject"),
        (tree_pb2.CandidateProposal(kind="heart_trace"), "text"),
        (tree_pb2.CandidateProposal(kind="heart_trace", text="x" * 4_001), "text"),
        (tree_pb2.CandidateProposal(text="t"), "kind"),
    ],
)
async def test_a_malformed_candidate_is_refused_naming_its_field(tree_stub, proposal, field):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=a.id, candidates=[proposal])
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == [f"candidates[0].{field}"]


async def test_more_than_twenty_candidates_are_refused(tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    many = [tree_pb2.CandidateProposal(kind="heart_trace", text=f"t{i}") for i in range(21)]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=a.id, candidates=many)
    assert describe(caught.value).violations[0].field == "candidates"


@pytest.mark.parametrize(
    ("second", "message"),
    [((tree_pb2.REHEARSAL, ""), "mixes realms"), ((tree_pb2.WORLD, "Other"), "mixes realms")],
)
async def test_mixed_realms_are_refused_with_a_reason(tree_stub, second, message):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id, realm=tree_pb2.REAL)
    a = await answer(tree_stub, question.id, realm=second[0], world=second[1])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=a.id)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.FAILED_PRECONDITION
    assert message in failure.message


async def test_two_worlds_are_refused(tree_stub):
    tree = await new_tree(tree_stub)
    question = await ask(tree_stub, tree.id, realm=tree_pb2.WORLD, world="Arden")
    a = await answer(tree_stub, question.id, realm=tree_pb2.WORLD, world="Brest")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=a.id)
    assert "spans worlds" in describe(caught.value).message


async def test_without_a_user_confirmation_nothing_is_canonicalized(tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    request = tree_pb2.CanonicalizeRequest(
        idempotency_key=unique("k"),
        tree_id=tree.id,
        leaf_node_id=a.id,
        confirmation=tree_pb2.UserConfirmation(confirmed=False, user_id="system"),
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.Canonicalize(request)
    assert describe(caught.value).violations[0].field == "confirmation.confirmed"
    listed = await tree_stub.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id)
    )
    assert list(listed.versions) == []


async def test_selected_nodes_canonicalize_in_tree_order(tree_stub):
    tree, question, a = await path_in(tree_stub, tree_pb2.REAL)
    b = await answer(tree_stub, question.id, "b")
    version = await canonicalize(tree_stub, tree.id, nodes=[b.id, question.id])
    assert list(version.node_ids) == [question.id, b.id]
    assert a.id not in version.node_ids


async def test_later_versions_append_and_never_rewrite_earlier_ones(cluster, tree_stub):
    tree, question, a = await path_in(tree_stub, tree_pb2.REAL)
    b = await answer(tree_stub, question.id, "b")
    first = await canonicalize(tree_stub, tree.id, leaf=a.id)
    now = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    assert (now.adopted_answer_id, now.revision) == (a.id, question.revision + 1)
    await adopt(tree_stub, question.id, b.id, now.revision)  # adoption never touches canon
    second = await canonicalize(tree_stub, tree.id, leaf=b.id, expected=1)
    assert (second.version, second.replaces_version_id) == (2, first.id)
    listed = await tree_stub.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id, scope=tree_pb2.REAL_EXPERIENCE)
    )
    assert [v.version for v in listed.versions] == [2, 1]
    earlier = listed.versions[1]
    assert list(earlier.node_ids) == [question.id, a.id]
    assert [n.text for n in earlier.snapshot] == ["q", "a"]
    assert earlier.snapshot[0].adopted_answer_id == a.id  # as canonicalized: adopted with it
    conn = await asyncpg.connect(cluster.primary_dsn)
    try:
        with pytest.raises(asyncpg.IntegrityConstraintViolationError, match="immutable"):
            await conn.execute(
                "UPDATE main_line_versions SET confirmed_by = 'x' WHERE id = $1",
                uuid.UUID(first.id),
            )
    finally:
        await conn.close()


async def test_a_stale_expected_version_is_aborted_with_the_current_one(tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    await canonicalize(tree_stub, tree.id, leaf=a.id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=a.id, expected=0)
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.ABORTED
    assert failure.metadata["current_revision"] == "1"


async def test_streaming_or_frozen_answers_cannot_be_canonicalized(tree_stub):
    tree, question, _ = await path_in(tree_stub, tree_pb2.REAL)
    opened = []

    async def requests():
        yield tree_pb2.StreamAnswerRequest(
            open=tree_pb2.StreamAnswerRequest.Open(
                idempotency_key=unique("k"), question_id=question.id
            )
        )

    async for response in tree_stub.StreamAnswer(requests()):
        opened.append(response.opened.id)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, leaf=opened[0])
    assert describe(caught.value).code == grpc.StatusCode.FAILED_PRECONDITION


async def test_confirmation_names_the_user(tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    version = await canonicalize(tree_stub, tree.id, leaf=a.id)
    assert version.confirmed_by == confirmation().user_id


async def test_main_line_versions_filter_by_scope_and_world(tree_stub):
    tree = await new_tree(tree_stub)
    for world in ("narnia", "oz"):
        question = await ask(tree_stub, tree.id, "q", realm=tree_pb2.WORLD, world=world)
        await canonicalize(tree_stub, tree.id, leaf=(await answer(tree_stub, question.id)).id)
    real = await ask(tree_stub, tree.id, "q", realm=tree_pb2.REAL)
    await canonicalize(tree_stub, tree.id, leaf=(await answer(tree_stub, real.id)).id)

    async def listed(
        scope: tree_pb2.CanonicalScope = tree_pb2.CANONICAL_SCOPE_UNSPECIFIED, world: str = ""
    ) -> list[tuple[int, str]]:
        response = await tree_stub.ListMainLineVersions(
            tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id, scope=scope, world=world)
        )
        return sorted((v.scope, v.world) for v in response.versions)

    assert await listed(tree_pb2.WORLD_CANON) == [
        (tree_pb2.WORLD_CANON, "narnia"),
        (tree_pb2.WORLD_CANON, "oz"),
    ]
    assert await listed(world="oz") == [(tree_pb2.WORLD_CANON, "oz")]
    assert await listed(tree_pb2.WORLD_CANON, "narnia") == [(tree_pb2.WORLD_CANON, "narnia")]
    assert len(await listed()) == 3
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await listed(tree_pb2.REAL_EXPERIENCE, "narnia")
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["world"]


async def test_selected_nodes_on_competing_branches_are_refused(tree_stub):
    tree, question, yes = await path_in(tree_stub, tree_pb2.REAL)
    no = await answer(tree_stub, question.id, "no")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await canonicalize(tree_stub, tree.id, nodes=[question.id, yes.id, no.id])
    failure = describe(caught.value)
    assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in failure.violations] == ["nodes.node_ids[1]"]
    listed = await tree_stub.ListMainLineVersions(
        tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id)
    )
    assert list(listed.versions) == []


async def test_selected_nodes_may_skip_nodes_of_their_path(tree_stub):
    tree, question, a = await path_in(tree_stub, tree_pb2.REAL)
    follow_up = await ask(tree_stub, tree.id, "and?", parent_id=a.id)
    last = await answer(tree_stub, follow_up.id, "so.")
    version = await canonicalize(tree_stub, tree.id, nodes=[last.id, question.id])
    assert list(version.node_ids) == [question.id, last.id]


async def test_main_line_versions_page_newest_first_without_duplicates_or_gaps(tree_stub):
    tree, _, a = await path_in(tree_stub, tree_pb2.REAL)
    for expected in range(5):
        await canonicalize(tree_stub, tree.id, leaf=a.id, expected=expected)

    async def page(token: str) -> tree_pb2.ListMainLineVersionsResponse:
        response: tree_pb2.ListMainLineVersionsResponse = await tree_stub.ListMainLineVersions(
            tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id, page_size=2, page_token=token)
        )
        return response

    first = await page("")
    # A version recorded while a client pages is newer than every page: it shifts nothing.
    await canonicalize(tree_stub, tree.id, leaf=a.id, expected=5)
    listed, token, pages = [v.version for v in first.versions], first.next_page_token, 1
    while token:
        response = await page(token)
        listed += [v.version for v in response.versions]
        token, pages = response.next_page_token, pages + 1
    assert (listed, pages) == ([5, 4, 3, 2, 1], 3)
    assert [v.text for v in first.versions[0].snapshot] == ["q", "a"]


async def test_a_main_line_page_token_of_another_tree_or_malformed_is_refused(tree_stub):
    tree, _, _ = await path_in(tree_stub, tree_pb2.REAL)
    other, _, b = await path_in(tree_stub, tree_pb2.REAL)
    foreign = await canonicalize(tree_stub, other.id, leaf=b.id)
    for token in (foreign.id, "not-a-token", str(uuid.uuid4())):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tree_stub.ListMainLineVersions(
                tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id, page_token=token)
            )
        failure = describe(caught.value)
        assert failure.code == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in failure.violations] == ["page_token"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await tree_stub.ListMainLineVersions(
            tree_pb2.ListMainLineVersionsRequest(tree_id=tree.id, page_size=101)
        )
    assert [v.field for v in describe(caught.value).violations] == ["page_size"]


async def test_a_main_line_snapshot_reads_as_canonicalized_and_unknown_versions_are_named(
    tree_stub,
):
    tree, question, a = await path_in(tree_stub, tree_pb2.REAL)
    b = await answer(tree_stub, question.id, "b")
    version = await canonicalize(tree_stub, tree.id, leaf=a.id)
    now = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    await adopt(tree_stub, question.id, b.id, now.revision)  # the tree moves on
    first = await tree_stub.GetMainLineSnapshot(
        tree_pb2.GetMainLineSnapshotRequest(version_id=version.id, page_size=1)
    )
    rest = await tree_stub.GetMainLineSnapshot(
        tree_pb2.GetMainLineSnapshotRequest(version_id=version.id, page_token=first.next_page_token)
    )
    assert [n.text for n in [*first.nodes, *rest.nodes]] == ["q", "a"]
    assert first.nodes[0].adopted_answer_id == a.id  # as canonicalized: adopted with it
    assert (first.snapshot_length, rest.next_page_token) == (2, "")
    for version_id, code in (
        (str(uuid.uuid4()), grpc.StatusCode.NOT_FOUND),
        ("v1", grpc.StatusCode.INVALID_ARGUMENT),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tree_stub.GetMainLineSnapshot(
                tree_pb2.GetMainLineSnapshotRequest(version_id=version_id)
            )
        assert describe(caught.value).code == code


async def test_canonicalizing_an_answer_never_adopted_adopts_it_in_the_same_write(tree_stub):
    """Seed 001 §3: candidate → adopted → canonicalized. The user's confirmation of a path
    adopts each answer on it that its question had not adopted, recorded on the question."""
    tree, question, a = await path_in(tree_stub, tree_pb2.REAL)
    b = await answer(tree_stub, question.id, "b")
    await adopt(tree_stub, question.id, a.id, question.revision)
    adopted = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    await canonicalize(tree_stub, tree.id, leaf=b.id)
    now = (await tree_stub.GetNode(tree_pb2.GetNodeRequest(node_id=question.id))).node
    assert (now.adopted_answer_id, now.revision) == (b.id, adopted.revision + 1)
    lifecycles = {
        n.id: n.lifecycle
        for n in (await tree_stub.ListNodes(tree_pb2.ListNodesRequest(tree_id=tree.id))).nodes
    }
    assert lifecycles[b.id] == tree_pb2.CANONICALIZED
    assert lifecycles[a.id] != tree_pb2.CANONICALIZED
