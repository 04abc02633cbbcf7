"""docker-compose.yml's whole stack runs in the suite as `docker compose up --scale
graph_service=3 --wait` would run it (tests/deploy/compose_stack.py): the PostgreSQL primary
and replicas through the replication scripts, `migrate` to completion, then tree_service, three
graph_service instances, the gateway and the web view, each with its compose command,
environment and health check. A tree written through tree_service is then read through every
graph_service instance from the replicas, over MCP through the gateway and on the web view.

The harness's own rules (order, conditions, health checks, address mapping) are checked on small
made-up compose files that need no PostgreSQL.
"""

from __future__ import annotations

import asyncio
import functools
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
import pytest_asyncio

from devtools import binding, storyfile
from mirrortree import callers
from mirrortree.v1 import common_pb2, graph_pb2, graph_pb2_grpc, tree_pb2, tree_pb2_grpc
from tests.conftest import unique
from tests.deploy.compose_file import (
    ADDRESS,
    NOT_STARTED,
    StackError,
    dependencies,
    interpolate,
    load_compose,
    start_order,
)
from tests.deploy.compose_stack import VENV_BIN, Stack, log_tail, running_stack
from tests.gateway.harness import http_client
from tests.graph_service.story import load_acceptance_story

# As the file's header runs it: `docker compose up -d --scale graph_service=3`.
SCALE = {"graph_service": 3}
RUNTIME = "OpenCode"
# The depends_on condition -> the event that meets it.
MET_BY = {
    "service_started": "started",
    "service_healthy": "healthy",
    "service_completed_successfully": "exited",
}
WAIT_S = 30.0

T = TypeVar("T")


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with running_stack(load_compose(), SCALE) as running:
        yield running


def listen_address(stack: Stack, service: str, variable: str, index: int = 0) -> str:
    """Where the host reaches `service`'s instance on the port its compose `variable` names."""
    declared = stack.services[service]["environment"][variable]
    return stack.instances[service][index].address(int(declared.rpartition(":")[2]))


def published(stack: Stack, service: str) -> str:
    """The loopback address of the service's published port (its first `ports` entry)."""
    container_port = int(str(stack.services[service]["ports"][0]).rsplit(":", 1)[1])
    return stack.instances[service][0].address(container_port)


def caller_token(stack: Stack, role: str) -> str:
    table = callers.parse_callers(stack.services["tree_service"]["environment"][
        "MIRRORTREE_TREE_CALLERS"
    ])  # fmt: skip
    return next(token for token, caller in table.items() if caller.role == role)


async def eventually(check: Callable[[], Awaitable[T]], what: str) -> T:
    """check()'s value once it stops raising AssertionError or a gRPC error (a write on the
    primary reaches the replicas a moment later)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            return await check()
        except (AssertionError, grpc.RpcError) as error:
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {error}") from error
        await asyncio.sleep(0.2)


@dataclass(frozen=True)
class Written:
    """What the test wrote through tree_service: a story, a tree and a binding to it."""

    project: str
    tree: tree_pb2.Tree
    token: str
    consistency: common_pb2.ConsistencyToken


@pytest_asyncio.fixture(scope="module")
async def written(stack: Stack) -> Written:
    target = published(stack, "tree_service")
    operator = caller_token(stack, "operator")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(callers.CALLER_TOKEN_ENV, operator)
        story = await load_acceptance_story(target)
    interceptors = callers.client_interceptors({callers.CALLER_TOKEN_ENV: operator})
    async with grpc.aio.insecure_channel(target, interceptors=interceptors) as channel:
        stub = tree_pb2_grpc.TreeServiceStub(channel)
        created = await stub.CreateTree(
            tree_pb2.CreateTreeRequest(
                idempotency_key=unique("compose-tree"),
                title="Written through the compose stack",
                owner="compose-user",
                project_id=story.project,
            )
        )
        await binding.enable(stub, RUNTIME)
        bound = await stub.CreateBinding(
            tree_pb2.CreateBindingRequest(
                idempotency_key=unique("compose-binding"),
                session_id=created.tree.id,
                runtime=RUNTIME,
            )
        )
    consistency = storyfile.latest(story.consistency, created.consistency, bound.consistency)
    return Written(story.project, created.tree, bound.token, consistency)


# --- the compose file's stack --------------------------------------------------------------


def test_each_service_starts_only_once_its_dependencies_meet_their_conditions(stack):
    conditions = set()
    for name in stack.order:
        for dependency, condition in dependencies(stack.services[name]).items():
            conditions.add(condition)
            assert stack.order.index(dependency) < stack.order.index(name)
            met = stack.when(dependency, MET_BY[condition])
            assert met <= stack.when(name, "started"), f"{name} started before {dependency} was"
    assert conditions == {"service_healthy", "service_completed_successfully"}
    assert stack.exit_codes["mirrortree-migrate-1"] == 0
    assert stack.when("migrate", "exited") < stack.when("tree_service", "started")
    # Every long-running service passed its own health check (`up --wait`).
    for name, service in stack.services.items():
        if "healthcheck" in service:
            assert stack.when(name, "healthy")
    stack.assert_running()


def test_each_service_runs_its_compose_command_and_environment_on_its_own_ports(stack):
    for name, service in stack.services.items():
        if "build" not in service:
            continue
        for instance in stack.instances[name]:
            assert instance.argv == service["command"], name
            assert set(service["environment"]) <= set(instance.env), name
            # python is the virtualenv's, found first on the PATH as the image's would be.
            assert instance.env["PATH"].split(":")[0] == str(VENV_BIN)
            for value in instance.env.values():
                for match in ADDRESS.finditer(value):
                    assert match["host"] in {"127.0.0.1", *NOT_STARTED}, (name, value)
            # The reason the collector's address may stay as written holds.
            if "OTEL_EXPORTER_OTLP_ENDPOINT" in instance.env:
                assert instance.env["MIRRORTREE_OTEL_EXPORTER"] == "none"
    graphs = stack.instances["graph_service"]
    assert len(graphs) == 3
    ports = [
        port
        for instances in stack.instances.values()
        for i in instances
        for port in i.ports.values()
    ]
    assert len(ports) == len(set(ports)), "two instances share a loopback port"
    # One name, three addresses, as Docker's DNS answers: the gateway's and the web view's
    # gRPC targets (the gateway spreads its calls over them round-robin).
    everyone = "ipv4:" + ",".join(
        listen_address(stack, "graph_service", "MIRRORTREE_GRAPH_LISTEN", i) for i in range(3)
    )
    assert stack.instances["gateway"][0].env["MIRRORTREE_GATEWAY_GRAPH_TARGET"] == everyone
    assert stack.instances["webview"][0].env["MIRRORTREE_WEBVIEW_GRAPH_TARGET"] == everyone
    assert stack.instances["webview"][0].env["MIRRORTREE_WEBVIEW_TREE_TARGET"] == published(
        stack, "tree_service"
    )


async def test_every_graph_service_instance_is_healthy_and_reads_the_tree_from_a_replica(
    stack, written
):
    for index, instance in enumerate(stack.instances["graph_service"]):
        healthy, output = await asyncio.to_thread(
            stack.probe, instance, stack.services["graph_service"]["healthcheck"]
        )
        assert healthy, f"{instance.name}: {output}"
        target = listen_address(stack, "graph_service", "MIRRORTREE_GRAPH_LISTEN", index)
        async with grpc.aio.insecure_channel(target) as channel:
            graph = graph_pb2_grpc.StoryGraphStub(channel)
            found = await graph.Search(
                graph_pb2.SearchRequest(
                    query="PostgreSQL",
                    options=graph_pb2.ReadOptions(min_consistency=written.consistency),
                ),
                metadata=[("authorization", f"Bearer {written.token}")],
            )
            resolved = await eventually(
                functools.partial(
                    graph.ResolveBinding, graph_pb2.ResolveBindingRequest(token=written.token)
                ),
                f"{instance.name} to resolve the binding",
            )
        assert "ev-revise-b" in {hit.ref.id for hit in found.hits}, instance.name
        assert list(found.basis.scope.resolved.projects.project_ids) == [written.project]
        assert (resolved.session_id, resolved.project_id) == (written.tree.id, written.project)
        assert resolved.enabled, resolved.disabled_reason
    # The instances read the replicas, as the read-only role, and the replicas are standbys.
    postgres = stack.postgres
    assert postgres is not None
    for name in ("replica1", "replica2"):
        port = postgres.port(name)
        deployment = postgres.deployment
        assert deployment.owner_sql(port, "SELECT pg_is_in_recovery()") == "t"
        readers = deployment.owner_sql(
            port, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'mirrortree_reader'"
        )
        assert int(readers) >= 1, f"no graph_service reads {name}"


STORY_GRAPH_METHODS = set(graph_pb2.DESCRIPTOR.services_by_name["StoryGraph"].methods_by_name)
RPC_TOTAL = re.compile(
    r'^mirrortree_rpc_total\{[^}]*method="(?P<method>[^"]*)"[^}]*\} (?P<value>\S+)$', re.MULTILINE
)


def rpc_counts(stack: Stack) -> list[int]:
    """The StoryGraph calls each graph_service instance has answered (from its metrics)."""
    counts = []
    for index in range(len(stack.instances["graph_service"])):
        address = listen_address(stack, "graph_service", "MIRRORTREE_GRAPH_METRICS", index)
        text = fetch(f"http://{address}/metrics")[1]
        counts.append(
            sum(
                int(float(match["value"]))
                for match in RPC_TOTAL.finditer(text)
                if match["method"] in STORY_GRAPH_METHODS
            )
        )
    return counts


async def test_the_gateway_serves_the_tree_over_mcp_through_all_three_graph_instances(
    stack, written
):
    url = f"http://{published(stack, 'gateway')}/mcp"
    before = await asyncio.to_thread(rpc_counts, stack)
    async with http_client(url, written.token) as client:
        listed = await client.list_tools()
        assert len(listed.tools) == 3
        assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)

        async def search() -> Any:
            result = await client.call_tool("story_graph_search", {"query": "PostgreSQL"})
            assert not result.is_error, result.content
            assert "ev-revise-b" in {h["ref"]["id"] for h in result.structured_content["hits"]}
            return result

        result = await eventually(search, "the gateway's search to see the story")
        assert result.structured_content["resolved_scope"]["scope"] == {
            "projects": [written.project]
        }
        # round_robin over the three addresses: each instance answers some of the calls.
        for _ in range(30):
            after = await asyncio.to_thread(rpc_counts, stack)
            if all(a > b for a, b in zip(after, before, strict=True)):
                break
            await search()
    assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)


async def test_the_web_view_answers_its_health_check_and_shows_the_tree(stack, written):
    base = f"http://{published(stack, 'webview')}"
    status, body = await asyncio.to_thread(fetch, f"{base}/healthz")
    assert (status, body) == (200, '{"status":"ok"}')
    status, page = await asyncio.to_thread(fetch, f"{base}/tree/{written.tree.id}", written.token)
    assert status == 200
    assert written.tree.title in page


def test_every_service_stops_gracefully_on_sigterm_and_leaves_nothing_running(stack):
    every = [instance for instances in stack.instances.values() for instance in instances]
    codes = stack.down()
    for instance in every:
        assert instance.process is None or instance.process.poll() is not None, instance.name
        if "build" not in stack.services[instance.service]:
            continue
        # None would mean it outlived the grace period and was killed.
        code = codes[instance.name]
        if instance.service in ("gateway", "webview"):
            # uvicorn shuts down gracefully, then may re-raise the SIGTERM it stopped for (exit
            # status 143 under compose).
            assert code in (0, -signal.SIGTERM), (instance.name, code)
            assert "Application shutdown complete" in instance.log.read_text(), instance.name
        else:
            assert code == 0, (instance.name, code, log_tail(instance.log))
    assert postgres_running(stack.root) == []


def fetch(url: str, token: str = "") -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(urllib.request.Request(url, headers=headers), timeout=30) as response:
        return response.status, response.read().decode()


def postgres_running(root: Path) -> list[int]:
    """PostgreSQL processes whose command line names the stack's folder."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(root) in cmdline and state != "Z":
                found.append(int(entry.name))
    return found


# --- the harness's rules, on made-up compose files ------------------------------------------


def app(command: str, **extra: Any) -> dict[str, Any]:
    """A made-up application service built from the repository's image."""
    return {"build": ".", "command": ["python", "-c", command], **extra}


SLEEP = "import time; time.sleep(60)"
HEALTH_FAST = {"interval": "1s", "timeout": "10s", "retries": 2}


@pytest.fixture
def made_up(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], Stack]]:
    """Stacks of made-up compose files, always stopped."""
    stacks: list[Stack] = []

    def make(services: dict[str, Any]) -> Stack:
        made = Stack({"name": "made", "services": services}, tmp_path)
        stacks.append(made)
        return made

    yield make
    for made in stacks:
        made.down()


def test_a_failing_healthcheck_stops_start_up_naming_the_service_and_its_output(made_up):
    stack = made_up(
        {
            "slow": app(
                SLEEP,
                healthcheck={
                    "test": ["CMD", "python", "-c", "raise SystemExit('not serving on 8080')"],
                    **HEALTH_FAST,
                },
            ),
            "after": app(SLEEP, depends_on={"slow": {"condition": "service_healthy"}}),
        }
    )
    with pytest.raises(StackError) as failure:
        stack.up()
    message = str(failure.value)
    assert message.startswith("slow (made-slow-1) is unhealthy, so after does not start:")
    assert "failed 2 times in a row" in message
    assert "not serving on 8080" in message
    assert "after" not in {service for _, _, service in stack.events}
    process = stack.instances["slow"][0].process
    stack.down()
    assert process is not None and process.returncode == -signal.SIGTERM


def test_a_shell_healthcheck_runs_in_the_services_environment_against_its_own_port(made_up):
    serve = (
        "import http.server, os; http.server.HTTPServer(('127.0.0.1', "
        "int(os.environ['LISTEN'].rpartition(':')[2])), http.server.BaseHTTPRequestHandler)"
        ".serve_forever()"
    )
    check = (
        "python -c \"import socket, sys; host, _, port = sys.argv[1].partition(':'); "
        'socket.create_connection((host, int(port)))" 127.0.0.1:8080'
    )
    stack = made_up(
        {
            "web": app(
                serve,
                environment={"LISTEN": "0.0.0.0:8080"},
                healthcheck={"test": ["CMD-SHELL", f'test -n "$LISTEN" && {check}'], **HEALTH_FAST},
            )
        }
    )
    stack.up()
    (instance,) = stack.instances["web"]
    assert instance.env["LISTEN"] == instance.address(8080)
    assert stack.when("web", "healthy") > stack.when("web", "started")


def test_a_one_shot_that_fails_keeps_its_dependents_from_starting(made_up):
    stack = made_up(
        {
            "once": app("print('no migration today'); raise SystemExit(3)"),
            "server": app(
                SLEEP, depends_on={"once": {"condition": "service_completed_successfully"}}
            ),
        }
    )
    with pytest.raises(StackError, match="once exited with code 3, so server does not start") as e:
        stack.up()
    assert "no migration today" in str(e.value)  # its log, in the message
    assert stack.instances["server"][0].process is None


def test_an_address_of_a_service_that_is_not_started_is_refused_unless_explained(tmp_path):
    services = {
        "client": app(SLEEP, environment={"TARGET": "metrics:9090"}),
        "metrics": {"image": "prom/prometheus", "profiles": ["observability"]},
    }
    with pytest.raises(StackError, match=r"client dials metrics:9090, which is not started"):
        Stack({"services": services}, tmp_path)
    explained = next(iter(NOT_STARTED))
    services["client"]["environment"] = {"TARGET": f"http://{explained}:4317"}
    stack = Stack({"services": {**services, explained: {"profiles": ["observability"]}}}, tmp_path)
    assert stack.instances["client"][0].env["TARGET"] == f"http://{explained}:4317"


def test_an_address_on_a_port_nobody_listens_on_is_refused(tmp_path):
    services = {
        "server": app(SLEEP, environment={"LISTEN": "0.0.0.0:7000"}),
        "client": app(SLEEP, environment={"TARGET": "server:7001"}),
    }
    with pytest.raises(StackError, match=r"client dials server:7001, but server listens only"):
        Stack({"services": services}, tmp_path)
    services["client"]["healthcheck"] = {"test": ["CMD", "probe", "127.0.0.1:1"]}
    services["client"]["environment"] = {}
    with pytest.raises(StackError, match=r"client refers to its own port 1 \(127.0.0.1:1\)"):
        Stack({"services": services}, tmp_path)


def test_a_service_that_cannot_run_outside_a_container_is_refused_not_skipped(tmp_path):
    with pytest.raises(StackError, match=r"cache \(image 'redis:7'\) cannot run"):
        Stack({"services": {"cache": {"image": "redis:7"}}}, tmp_path)
    with pytest.raises(StackError, match=r"web: the harness cannot reproduce \['network_mode'\]"):
        Stack({"services": {"web": app(SLEEP, network_mode="host")}}, tmp_path)


def test_start_order_follows_depends_on_and_refuses_a_cycle():
    compose = load_compose()
    services = {n: s for n, s in compose["services"].items() if not s.get("profiles")}
    order = start_order(services)
    assert order[0] == "primary"
    assert order.index("migrate") < order.index("tree_service") < order.index("graph_service")
    assert order.index("graph_service") < min(order.index("gateway"), order.index("webview"))
    with pytest.raises(StackError, match="cycle"):
        start_order({"a": {"depends_on": ["b"]}, "b": {"depends_on": ["a"]}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${SET:-default}", "value"),
        ("${UNSET:-default}", "default"),
        ("${EMPTY:-default}", "default"),
        ("${EMPTY-default}", ""),
        ("${SET:+other}", "other"),
        ("$SET and $$SET", "value and $SET"),
    ],
)
def test_interpolation_follows_compose(text, expected):
    assert interpolate(text, {"SET": "value", "EMPTY": ""}) == expected


def test_the_stacks_python_is_the_virtualenvs():
    result = subprocess.run(
        ["python", "-c", "import sys; print(sys.prefix)"],
        env={"PATH": f"{VENV_BIN}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == sys.prefix
