"""The tree page in a real browser: the demo tree with its main line, candidate answers side by
side, edits as versions, continuations, branch states (a folded branch expands), and a
streaming bud whose text follows its acknowledged chunks."""

from __future__ import annotations

import asyncio

import grpc

from mirrortree.v1 import costs_pb2, tree_pb2
from tests.conftest import unique
from tests.tree_service import tasking
from tests.webview.helpers import binding_for, screenshot, sign_in, write

Req = tree_pb2.StreamAnswerRequest


async def test_the_demo_tree_renders_with_its_main_lines(page, webview_url, demo_info):
    await sign_in(page, webview_url, demo_info.binding_token)
    assert await page.inner_text("h1") == "Choosing the storage engine"
    first = page.locator("section.question").first
    assert "Which database should the sync server use?" in await first.inner_text()
    # Its two candidate answers, side by side.
    candidates = first.locator(":scope > .answers > article.answer")
    assert await candidates.count() == 2
    left, right = [await candidates.nth(i).bounding_box() for i in range(2)]
    assert left["y"] == right["y"] and right["x"] > left["x"]
    # Both answers on the confirmed path are adopted (canonicalizing adopts them).
    on_path = page.locator("article.answer.is-adopted")
    assert await on_path.count() == 2
    assert "Start with SQLite" in await on_path.nth(0).inner_text()
    adopted = on_path.nth(1)  # inside the first: follow-ups nest under their answer
    assert "move the sync server to PostgreSQL" in await adopted.inner_text()
    assert "adopted" in await adopted.locator(".badge.adopted").inner_text()
    assert "verification" in await adopted.locator("article.continuation").inner_text()
    real = page.locator(".main-line[data-scope=real]")
    assert "v1" in await real.inner_text()
    assert "it replaced nothing" in await real.inner_text()
    for scope in ("world", "rehearsal"):
        text = await page.locator(f".main-line[data-scope={scope}]").inner_text()
        assert "No version yet" in text
    # Each node of the confirmed path says it is on the main line.
    assert await page.locator(".badge.on-main-line").count() == 4
    await screenshot(page, "web-view-tree")


async def test_the_demo_trees_concluded_branch_expands(page, webview_url, demo_info):
    await sign_in(page, webview_url, demo_info.binding_token)
    branch = page.locator("details.branch[data-state=concluded]")
    assert await branch.count() == 1
    answer = branch.locator("article.answer")
    assert not await answer.is_visible()
    await branch.locator("> summary").click()
    assert await answer.is_visible()
    assert "still one writer at a time" in await answer.inner_text()
    assert "settled by moving to PostgreSQL" in await branch.inner_text()


async def test_answers_sit_side_by_side_and_edits_show_as_versions(
    page, webview_url, tree_stub, graph_stub
):
    tree = (
        await write(
            tree_stub, "CreateTree", title="Side by side", owner="u", project_id=unique("p")
        )
    ).tree
    question = (await write(tree_stub, "AskQuestion", tree_id=tree.id, text="Tabs or spaces?")).node
    first = (await write(tree_stub, "AddAnswer", question_id=question.id, text="Tabs.")).node
    await write(tree_stub, "AddAnswer", question_id=question.id, text="Spaces.")
    await write(
        tree_stub,
        "AddContinuation",
        answer_id=first.id,
        kind=tree_pb2.VERIFICATION,
        text="Checked against the style guide.",
    )
    await write(
        tree_stub,
        "EditQuestion",
        question_id=question.id,
        text="Tabs or spaces, for Python?",
        expected_revision=question.revision,
    )
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))

    versions = page.locator(".lineage details.question-version")
    assert await versions.count() == 2
    assert not await versions.nth(0).evaluate("d => d.open")  # the original, folded
    assert await versions.nth(1).evaluate("d => d.open")  # the newest edit
    assert "Tabs or spaces, for Python?" in await versions.nth(1).inner_text()
    assert "No answer yet." in await versions.nth(1).inner_text()
    continuation = page.locator("article.continuation")
    assert not await continuation.is_visible()
    await versions.nth(0).locator("summary").first.click()
    assert await continuation.is_visible()

    answers = page.locator(f"#node-{question.id} .answers > article.answer")
    assert await answers.count() == 2
    left, right = [await answers.nth(i).bounding_box() for i in range(2)]
    assert left["y"] == right["y"] and right["x"] >= left["x"] + left["width"]
    assert "verification" in await continuation.inner_text()


async def test_a_concluded_branch_starts_folded_and_expands(
    page, webview_url, tree_stub, graph_stub
):
    tree = (
        await write(tree_stub, "CreateTree", title="Branches", owner="u", project_id=unique("p"))
    ).tree
    root = (await write(tree_stub, "AskQuestion", tree_id=tree.id, text="Which cache?")).node
    answer = (await write(tree_stub, "AddAnswer", question_id=root.id, text="Maybe Redis.")).node
    side = (
        await write(
            tree_stub,
            "AskQuestion",
            tree_id=tree.id,
            parent_id=answer.id,
            text="What of memcached?",
        )
    ).node
    await write(tree_stub, "AddAnswer", question_id=side.id, text="Simpler, fewer features.")
    await write(
        tree_stub,
        "SetBranchState",
        node_id=side.id,
        state=tree_pb2.CONCLUDED,
        expected_revision=1,
        changed_by="u",
        summary="Not needed for now.",
    )
    moved = {}
    for state, text in ((tree_pb2.PAUSED, "Later: a CDN?"), (tree_pb2.ARCHIVED, "Old idea")):
        question = (
            await write(tree_stub, "AskQuestion", tree_id=tree.id, parent_id=answer.id, text=text)
        ).node
        await write(
            tree_stub,
            "SetBranchState",
            node_id=question.id,
            state=state,
            expected_revision=1,
            changed_by="u",
            reason="for the test",
        )
        moved[state] = question.id
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))

    paused = page.locator(f"details.branch[data-branch='{moved[tree_pb2.PAUSED]}']")
    assert await paused.get_attribute("data-state") == "paused"
    assert await paused.evaluate("d => d.open")  # paused work stays in sight
    archived = page.locator(f"details.branch[data-branch='{moved[tree_pb2.ARCHIVED]}']")
    assert await archived.get_attribute("data-state") == "archived"
    assert not await archived.evaluate("d => d.open")  # hidden, yet still there to open
    assert "active → archived" in await archived.text_content()

    branch = page.locator(f"details.branch[data-branch='{side.id}']")
    assert await branch.get_attribute("data-state") == "concluded"
    hidden = branch.locator("article.answer")
    assert not await hidden.is_visible()
    await branch.locator("> summary").click()
    assert await hidden.is_visible()
    assert "Not needed for now." in await branch.inner_text()
    assert "Simpler, fewer features." in await hidden.inner_text()


class Stream:
    """One StreamAnswer call, driven message by message."""

    def __init__(self, stub) -> None:
        self.queue: asyncio.Queue[Req | None] = asyncio.Queue()
        self.call = stub.StreamAnswer(self._requests())

    async def _requests(self):
        while (message := await self.queue.get()) is not None:
            yield message

    async def send(self, message: Req) -> tree_pb2.StreamAnswerResponse:
        await self.queue.put(message)
        response: tree_pb2.StreamAnswerResponse = await self.call.read()
        return response

    async def finish(self) -> None:
        await self.queue.put(None)
        while await self.call.read() is not grpc.aio.EOF:
            pass


async def test_a_streaming_bud_shows_each_chunk_once_acknowledged(
    page, webview_url, tree_stub, graph_stub
):
    tree = (
        await write(tree_stub, "CreateTree", title="Buds", owner="u", project_id=unique("p"))
    ).tree
    question = (await write(tree_stub, "AskQuestion", tree_id=tree.id, text="Stream it")).node
    stream = Stream(tree_stub)
    bud = (
        await stream.send(Req(open=Req.Open(idempotency_key=unique("k"), question_id=question.id)))
    ).opened
    assert (await stream.send(Req(chunk=Req.Chunk(seq=1, text="First words")))).ack.seq == 1
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))

    text = page.locator(f"[data-bud='{bud.id}']")
    assert await text.inner_text() == "First words"
    card = page.locator(f"#node-{bud.id}")
    assert "streaming bud" in await card.locator(".badge.state").inner_text()
    # No reload from here on: the page follows the bud by itself.
    assert (await stream.send(Req(chunk=Req.Chunk(seq=2, text=", then more")))).ack.seq == 2
    await page.wait_for_function(
        "el => el.textContent === 'First words, then more'", arg=await text.element_handle()
    )
    assert await card.locator(".chunks").inner_text() == "2"
    sealed = await stream.send(Req(complete=Req.Complete()))
    assert sealed.sealed.answer_state == tree_pb2.SEALED
    await stream.finish()
    await page.wait_for_function(
        "el => el.textContent === 'sealed'",
        arg=await card.locator(".badge.state").element_handle(),
    )


async def canonicalize(stub, tree_id: str, leaf: str, expected: int) -> tree_pb2.MainLineVersion:
    version: tree_pb2.MainLineVersion = (
        await write(
            stub,
            "Canonicalize",
            tree_id=tree_id,
            leaf_node_id=leaf,
            confirmation=tree_pb2.UserConfirmation(confirmed=True, user_id="u"),
            expected_version=expected,
        )
    ).version
    return version


async def test_each_scopes_main_line_says_what_each_version_replaced(
    page, webview_url, tree_stub, graph_stub
):
    tree = (
        await write(tree_stub, "CreateTree", title="Main lines", owner="u", project_id=unique("p"))
    ).tree
    question = (await write(tree_stub, "AskQuestion", tree_id=tree.id, text="Which?")).node
    first = (await write(tree_stub, "AddAnswer", question_id=question.id, text="First way")).node
    second = (await write(tree_stub, "AddAnswer", question_id=question.id, text="Second way")).node
    v1 = await canonicalize(tree_stub, tree.id, first.id, 0)
    v2 = await canonicalize(tree_stub, tree.id, second.id, 1)
    assert v2.replaces_version_id == v1.id
    rehearsal = (
        await write(
            tree_stub, "AskQuestion", tree_id=tree.id, text="Try it?", realm=tree_pb2.REHEARSAL
        )
    ).node
    tried = (await write(tree_stub, "AddAnswer", question_id=rehearsal.id, text="Tried.")).node
    await canonicalize(tree_stub, tree.id, tried.id, 0)
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))

    real = page.locator(".main-line[data-scope=real] li.version")
    assert await real.count() == 2
    newest = real.first
    assert (await newest.locator(".version-head").inner_text()).startswith("v2")
    assert "Replaces v1" in await newest.locator(".replaces").inner_text()
    assert await newest.locator(".replaces .left").inner_text() == "Left the line: First way"
    assert await newest.locator(".replaces .joined").inner_text() == "Joined: Second way"
    assert "it replaced nothing" in await real.nth(1).inner_text()
    assert "Try it?" in await page.inner_text(".main-line[data-scope=rehearsal]")
    assert "No version yet" in await page.inner_text(".main-line[data-scope=world]")
    # The nodes of each newest version carry its badge; the replaced answer does not.
    assert "main line: real experience v2" in await page.inner_text(f"#node-{second.id}")
    assert "main line" not in await page.inner_text(f"#node-{first.id} > .badges")


async def test_comparisons_and_task_observations_show_apart_from_the_answers(
    page, webview_url, tree_stub, graph_stub
):
    tree = (
        await write(tree_stub, "CreateTree", title="Notes", owner="u", project_id=unique("p"))
    ).tree
    question = (await write(tree_stub, "AskQuestion", tree_id=tree.id, text="Which queue?")).node
    first = (await write(tree_stub, "AddAnswer", question_id=question.id, text="Kafka.")).node
    second = (await write(tree_stub, "AddAnswer", question_id=question.id, text="SQS.")).node
    await tree_stub.CompareCandidates(
        costs_pb2.CompareCandidatesRequest(
            idempotency_key=unique("k"),
            question_id=question.id,
            answer_ids=[first.id, second.id],
            criteria=["operations <b>cost</b>"],
            verdict="SQS needs no cluster.",
            preferred_answer_id=second.id,
            conditions=costs_pb2.RunConditionsRecord(model_strategy="provider/judge"),
        )
    )
    task = await tasking.start(tree_stub, question.id)
    claimed = await tasking.claim(tree_stub, tree.id)
    await tasking.complete(tree_stub, task.id, claimed.lease_token, "Found two benchmarks.")
    await sign_in(page, webview_url, await binding_for(tree_stub, graph_stub, tree.id))

    section = page.locator(f"#node-{question.id}")
    assert await section.locator(":scope > .answers > article.answer").count() == 2
    comparison = section.locator("section.comparison")
    text = await comparison.inner_text()
    assert "SQS needs no cluster." in text and "answer 2 (preferred)" in text
    assert "operations <b>cost</b>" in text  # shown as text, never as markup
    assert await comparison.locator(f"a[href='#node-{second.id}']").count() == 1
    observation = section.locator("section.observation")
    assert "Found two benchmarks." in await observation.inner_text()
    assert "not an answer unless accepted" in await observation.inner_text()
