"""Story files (mirrortree.story/1): checked whole before anything is sent, loaded through
TreeService in order, replayed unchanged on a second load; the command line's exit codes,
messages and progress lines; and the demo dataset's fragments."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from devtools import demo, storyfile
from mirrortree.protoscope import project_scope
from mirrortree.rpcstatus import describe
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import create_tree, unique

REPO = Path(__file__).resolve().parents[1]
NOTES_V1 = "Notes: we pick SQLite for the prototype."
NOTES_V2 = NOTES_V1 + " Update: move to PostgreSQL because of lock waits."


def reference(ref_id: str, source_id: str, version: str, text: str, fragment: str, *, project):
    start = text.index(fragment)
    return {
        "id": ref_id,
        "sourceType": "document",
        "sourceId": source_id,
        "sourceVersion": version,
        "fragment": fragment,
        "fragmentStart": start,
        "fragmentEnd": start + len(fragment),
        "locator": {"projectId": project, "known": True},
    }


def review(tag: str, name: str, project: str, **objects: Any) -> dict[str, Any]:
    return {
        "resultId": f"{tag}-{name}",
        "scope": {"projects": {"projectIds": [project]}},
        "phase": "daily",
        "reviewGeneratedAt": "2026-10-02T01:00:00+08:00",
        **objects,
    }


def event(event_id: str, title: str, *cites: str) -> dict[str, Any]:
    return {
        "id": event_id,
        "kind": "DECISION",
        "title": title,
        "confirmationState": "CONFIRMED",
        "sourceReferenceIds": list(cites),
    }


def story(tag: str) -> dict[str, Any]:
    """Two revisions of a document, a preference, and two results: A, then B replacing A."""
    project, source = f"proj-{tag}", f"doc-{tag}"
    notes = {"sourceId": source, "sourceType": "document", "projectId": project, "title": "Notes"}
    return {
        "format": storyfile.FORMAT,
        "sources": [
            {**notes, "text": NOTES_V1},
            {**notes, "text": NOTES_V2, "expectedRevision": 1},
        ],
        "preferences": [
            {
                "preferenceId": f"pref-{tag}",
                "scope": {"projects": {"projectIds": [project]}},
                "subject": "infrastructure",
                "text": "Prefer boring infrastructure.",
                "confirmedBy": "tester",
            }
        ],
        "reviews": [
            review(
                tag,
                "r1",
                project,
                sourceReferences=[
                    reference(f"{tag}-s1", source, "1", NOTES_V1, "we pick SQLite", project=project)
                ],
                events=[event(f"{tag}-ev-a", "Pick SQLite", f"{tag}-s1")],
            ),
            review(
                tag,
                "r2",
                project,
                sourceReferences=[
                    reference(
                        f"{tag}-s2",
                        source,
                        "2",
                        NOTES_V2,
                        "move to PostgreSQL because",
                        project=project,
                    )
                ],
                events=[event(f"{tag}-ev-b", "Move to PostgreSQL", f"{tag}-s2")],
                relations=[
                    {
                        "id": f"{tag}-rel-replaces",
                        "kind": "REPLACES",
                        "from": {"type": "EVENT", "id": f"{tag}-ev-b"},
                        "to": {"type": "EVENT", "id": f"{tag}-ev-a"},
                        "reason": "Lock waits on SQLite.",
                        "sourceReferenceIds": [f"{tag}-s2"],
                    }
                ],
            ),
        ],
    }


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / f"{unique('story')}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


async def run_module(
    module: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """A command line as a user runs it (asynchronously: the servers share this loop)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        *args,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return await run_module("devtools.storyfile", *args, env=env)


async def search(graph_stub, tag: str, query: str, token) -> graph_pb2.SearchResponse:
    response: graph_pb2.SearchResponse = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query=query,
            scope=project_scope([f"proj-{tag}"]),
            page_size=50,
            options=graph_pb2.ReadOptions(min_consistency=token),
        )
    )
    return response


async def current_revision(call, request) -> str:
    """The revision a source or preference is at, read from the conflict an impossible
    expected revision provokes (a write that can never succeed, so nothing changes)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(request)
    failure = describe(caught.value)
    assert (failure.code, failure.reason) == (grpc.StatusCode.ABORTED, "revision_conflict")
    return failure.metadata["current_revision"]


async def source_revision(tree_stub, tag: str) -> str:
    return await current_revision(
        tree_stub.RecordSource,
        tree_pb2.RecordSourceRequest(
            idempotency_key=unique("k"),
            source_id=f"doc-{tag}",
            source_type="document",
            text="probe",
            expected_revision=99,
        ),
    )


async def fresh_token(tree_stub) -> common_pb2.ConsistencyToken:
    """A token taken after everything before it: reads at it see whatever had landed."""
    token: common_pb2.ConsistencyToken = (await create_tree(tree_stub)).consistency
    return token


async def assert_nothing_landed(tree_stub, graph_stub, tag: str) -> None:
    assert await source_revision(tree_stub, tag) == "0"
    found = await search(graph_stub, tag, "SQLite", await fresh_token(tree_stub))
    assert list(found.hits) == []


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# ---- loading through the API ----------------------------------------------------------


async def test_a_file_loads_in_order_and_a_second_load_is_a_pure_replay(
    tree_service, tree_stub, graph_stub, tmp_path, monkeypatch
):
    tag = unique("t")
    path = write(tmp_path, story(tag))
    target = f"127.0.0.1:{tree_service.port}"

    first = await storyfile.load_file(path, target, progress=False)
    assert (first.sources, first.preferences, first.reviews) == (2, 1, 2)
    assert first.objects == 5  # r1: reference, event; r2: reference, event, relation
    assert first.summary() == (
        "loaded 2 sources, 1 preference, 2 reviews (5 objects); "
        f"consistency {first.consistency.lsn}"
    )
    before = await search(graph_stub, tag, "SQLite", first.consistency)
    assert {h.ref.id for h in before.hits} >= {f"{tag}-ev-a", f"{tag}-s1"}

    # On a terminal the bar is one line redrawn in place, ended once at the end.
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    second = await storyfile.load_file(path, target, progress=True)
    monkeypatch.undo()
    drawn = terminal.getvalue()
    assert drawn.startswith("\r[") and drawn.count("\n") == 1 and drawn.endswith("\n")
    assert f"[##################] 5/5 reviews {tag}-r2" in drawn

    assert (second.sources, second.preferences, second.reviews) == (2, 1, 2)
    assert second.objects == first.objects
    after = await search(graph_stub, tag, "SQLite", second.consistency)
    assert after.basis.read_revision == before.basis.read_revision
    assert [(h.ref.id, h.time.recorded_at) for h in after.hits] == [
        (h.ref.id, h.time.recorded_at) for h in before.hits
    ]
    assert await source_revision(tree_stub, tag) == "2"
    assert (
        await current_revision(
            tree_stub.SetPreference,
            tree_pb2.SetPreferenceRequest(
                idempotency_key=unique("k"),
                preference_id=f"pref-{tag}",
                scope=project_scope([f"proj-{tag}"]),
                subject="s",
                text="t",
                confirmed_by="tester",
                expected_revision=99,
            ),
        )
        == "1"
    )


def test_the_key_comes_from_the_content_not_its_spelling():
    camel = {"sourceId": "d", "sourceType": "document", "text": "x"}
    snake = {"source_id": "d", "source_type": "document", "text": "x", "expected_revision": 0}
    keys = [
        storyfile.parse_story({"format": storyfile.FORMAT, "sources": [s]}).elements[0]
        for s in (camel, snake)
    ]
    assert keys[0].request.idempotency_key == keys[1].request.idempotency_key  # type: ignore[attr-defined]
    assert keys[0].request.idempotency_key.startswith("load:")  # type: ignore[attr-defined]
    assert len(keys[0].request.idempotency_key) == 45  # type: ignore[attr-defined]


def test_the_latest_token_compares_lsns_as_positions_not_text():
    tokens = [common_pb2.ConsistencyToken(lsn=lsn) for lsn in ("0/FFFFFF", "1/10", "", "0/9")]
    assert storyfile.latest(*tokens).lsn == "1/10"
    assert storyfile.latest().lsn == ""


# ---- the command line -----------------------------------------------------------------


async def test_the_command_line_loads_a_file_and_prints_progress_and_a_summary(
    tree_service, graph_stub, tmp_path
):
    tag = unique("t")
    path = write(tmp_path, story(tag))
    code, out, err = await run_cli(
        str(path), env={"MIRRORTREE_TREE_TARGET": f"127.0.0.1:{tree_service.port}"}
    )
    assert code == 0, err
    summary = out.strip()
    assert summary.startswith("loaded 2 sources, 1 preference, 2 reviews (5 objects); consistency ")
    lsn = summary.rsplit(" ", 1)[1]
    # Not a terminal: a line at the start and at each 10% step, never a carriage return.
    lines = err.splitlines()
    assert "\r" not in err
    assert lines[0] == "[..................] 0/5"
    assert lines[-1] == f"[##################] 5/5 reviews {tag}-r2"
    assert len(lines) == 6  # 0/5, then each element is a 20% step
    found = await search(graph_stub, tag, "PostgreSQL", common_pb2.ConsistencyToken(lsn=lsn))
    assert f"{tag}-ev-b" in {h.ref.id for h in found.hits}


def bad_unknown_field(data: dict[str, Any]) -> str:
    data["reviews"][1]["events"][0]["colour"] = "red"
    return (
        'reviews[1]: Failed to parse events field: Message type "mirrortree.v1.EventInput" '
        'has no field named "colour" at "RecordReviewRequest.events[0]"'
    )


def bad_idempotency_key(data: dict[str, Any]) -> str:
    data["reviews"][1]["idempotency_key"] = "mine"
    return "reviews[1].idempotency_key: must not be in a story file"


def bad_format(data: dict[str, Any]) -> str:
    data["format"] = "mirrortree.story/2"
    return 'format: must be "mirrortree.story/1"'


def bad_fragment(data: dict[str, Any]) -> str:
    data["reviews"][1]["sourceReferences"][0]["fragmentStart"] -= 1
    data["reviews"][1]["sourceReferences"][0]["fragmentEnd"] -= 1
    return "reviews[1].sourceReferences[0].fragment: is not the text at"


def bad_spelled_twice(data: dict[str, Any]) -> str:
    reference = data["reviews"][1]["sourceReferences"][0]
    reference["source_id"] = reference["sourceId"] + "-other"
    return (
        "reviews[1].sourceReferences[0].sourceId and reviews[1].sourceReferences[0].source_id: "
        "one field written both ways"
    )


def bad_naive_time(data: dict[str, Any]) -> str:
    data["reviews"][1]["reviewGeneratedAt"] = "2026-10-02T01:00:00"
    return "reviews[1].reviewGeneratedAt: '2026-10-02T01:00:00' has no time zone"


def bad_uncited_reference(data: dict[str, Any]) -> str:
    data["reviews"][1]["events"][0]["sourceReferenceIds"] = ["nowhere"]
    return "reviews[1].events[0].sourceReferenceIds[0]: names source reference 'nowhere'"


@pytest.mark.parametrize(
    "spoil",
    [
        bad_unknown_field,
        bad_idempotency_key,
        bad_format,
        bad_fragment,
        bad_spelled_twice,
        bad_naive_time,
        bad_uncited_reference,
        None,
    ],
)
async def test_an_invalid_file_exits_2_naming_the_problem_and_sends_nothing(
    spoil, tree_service, tree_stub, graph_stub, tmp_path
):
    tag = unique("t")
    data = story(tag)
    if spoil is None:  # broken JSON
        path = write(tmp_path, json.dumps(data)[:-2] + ",}")
        expected = "invalid JSON at line 1 column"
    else:
        expected = spoil(data)
        path = write(tmp_path, data)
    code, out, err = await run_cli(str(path), "--target", f"127.0.0.1:{tree_service.port}")
    assert code == 2, err
    assert out == ""
    assert err.startswith(f"error: {path}: ")
    assert expected in err
    await assert_nothing_landed(tree_stub, graph_stub, tag)


async def test_a_second_invalid_file_stops_the_first_valid_one_from_being_sent(
    tree_service, tree_stub, graph_stub, tmp_path
):
    tag = unique("t")
    good = write(tmp_path, story(tag))
    bad = write(tmp_path, {"format": storyfile.FORMAT, "reviews": {}})
    code, _, err = await run_cli(str(good), str(bad), "--target", f"127.0.0.1:{tree_service.port}")
    assert code == 2
    assert f"{bad}: reviews: must be an array, not an object" in err
    await assert_nothing_landed(tree_stub, graph_stub, tag)


async def test_a_refused_element_exits_1_naming_it_and_nothing_after_it_is_sent(
    tree_service, tree_stub, graph_stub, tmp_path
):
    tag = unique("t")
    data = story(tag)
    del data["reviews"][1]["relations"][0]["sourceReferenceIds"]  # replaces without evidence
    data["reviews"].append(
        review(tag, "r3", f"proj-{tag}", events=[event(f"{tag}-ev-c", "Cache SQLite reads")])
    )
    path = write(tmp_path, data)
    code, out, err = await run_cli(str(path), "--target", f"127.0.0.1:{tree_service.port}")
    assert code == 1, err
    assert out == ""
    message = err.strip().splitlines()[-1]
    assert message.startswith(f'error: {path}: reviews[1] (result_id "{tag}-r2"): invalid ')
    assert "relations[0].source_reference_ids" in message
    assert message.endswith("(INVALID_ARGUMENT, invalid_argument)")
    # What came before stays loaded; what came after was never sent.
    landed = await search(graph_stub, tag, "SQLite", await fresh_token(tree_stub))
    ids = {h.ref.id for h in landed.hits}
    assert f"{tag}-ev-a" in ids and f"{tag}-ev-c" not in ids
    assert await source_revision(tree_stub, tag) == "2"


async def test_a_review_changed_after_loading_is_refused_asking_for_a_new_result_id(
    tree_service, tmp_path
):
    tag = unique("t")
    data = story(tag)
    target = f"127.0.0.1:{tree_service.port}"
    await storyfile.load_file(write(tmp_path, data), target, progress=False)
    data["reviews"][0]["events"][0]["title"] = "Pick SQLite, retitled"
    with pytest.raises(storyfile.ElementRefused) as caught:
        await storyfile.load_file(write(tmp_path, data), target, progress=False)
    message = str(caught.value)
    assert f'reviews[0] (result_id "{tag}-r1")' in message
    assert "cannot be changed" in message and "new resultId" in message
    assert "idempotency key" not in message and "new key" not in message


async def test_deeply_nested_json_is_an_invalid_file_not_a_crash(tmp_path):
    path = write(tmp_path, '{"format": "mirrortree.story/1", "x": ' + "[" * 100_000)
    code, out, err = await run_cli(str(path), "--target", "127.0.0.1:1")
    assert code == 2, err
    assert out == ""
    assert err.startswith(f"error: {path}: invalid JSON: ")
    assert "nested too deeply" in err and "Traceback" not in err


def test_a_file_starting_with_a_byte_order_mark_reads(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(story(unique("t"))).encode())
    assert len(storyfile.read_story(path).elements) == 5


async def test_an_unreachable_target_fails_on_the_first_element(tmp_path):
    path = write(tmp_path, story(unique("t")))
    with pytest.raises(storyfile.ServiceUnreachable) as caught:
        await storyfile.load_file(path, "127.0.0.1:1", progress=False)
    assert caught.value.failure.code == grpc.StatusCode.UNAVAILABLE
    assert caught.value.element.name.startswith("sources[0] ")
    assert caught.value.exit_code == 1


# ---- the demo dataset and the documented example ---------------------------------------


def test_every_demo_fragment_is_the_exact_text_of_the_revision_it_names():
    data = json.loads((REPO / "devtools" / "demo_story.json").read_text(encoding="utf-8"))
    revisions: dict[tuple[str, str], str] = {}
    for entry in data["sources"]:
        revisions[(entry["sourceId"], str(entry.get("expectedRevision", 0) + 1))] = entry["text"]
    checked = 0
    for result in data["reviews"]:
        for ref in result.get("sourceReferences", []):
            text = revisions[(ref["sourceId"], ref["sourceVersion"])]
            start, end = ref["fragmentStart"], ref["fragmentEnd"]
            assert text[start:end] == ref["fragment"], ref["id"]
            assert end - start == len(ref["fragment"])
            checked += 1
    assert checked == 4
    # The notes keep three revisions; the task one.
    assert sorted(revisions) == [
        ("doc-storage-notes", "1"),
        ("doc-storage-notes", "2"),
        ("doc-storage-notes", "3"),
        ("task-migrate-postgres", "1"),
    ]


async def test_the_demo_story_loads_and_replays(tree_service, graph_stub):
    target = f"127.0.0.1:{tree_service.port}"
    first = await storyfile.load_story(demo.demo_story(), target, progress=False)
    again = await storyfile.load_story(demo.demo_story(), target, progress=False)
    assert (first.sources, first.preferences, first.reviews, first.objects) == (4, 1, 3, 23)
    assert again.objects == first.objects
    found = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="PostgreSQL",
            scope=project_scope([demo.DEMO_PROJECT]),
            page_size=50,
            options=graph_pb2.ReadOptions(min_consistency=again.consistency),
        )
    )
    ids = {h.ref.id for h in found.hits}
    assert {"ev-revise-b", "chg-storage-b", "lf-migration-not-started", "src-task"} <= ids


def test_the_documented_example_is_a_valid_story_file():
    doc = (REPO / "docs" / "story-file-format.md").read_text(encoding="utf-8")
    example = doc.split("## A complete example", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    loaded = storyfile.parse_story_text(example, origin="example")
    assert [e.kind.name for e in loaded.elements] == [
        "sources",
        "sources",
        "preferences",
        "reviews",
        "reviews",
    ]


async def test_an_unreachable_service_is_named_with_how_to_point_the_loader_elsewhere(tmp_path):
    path = write(tmp_path, story(unique("t")))
    code, out, err = await run_cli(str(path), "--target", "127.0.0.1:9")
    assert (code, out) == (1, "")
    assert "error: TreeService at 127.0.0.1:9 is unreachable (" in err
    assert "Is the stack running? --target or $MIRRORTREE_TREE_TARGET" in err
