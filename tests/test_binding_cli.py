"""`python -m devtools.binding`: a token for the gateway without writing gRPC code — it reads
the project asked for, says which switch would still hide the tools, and switches them on only
when asked. The switches are global rows, so the test restores what it changed."""

from __future__ import annotations

from mirrortree.v1 import graph_pb2, tree_pb2
from tests.conftest import create_tree, unique
from tests.gateway.test_gating import app_off, capability
from tests.test_storyfile import run_module


async def run_cli(*args: str) -> tuple[int, str, str]:
    return await run_module("devtools.binding", *args)


async def resolved(graph_stub, token: str) -> graph_pb2.ResolveBindingResponse:
    response: graph_pb2.ResolveBindingResponse = await graph_stub.ResolveBinding(
        graph_pb2.ResolveBindingRequest(token=token)
    )
    return response


async def test_a_token_reads_the_project_asked_for_and_a_second_run_reuses_its_session(
    tree_service, graph_stub
):
    project = unique("proj")
    target = f"127.0.0.1:{tree_service.port}"
    code, out, err = await run_cli("--project", project, "--target", target, "--grant", "global")
    assert code == 0, err
    token = out.strip()
    assert len(out.splitlines()) == 1 and "warning" not in err  # the suite runs switched on
    first = await resolved(graph_stub, token)
    assert first.project_id == project and first.runtime == "OpenCode"
    assert [s.WhichOneof("kind") for s in first.allowed_scopes] == ["global"]
    code, out, _ = await run_cli("--project", project, "--target", target)
    again = await resolved(graph_stub, out.strip())
    assert code == 0 and out.strip() != token and again.session_id == first.session_id


async def test_switches_that_hide_the_tools_are_named_and_switched_on_only_when_asked(
    tree_service, tree_stub, graph_stub
):
    target = f"127.0.0.1:{tree_service.port}"
    before = await tree_stub.GetSettings(tree_pb2.GetSettingsRequest())
    others = [r for r in before.story_graph.assignments if r != "Continue"]
    async with app_off(tree_service), capability(tree_stub, enabled=True, assignments=others):
        code, out, err = await run_cli(
            "--project", unique("proj"), "--runtime", "Continue", "--target", target
        )
        assert code == 0 and out.strip()
        assert "warning: the tools stay hidden while the supervisor app is switched off" in err
        assert "not assigned to runtime 'Continue'" in err
        code, out, err = await run_cli(
            "--project", unique("proj"), "--runtime", "Continue", "--enable", "--target", target
        )
        assert code == 0 and "warning" not in err, err
        settings = await tree_stub.GetSettings(tree_pb2.GetSettingsRequest())
        assert settings.heartbeat_enabled and settings.story_graph.enabled
        assert "Continue" in settings.story_graph.assignments
        assert (await resolved(graph_stub, out.strip())).runtime == "Continue"


async def test_what_cannot_be_done_is_refused_with_the_reason(tree_service, tree_stub):
    target = f"127.0.0.1:{tree_service.port}"
    other = (await create_tree(tree_stub, project_id=unique("elsewhere"))).tree
    code, out, err = await run_cli("--project", "mine", "--session", other.id, "--target", target)
    assert (code, out) == (1, "")
    assert f"is in project {other.project_id!r}, not 'mine'" in err
    code, out, err = await run_cli("--project", "p", "--grant", "everything", "--target", target)
    assert (code, out) == (2, "") and "neither 'global' nor 'project:ID" in err
    code, out, err = await run_cli("--project", "p", "--target", "127.0.0.1:9")
    assert (code, out) == (1, "") and "is the stack running?" in err
