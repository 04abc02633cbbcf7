"""The container deployment: docker-compose.yml, the Dockerfile, the PostgreSQL replication
scripts under deploy/ and the gRPC health probe used by the containers' healthchecks.

The tests need no container engine: the compose file is checked structurally (and with
`docker compose config`, which parses locally, where the CLI plugin is installed).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
import yaml
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from mirrortree import callers, healthcheck

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
ENV_EXAMPLE = ROOT / ".env.example"

SERVICES = {
    "primary",
    "replica1",
    "replica2",
    "migrate",
    "tree_service",
    "graph_service",
    "gateway",
    "webview",
}
REPLICAS = {"replica1", "replica2"}
# Services that run to completion (tree_service waits for their success).
ONE_SHOT = {"migrate"}
APP_PACKAGES = {
    "tree_service": "tree_service",
    "graph_service": "graph_service",
    "gateway": "gateway",
    "migrate": "tree_service",
    "webview": "webview",
}

# Every variable each service reads, as documented: (required in compose, optional).
DOCUMENTED_ENV: dict[str, tuple[set[str], set[str]]] = {
    "tree_service": (
        {"MIRRORTREE_TREE_DSN", "MIRRORTREE_TREE_LISTEN"},
        {"MIRRORTREE_TREE_MIGRATE", "MIRRORTREE_TREE_METRICS", "MIRRORTREE_LOG_LEVEL"},
    ),
    "graph_service": (
        {
            "MIRRORTREE_GRAPH_REPLICA_DSNS",
            "MIRRORTREE_GRAPH_LISTEN",
            "MIRRORTREE_CURSOR_SECRET",
        },
        {"MIRRORTREE_GRAPH_ALLOW_PRIMARY", "MIRRORTREE_GRAPH_METRICS", "MIRRORTREE_LOG_LEVEL"},
    ),
    "gateway": (
        {
            "MIRRORTREE_GATEWAY_GRAPH_TARGET",
            "MIRRORTREE_GATEWAY_TRANSPORT",
            "MIRRORTREE_GATEWAY_LISTEN",
            "MIRRORTREE_GATEWAY_ALLOWED_HOSTS",
        },
        {"MIRRORTREE_BINDING_TOKEN", "MIRRORTREE_LOG_LEVEL", "MIRRORTREE_GATEWAY_METRICS"},
    ),
    "migrate": ({"MIRRORTREE_TREE_DSN"}, {"MIRRORTREE_LOG_LEVEL"}),
    "webview": (
        {
            "MIRRORTREE_WEBVIEW_LISTEN",
            "MIRRORTREE_WEBVIEW_TREE_TARGET",
            "MIRRORTREE_WEBVIEW_GRAPH_TARGET",
            "MIRRORTREE_WEBVIEW_TREE_TOKEN",
        },
        {"MIRRORTREE_LOG_LEVEL"},
    ),
}
# Variables a user may set when running `docker compose` (interpolated into the file).
USER_SETTINGS = {
    "MIRRORTREE_PG_PASSWORD",
    "MIRRORTREE_PG_WRITER_PASSWORD",
    "MIRRORTREE_PG_READER_PASSWORD",
    "MIRRORTREE_PG_REPLICATION_PASSWORD",
    "MIRRORTREE_HOST_APP_TOKEN",
    "MIRRORTREE_OPERATOR_TOKEN",
    "MIRRORTREE_CONFIRMATION_SECRET",
    "MIRRORTREE_CURSOR_SECRET",
    "MIRRORTREE_LOG_LEVEL",
    "MIRRORTREE_OTEL_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "MIRRORTREE_WEBVIEW_TOKEN",
    "GRAFANA_ADMIN_PASSWORD",
}

_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-?]([^}]*))?\}")
_ENV_NAME = re.compile(r"MIRRORTREE_[A-Z0-9_]+")


# --- helpers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services `docker compose up` starts (those of no profile)."""
    return {n: s for n, s in compose["services"].items() if not s.get("profiles")}


def observability(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services of the `observability` profile: third-party images, off by default."""
    return {
        n: s for n, s in compose["services"].items() if "observability" in s.get("profiles", [])
    }


def interpolate(value: str) -> str:
    """Expand ${VAR:-default} the way compose does when VAR is unset."""
    return _INTERPOLATION.sub(lambda m: m.group(2) or "", value)


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): interpolate(str(v)) for k, v in env.items()}


def command_text(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value)


def mounted_host_file(service: dict[str, Any], container_path: str) -> Path:
    """The repository file that a service bind-mounts at `container_path`."""
    for volume in service.get("volumes", []):
        source, target = str(volume).split(":")[:2]
        if target == container_path and source.startswith("."):
            return ROOT / source
    raise AssertionError(f"nothing is bind-mounted at {container_path}")


def replica_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: svc
        for name, svc in services(compose).items()
        if "replica-entrypoint" in command_text(svc.get("entrypoint", ""))
    }


def dsn_hosts(dsns: str) -> list[str]:
    hosts = []
    for dsn in dsns.split(","):
        parts = urlsplit(dsn.strip())
        assert parts.scheme in {"postgres", "postgresql"}, dsn
        assert parts.hostname, dsn
        hosts.append(parts.hostname)
    return hosts


def env_names_in_source(package: str) -> set[str]:
    names: set[str] = set()
    for directory in (ROOT / package, ROOT / "mirrortree"):
        for path in directory.rglob("*.py"):
            names.update(_ENV_NAME.findall(path.read_text(encoding="utf-8")))
    return names


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    result = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            keyword, _, rest = stripped.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def assert_valid_shell_script(path: Path) -> None:
    assert path.is_file(), f"{path} is missing"
    assert os.access(path, os.X_OK), f"{path} is not executable"
    assert path.read_text(encoding="utf-8").startswith("#!/usr/bin/env bash\n")
    check = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


# --- the compose file ----------------------------------------------------------------------


def test_compose_defines_the_five_services_without_an_obsolete_version_key(compose):
    assert set(services(compose)) == SERVICES
    assert "version" not in compose


def test_every_long_running_service_has_a_healthcheck(compose):
    for name, svc in services(compose).items():
        if name in ONE_SHOT:
            assert "healthcheck" not in svc, name
            continue
        check = svc.get("healthcheck")
        assert check, f"{name} has no healthcheck"
        assert not check.get("disable", False), name
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name


def test_every_dependency_waits_for_a_healthy_service(compose):
    expected = {
        "replica1": {"primary"},
        "replica2": {"primary"},
        "migrate": {"primary"},
        "tree_service": {"primary", "migrate"},
        "graph_service": {"replica1", "replica2", "tree_service"},
        "gateway": {"graph_service"},
        "webview": {"tree_service", "graph_service"},
    }
    for name, svc in services(compose).items():
        depends_on = svc.get("depends_on", {})
        assert isinstance(depends_on, dict), f"{name}: depends_on needs conditions"
        assert set(depends_on) == expected.get(name, set()), name
        for dependency, spec in depends_on.items():
            condition = (
                "service_completed_successfully" if dependency in ONE_SHOT else "service_healthy"
            )
            assert spec == {"condition": condition}, f"{name} -> {dependency}"


def test_primary_is_configured_for_streaming_replication(compose):
    primary = services(compose)["primary"]
    assert re.fullmatch(r"postgres:18(\..*)?", primary["image"])
    command = command_text(primary["command"])
    for flag in (
        "wal_level=replica",
        "max_wal_senders=",
        "max_replication_slots=",
        "hot_standby=on",
    ):
        assert flag in command
    env = primary["environment"]
    assert env["POSTGRES_USER"] == "mirrortree"
    assert env["POSTGRES_DB"] == "mirrortree"
    assert env["POSTGRES_PASSWORD"] == "${MIRRORTREE_PG_PASSWORD:-mirrortree}"
    assert "pg_isready" in command_text(primary["healthcheck"]["test"])
    # From 18 on the image's volume is /var/lib/postgresql (PGDATA is a versioned folder in it),
    # and it refuses to start with a volume at the older /var/lib/postgresql/data.
    assert any(str(v).endswith(":/var/lib/postgresql") for v in primary["volumes"])


def test_primary_init_script_allows_replication_and_creates_a_slot(compose):
    primary = services(compose)["primary"]
    mounts = [str(v).split(":")[1] for v in primary["volumes"]]
    init = [m for m in mounts if m.startswith("/docker-entrypoint-initdb.d/")]
    replication = [m for m in init if m.endswith("-replication.sh")]
    assert len(replication) == 1
    script = mounted_host_file(primary, replication[0])
    assert_valid_shell_script(script)
    text = script.read_text(encoding="utf-8")
    assert "pg_hba.conf" in text
    assert re.search(r"host replication \S+ all", text)
    assert "pg_create_physical_replication_slot" in text


def test_replica_is_cloned_from_the_primary_with_pg_basebackup(compose):
    replicas = replica_services(compose)
    assert set(replicas) == REPLICAS
    for name, replica in replicas.items():
        assert replica["image"] == services(compose)["primary"]["image"], name
        entrypoint = replica["entrypoint"]
        container_path = next(part for part in entrypoint if part.endswith(".sh"))
        script = mounted_host_file(replica, container_path)
        assert_valid_shell_script(script)
        text = script.read_text(encoding="utf-8")
        assert re.search(r"pg_basebackup .*-X stream -R -S", text.replace("\\\n", " "))
        assert "PGPASSWORD" in text
        assert "exec " in text
        env = environment(replica)
        assert env["MIRRORTREE_PRIMARY_HOST"] == "primary"
        primary = environment(services(compose)["primary"])
        # The replication role's credentials, never the owner's.
        assert env["MIRRORTREE_REPLICATION_USER"] == primary["MIRRORTREE_REPLICATION_USER"]
        assert env["PGPASSWORD"] == primary["MIRRORTREE_REPLICATION_PASSWORD"]
        assert env["PGPASSWORD"] != primary["POSTGRES_PASSWORD"]
        assert "POSTGRES_PASSWORD" not in env
        assert env["MIRRORTREE_REPLICATION_SLOT"]


def test_postgres_volumes_follow_the_image_layout_of_postgresql_18(compose):
    pg_image_default = "/var/lib/postgresql/18/docker"
    for name, svc in services(compose).items():
        if not str(svc.get("image", "")).startswith("postgres:"):
            continue
        targets = [str(v).split(":")[1] for v in svc["volumes"]]
        assert "/var/lib/postgresql" in targets, name
        assert not [t for t in targets if t.startswith("/var/lib/postgresql/")], name
        pgdata = environment(svc).get("PGDATA", pg_image_default)
        # Inside the volume but not its mount point: the replica clones into a sibling folder.
        assert pgdata.startswith("/var/lib/postgresql/"), name
    script = mounted_host_file(
        services(compose)["replica1"], "/usr/local/bin/replica-entrypoint.sh"
    )
    assert f'PGDATA="${{PGDATA:-{pg_image_default}}}"' in script.read_text(encoding="utf-8")


def test_replica_healthcheck_requires_the_server_to_be_in_recovery(compose):
    for name, replica in replica_services(compose).items():
        test = command_text(replica["healthcheck"]["test"])
        assert "pg_isready" in test, name
        assert "pg_is_in_recovery()" in test, name
        assert "grep -qx t" in test, name


def test_each_replica_has_its_own_slot_and_volume(compose):
    replicas = replica_services(compose)
    slots = [environment(svc)["MIRRORTREE_REPLICATION_SLOT"] for svc in replicas.values()]
    assert len(set(slots)) == len(slots)
    all_slots = set(slots)
    for slot in all_slots:
        assert re.fullmatch(r"[a-z0-9_]{1,63}", slot)
    data_volumes = [
        str(v).split(":")[0] for svc in replicas.values() for v in svc["volumes"] if ":/var/" in v
    ]
    assert len(set(data_volumes)) == len(data_volumes)
    assert set(data_volumes) <= set(compose["volumes"])


def test_tree_service_writes_to_the_primary(compose):
    tree = services(compose)["tree_service"]
    assert command_text(tree["command"]) == "python -m tree_service"
    env = environment(tree)
    assert dsn_hosts(env["MIRRORTREE_TREE_DSN"]) == ["primary"]
    assert env["MIRRORTREE_TREE_LISTEN"] == "0.0.0.0:50051"
    assert command_text(tree["healthcheck"]["test"]) == (
        "CMD python -m mirrortree.healthcheck 127.0.0.1:50051"
    )


def test_graph_service_reads_only_from_replicas(compose):
    graph = services(compose)["graph_service"]
    assert command_text(graph["command"]) == "python -m graph_service"
    env = environment(graph)
    hosts = dsn_hosts(env["MIRRORTREE_GRAPH_REPLICA_DSNS"])
    assert hosts
    assert set(hosts) <= set(replica_services(compose))
    assert "primary" not in hosts
    assert env.get("MIRRORTREE_GRAPH_ALLOW_PRIMARY", "false") == "false"
    assert env["MIRRORTREE_GRAPH_LISTEN"] == "0.0.0.0:50052"
    assert command_text(graph["healthcheck"]["test"]) == (
        "CMD python -m mirrortree.healthcheck 127.0.0.1:50052"
    )


def test_graph_service_can_be_scaled_behind_one_dns_name(compose):
    graph = services(compose)["graph_service"]
    assert "container_name" not in graph
    assert "ports" not in graph
    gateway_env = environment(services(compose)["gateway"])
    assert gateway_env["MIRRORTREE_GATEWAY_GRAPH_TARGET"] == "dns:///graph_service:50052"


def test_cursor_secret_comes_from_the_environment_with_a_marked_long_enough_dev_default(compose):
    raw = services(compose)["graph_service"]["environment"]["MIRRORTREE_CURSOR_SECRET"]
    match = _INTERPOLATION.fullmatch(raw)
    assert match
    assert match.group(1) == "MIRRORTREE_CURSOR_SECRET"
    default = match.group(2)
    assert len(default) >= 32
    assert "dev" in default
    assert "insecure" in default


def test_gateway_serves_mcp_over_http_on_a_published_port(compose):
    gateway = services(compose)["gateway"]
    assert command_text(gateway["command"]) == "python -m gateway"
    env = environment(gateway)
    assert env["MIRRORTREE_GATEWAY_TRANSPORT"] == "http"
    assert env["MIRRORTREE_GATEWAY_LISTEN"] == "0.0.0.0:8765"
    allowed = set(env["MIRRORTREE_GATEWAY_ALLOWED_HOSTS"].split(","))
    assert {"gateway:8765", "localhost:8765", "127.0.0.1:8765"} <= allowed
    # Published on loopback, as every other service: exposing it is a proxy's job (TLS).
    assert [str(p) for p in gateway["ports"]] == ["127.0.0.1:8765:8765"]
    health_test = command_text(gateway["healthcheck"]["test"])
    assert "urllib" in health_test
    assert "http://127.0.0.1:8765/healthz" in health_test
    compile(gateway["healthcheck"]["test"][-1], "<gateway healthcheck>", "exec")


def test_application_services_set_only_variables_the_code_reads(compose):
    for name, (required, optional) in DOCUMENTED_ENV.items():
        env = environment(services(compose)[name])
        names = {key for key in env if key.startswith("MIRRORTREE_")}
        missing = required - names
        assert not missing, f"{name} lacks {sorted(missing)}"
        known = required | optional | env_names_in_source(APP_PACKAGES[name])
        unknown = names - known
        assert not unknown, f"{name} sets unknown (misspelt?) variables {sorted(unknown)}"


def test_compose_interpolates_only_documented_user_settings():
    used = set(_INTERPOLATION.findall(COMPOSE_FILE.read_text(encoding="utf-8")))
    assert {name for name, _ in used} <= USER_SETTINGS


def test_every_build_context_has_the_dockerfile(compose):
    builds = 0
    for name, svc in services(compose).items():
        if "build" not in svc:
            continue
        builds += 1
        build = svc["build"]
        context = build if isinstance(build, str) else build.get("context", ".")
        dockerfile = (
            "Dockerfile" if isinstance(build, str) else build.get("dockerfile", "Dockerfile")
        )
        assert (ROOT / context / dockerfile).is_file(), name
    assert builds == len(APP_PACKAGES)


def env_example() -> dict[str, str]:
    values = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, sep, value = line.partition("=")
            assert sep, f".env.example: {line!r} is not NAME=value"
            values[name.strip()] = value
    return values


def test_every_interpolated_variable_is_in_env_example_or_has_a_default():
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    example = env_example()
    for match in _INTERPOLATION.finditer(text):
        name, default = match.group(1), match.group(2)
        assert name in example or default, f"${{{name}}} has no default and is not in .env.example"
    used = {m.group(1) for m in _INTERPOLATION.finditer(text)}
    assert set(example) <= used, f".env.example sets unused {sorted(set(example) - used)}"
    assert set(example) >= USER_SETTINGS, sorted(USER_SETTINGS - set(example))


def test_env_example_marks_every_secret_to_be_replaced():
    for name, value in env_example().items():
        if name.endswith(("_PASSWORD", "_TOKEN", "_SECRET")):
            assert value.startswith("change-me"), name
            if name.endswith("_SECRET"):
                assert len(value) >= 32, name


def test_the_env_file_stays_out_of_the_image_and_the_repository():
    assert ".env" in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".env" in ignored


def test_long_running_services_restart_and_one_shot_ones_do_not(compose):
    for name, svc in services(compose).items():
        expected = "no" if name in ONE_SHOT else "unless-stopped"
        assert svc.get("restart") == expected, name


def module_exists(module: str) -> bool:
    path = ROOT.joinpath(*module.split("."))
    return (path / "__main__.py").is_file() or path.with_suffix(".py").is_file()


def python_modules(argv: list[str]) -> list[str]:
    """The modules of every `python -m MODULE` in argv."""
    return [argv[i + 2] for i in range(len(argv) - 2) if argv[i : i + 2] == ["python", "-m"]]


def test_every_command_and_entrypoint_names_what_exists(compose):
    checked = 0
    for name, svc in services(compose).items():
        for key in ("command", "entrypoint"):
            argv = svc.get(key)
            if not argv:
                continue
            assert isinstance(argv, list), f"{name}.{key}: use the exec (list) form"
            for module in python_modules(argv):
                assert module_exists(module), f"{name}.{key}: no module {module}"
                checked += 1
            for part in argv:
                if part.endswith(".sh"):
                    assert_valid_shell_script(mounted_host_file(svc, part))
                    checked += 1
        test = svc.get("healthcheck", {}).get("test", [])
        if test and test[0] == "CMD":
            for module in python_modules(test[1:]):
                assert module_exists(module), f"{name}.healthcheck: no module {module}"
                checked += 1
    assert checked >= 8


def test_migrate_runs_once_as_the_schema_owner_and_tree_service_does_not_migrate(compose):
    migrate = services(compose)["migrate"]
    assert migrate["command"] == ["python", "-m", "tree_service", "migrate"]
    owner = environment(services(compose)["primary"])["POSTGRES_USER"]
    assert dsn_users(environment(migrate)["MIRRORTREE_TREE_DSN"]) == {owner}
    assert dsn_hosts(environment(migrate)["MIRRORTREE_TREE_DSN"]) == ["primary"]
    assert environment(services(compose)["tree_service"])["MIRRORTREE_TREE_MIGRATE"] == "false"


def listen_port(address: str) -> int:
    return int(address.rpartition(":")[2])


def test_every_published_port_is_one_the_service_listens_on(compose):
    exposed = {
        int(port)
        for keyword, rest in dockerfile_instructions()
        if keyword == "EXPOSE"
        for port in rest.split()
    }
    published_hosts: list[str] = []
    for name, svc in services(compose).items():
        env = environment(svc)
        listening = {
            listen_port(value)
            for key, value in env.items()
            if key.endswith(("_LISTEN", "_METRICS")) and value
        }
        for spec in svc.get("ports", []):
            parts = str(spec).split(":")
            container = int(parts[-1])
            host = ":".join(parts[:-1])
            assert container in listening, (
                f"{name} publishes {container} but listens on {listening}"
            )
            assert container in exposed, f"{name}: the Dockerfile does not EXPOSE {container}"
            published_hosts.append(host)
        for port in listening:
            assert port in exposed, f"{name}: the Dockerfile does not EXPOSE {port}"
    assert len(published_hosts) == len(set(published_hosts)), published_hosts


def test_every_application_service_serves_metrics(compose):
    ports = set()
    for name, variable in (
        ("tree_service", "MIRRORTREE_TREE_METRICS"),
        ("graph_service", "MIRRORTREE_GRAPH_METRICS"),
        ("gateway", "MIRRORTREE_GATEWAY_METRICS"),
    ):
        address = environment(services(compose)[name])[variable]
        assert address.startswith("0.0.0.0:"), name
        ports.add(listen_port(address))
    assert len(ports) == 3


def test_graph_service_reads_both_replicas(compose):
    env = environment(services(compose)["graph_service"])
    assert sorted(dsn_hosts(env["MIRRORTREE_GRAPH_REPLICA_DSNS"])) == sorted(REPLICAS)


def test_the_primary_creates_a_slot_for_every_replica(compose):
    slots = environment(services(compose)["primary"])["MIRRORTREE_REPLICATION_SLOTS"].split(",")
    wanted = {
        environment(svc)["MIRRORTREE_REPLICATION_SLOT"]
        for svc in replica_services(compose).values()
    }
    assert set(slots) == wanted


@pytest.mark.skipif(shutil.which("docker") is None, reason="the docker CLI is not installed")
def test_docker_compose_accepts_the_file():
    probe = subprocess.run(
        ["docker", "compose", "version"], capture_output=True, text=True, check=False, timeout=60
    )
    if probe.returncode != 0:
        pytest.skip("the docker compose CLI plugin is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIRRORTREE_")}
    result = subprocess.run(
        ["docker", "compose", "-f", str(COMPOSE_FILE), "config", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


# --- the image -----------------------------------------------------------------------------


def test_image_runs_as_a_non_root_user():
    users = [rest for keyword, rest in dockerfile_instructions() if keyword == "USER"]
    assert users, "the Dockerfile never sets USER"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}


def test_image_installs_the_project_without_dev_extras_on_python_3_11_slim():
    instructions = dockerfile_instructions()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    runs = " ".join(rest for keyword, rest in instructions if keyword == "RUN")
    assert "pip install --no-cache-dir ." in runs
    assert "[dev]" not in runs
    envs = " ".join(rest for keyword, rest in instructions if keyword == "ENV")
    assert "PYTHONUNBUFFERED=1" in envs


def test_dockerignore_keeps_out_local_state_but_not_what_the_image_copies():
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for local_state in (".git", ".venv", ".data"):
        assert local_state in patterns
    copied = [
        source
        for keyword, rest in dockerfile_instructions()
        if keyword == "COPY" and not rest.startswith("--from")
        for source in rest.split()[:-1]
    ]
    assert "pyproject.toml" in copied
    for source in copied:
        ignored = [p for p in patterns if fnmatch.fnmatch(source.rstrip("/"), p)]
        assert not ignored, f"{source} is copied but excluded by {ignored}"


def test_the_image_leaves_the_developer_tools_out():
    patterns = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    assert "devtools" in patterns
    copied = [rest.split()[0] for keyword, rest in dockerfile_instructions() if keyword == "COPY"]
    assert not [source for source in copied if source.startswith(("devtools", "."))]


def test_the_services_import_nothing_from_the_developer_tools():
    for package in ("mirrortree", *APP_PACKAGES.values()):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"^\s*(from|import) devtools\b", text, re.MULTILINE), path


# --- the health probe ----------------------------------------------------------------------


@pytest.fixture
def health_server() -> Iterator[tuple[str, Any]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", servicer
    finally:
        server.stop(None)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_healthcheck_exits_zero_when_the_server_is_serving(health_server):
    target, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    assert healthcheck.main([target]) == 0


def test_healthcheck_exits_one_when_the_server_is_not_serving(health_server, capsys):
    target, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert healthcheck.main([target]) == 1
    assert "NOT_SERVING" in capsys.readouterr().err


def test_healthcheck_asks_about_the_named_service(health_server, capsys):
    target, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    servicer.set("mirrortree.v1.TreeService", health_pb2.HealthCheckResponse.SERVING)
    assert healthcheck.main([target, "mirrortree.v1.TreeService"]) == 0
    assert healthcheck.main([target, "mirrortree.v1.NoSuchService"]) == 1
    assert "NOT_FOUND" in capsys.readouterr().err


def test_healthcheck_exits_one_when_nothing_is_listening(capsys):
    assert healthcheck.main([f"127.0.0.1:{free_port()}", "--timeout", "2"]) == 1
    assert "UNAVAILABLE" in capsys.readouterr().err


def test_healthcheck_runs_as_a_module(health_server):
    target, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    result = subprocess.run(
        [sys.executable, "-m", "mirrortree.healthcheck", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def dsn_users(dsns: str) -> set[str | None]:
    return {urlsplit(dsn.strip()).username for dsn in dsns.split(",")}


def test_services_connect_as_their_least_privilege_roles(compose):
    tree = environment(services(compose)["tree_service"])
    graph = environment(services(compose)["graph_service"])
    owner = environment(services(compose)["primary"])["POSTGRES_USER"]
    assert dsn_users(tree["MIRRORTREE_TREE_DSN"]) == {"mirrortree_writer"}
    assert dsn_users(tree["MIRRORTREE_TREE_MIGRATION_DSN"]) == {owner}
    assert dsn_users(graph["MIRRORTREE_GRAPH_REPLICA_DSNS"]) == {"mirrortree_reader"}
    assert dsn_users(graph["MIRRORTREE_GRAPH_GATE_DSN"]) == {"mirrortree_reader"}


def test_primary_init_script_creates_the_roles_migration_0022_grants_to(compose):
    primary = services(compose)["primary"]
    path = mounted_host_file(primary, "/docker-entrypoint-initdb.d/20-roles.sh")
    assert_valid_shell_script(path)
    script = path.read_text(encoding="utf-8")
    migration = (ROOT / "tree_service/migrations/0022_service_roles.sql").read_text("utf-8")
    for role in ("mirrortree_writer", "mirrortree_reader"):
        assert f"CREATE ROLE {role} LOGIN PASSWORD" in script
        assert f"TO {role}" in migration
    assert "mirrortree_reader SET default_transaction_read_only = on" in script


def test_tree_service_authenticates_its_callers_by_default(compose):
    env = environment(services(compose)["tree_service"])
    table = callers.parse_callers(env["MIRRORTREE_TREE_CALLERS"])
    assert {c.role for c in table.values()} == {"host_app", "operator", "viewer"}
    assert {c.name for c in table.values() if c.role == "viewer"} == {"web"}
    assert len(env["MIRRORTREE_CONFIRMATION_SECRET"]) >= 32
    graph = environment(services(compose)["graph_service"])
    assert graph.get("MIRRORTREE_GRAPH_ANONYMOUS_READS", "false") == "false"


def test_every_published_port_binds_to_loopback(compose):
    published = {
        name: [str(p) for p in service.get("ports", [])]
        for name, service in compose["services"].items()
    }
    assert published["gateway"] and published["webview"] and published["tree_service"]
    for name, ports in published.items():
        assert all(p.startswith("127.0.0.1:") for p in ports), (name, ports)


# --- the observability profile ---------------------------------------------------------------


def test_the_observability_profile_is_off_by_default_and_complete(compose):
    assert set(observability(compose)) == {"prometheus", "grafana", "otel-collector"}
    assert set(compose["services"]) == SERVICES | set(observability(compose))
    for name, svc in observability(compose).items():
        assert svc["profiles"] == ["observability"], name
        image = svc["image"]
        assert ":" in image and not image.endswith(":latest"), f"{name}: pin {image}"
        for mount in svc.get("volumes", []):
            source = str(mount).split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts {source}, which is missing"


def test_prometheus_scrapes_every_services_metrics_endpoint(compose):
    config = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    scraped = {}
    for job in config["scrape_configs"]:
        for static in job.get("static_configs", []):
            for target in static["targets"]:
                host, _, port = target.rpartition(":")
                scraped[host] = int(port)
        for sd in job.get("dns_sd_configs", []):
            for host in sd["names"]:
                scraped[host] = int(sd["port"])
    metrics = {
        name: listen_port(value)
        for name, svc in services(compose).items()
        for key, value in environment(svc).items()
        if key.endswith("_METRICS") and value
    }
    assert metrics and scraped == metrics


def test_grafana_provisions_prometheus_and_the_dashboard(compose):
    grafana = observability(compose)["grafana"]
    mounts = {str(m).split(":")[1]: str(m).split(":")[0] for m in grafana["volumes"]}
    provisioning = ROOT / mounts["/etc/grafana/provisioning"]
    (source,) = yaml.safe_load((provisioning / "datasources/prometheus.yml").read_text())[
        "datasources"
    ]
    assert (source["type"], source["url"], source["isDefault"]) == (
        "prometheus",
        "http://prometheus:9090",
        True,
    )
    (provider,) = yaml.safe_load((provisioning / "dashboards/mirrortree.yml").read_text())[
        "providers"
    ]
    folder = provider["options"]["path"]
    dashboards = {Path(t).name: s for t, s in mounts.items() if t.startswith(folder + "/")}
    assert dashboards == {"mirrortree.json": "./deploy/grafana/mirrortree.json"}
    # The dashboard's panels take their data source from a variable a provisioned default fills.
    dashboard = json.loads((ROOT / "deploy/grafana/mirrortree.json").read_text())
    (variable,) = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert variable["query"] == "prometheus"


def test_the_collector_receives_the_traces_the_services_send(compose):
    config = yaml.safe_load((ROOT / "deploy/otel-collector/config.yaml").read_text())
    grpc_endpoint = config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert grpc_endpoint.endswith(":4317")
    assert "otlp" in config["service"]["pipelines"]["traces"]["receivers"]
    collector = observability(compose)["otel-collector"]
    assert collector["command"] == ["--config=/etc/otelcol/config.yaml"]
    endpoints = {
        interpolate(environment(svc)["OTEL_EXPORTER_OTLP_ENDPOINT"])
        for svc in services(compose).values()
        if "OTEL_EXPORTER_OTLP_ENDPOINT" in environment(svc)
    }
    assert endpoints == {"http://otel-collector:4317"}
    traced = {
        name
        for name, svc in services(compose).items()
        if "MIRRORTREE_OTEL_EXPORTER" in environment(svc)
    }
    assert traced == {"tree_service", "graph_service", "gateway", "webview"}
    assert env_example()["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4317"
