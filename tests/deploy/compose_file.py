"""docker-compose.yml read as `docker compose up` reads it, for tests/deploy/compose_stack.py to
run: the file interpolated from .env.example as compose interpolates a .env (the shell's
environment, which compose also reads, is left out so that every run is the same); the services
it starts (those of no profile) and their `depends_on` order and conditions; compose durations,
with Docker's defaults for what a health check leaves out; the image's ENV and CMD from the
Dockerfile and a service's own `environment`; the ports a container listens on and the
`host:port` addresses in its values. What the harness cannot do as the file asks is stated here
too: the keys it reproduces differently, and why (MAPPED_KEYS), the only keys it takes
(APP_KEYS, POSTGRES_KEYS) and the services it leaves unstarted, their addresses kept as written
(NOT_STARTED).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.test_compose import dockerfile_instructions, env_example

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
POSTGRES_IMAGE = "postgres:"
# The postgres image's server port: its command sets no -p, and the health checks leave it out.
POSTGRES_PORT = 5432
LOOPBACK_HOSTS = ("0.0.0.0", "127.0.0.1", "localhost")

# Docker's defaults for what a healthcheck leaves out.
HEALTH_DEFAULTS = {
    "interval": "30s",
    "timeout": "30s",
    "start_period": "0s",
    "start_interval": "5s",
    "retries": 3,
}

# What of an application service is reproduced differently here, and why.
MAPPED_KEYS = {
    "build": "the repository's virtualenv stands in for the image built from it",
    "init": "the harness is the init process: it delivers SIGTERM to the service and reaps it",
    "restart": "a service that exits fails the test instead of being restarted, which would "
    "hide the crash",
    "ports": "each instance's every port is already on the loopback (see the rewriting)",
}
APP_KEYS = {"command", "entrypoint", "environment", "depends_on", "healthcheck", *MAPPED_KEYS}
# The keys tests/deploy's replication scripts take care of.
POSTGRES_KEYS = {
    "image",
    "restart",
    "command",
    "entrypoint",
    "environment",
    "volumes",
    "depends_on",
    "healthcheck",
}
# Services named in the file but not started here: why their addresses stay as written.
NOT_STARTED = {
    "otel-collector": "of the observability profile, which is off; the services dial it only "
    "when MIRRORTREE_OTEL_EXPORTER=otlp",
}

ADDRESS = re.compile(
    r"(?<![\w.-])(?P<scheme>dns:///)?(?P<host>[A-Za-z0-9_][\w.-]*):(?P<port>\d{1,5})(?![\w.-])"
)
_INTERPOLATION = re.compile(
    r"\$\$|\$\{(?P<name>[A-Za-z_]\w*)(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}|\$(?P<bare>[A-Za-z_]\w*)"
)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class StackError(AssertionError):
    """The stack did not come up as compose would bring it up; the message says which service
    and why (with its health check's output or the tail of its log)."""


def interpolate(value: str, variables: Mapping[str, str]) -> str:
    """Expand `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`,
    `${VAR:+other}` and `$$` as compose does, with `variables` as its .env."""

    def expand(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group("name") or match.group("bare")
        op, arg = match.group("op") or "", match.group("arg") or ""
        value = variables.get(name)
        present = value is not None and (value != "" or not op.startswith(":"))
        if op.endswith("+"):
            return arg if present else ""
        if present:
            return str(value)
        if op.endswith("?"):
            raise StackError(f"${{{name}}} is required: {arg}")
        return arg if op.endswith("-") else ""

    return _INTERPOLATION.sub(expand, value)


def interpolated(document: Any, variables: Mapping[str, str]) -> Any:
    """Every string of a loaded compose document interpolated (keys stay as written)."""
    if isinstance(document, dict):
        return {key: interpolated(value, variables) for key, value in document.items()}
    if isinstance(document, list):
        return [interpolated(value, variables) for value in document]
    if isinstance(document, str):
        return interpolate(document, variables)
    return document


def load_compose(path: Path = COMPOSE_FILE) -> dict[str, Any]:
    """The compose file as `docker compose` sees it with .env.example copied to .env."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    result: dict[str, Any] = interpolated(document, env_example())
    return result


def active_services(compose: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The services `docker compose up` starts: those of no profile."""
    return {n: s for n, s in compose["services"].items() if not s.get("profiles")}


def dependencies(service: Mapping[str, Any]) -> dict[str, str]:
    """depends_on as {service: condition}; the short (list) form means service_started."""
    depends_on = service.get("depends_on") or {}
    if isinstance(depends_on, list):
        return {str(name): "service_started" for name in depends_on}
    return {
        str(name): str((spec or {}).get("condition", "service_started"))
        for name, spec in depends_on.items()
    }


def start_order(services: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A topological order of depends_on, ties kept in file order; a cycle or a dependency on a
    service that is not started is an error, as in compose."""
    remaining = {name: set(dependencies(svc)) for name, svc in services.items()}
    for name, needs in remaining.items():
        unknown = needs - set(services)
        if unknown:
            raise StackError(f"{name} depends on {sorted(unknown)}, which are not started")
    order: list[str] = []
    while remaining:
        ready = [name for name, needs in remaining.items() if not needs - set(order)]
        if not ready:
            raise StackError(f"depends_on has a cycle among {sorted(remaining)}")
        order.append(ready[0])
        del remaining[ready[0]]
    return order


def seconds(value: Any) -> float:
    """A compose duration ("1m30s", "500ms", or a number of seconds)."""
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise StackError(f"{value!r} is not a compose duration")
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def image_config() -> tuple[dict[str, str], list[str]]:
    """The Dockerfile's ENV and CMD."""
    env: dict[str, str] = {}
    cmd: list[str] = []
    for keyword, rest in dockerfile_instructions():
        if keyword == "ENV":
            for pair in rest.split():
                name, _, value = pair.partition("=")
                env[name] = value
        elif keyword == "CMD":
            cmd = list(json.loads(rest))
    return env, cmd


def declared_env(service: Mapping[str, Any]) -> dict[str, str]:
    """The service's compose `environment` as {name: value}; the list form is split at the first
    "=", and a variable with no value is empty."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(str(item).partition("=")[::2] for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def container_ports(env: Mapping[str, str], service: Mapping[str, Any]) -> set[int]:
    """The ports a container listens on: its 0.0.0.0 addresses and its published ports."""
    ports = {
        int(match["port"])
        for value in env.values()
        for match in ADDRESS.finditer(value)
        if match["host"] == "0.0.0.0"
    }
    for spec in service.get("ports", []):
        ports.add(int(str(spec).split(":")[-1].split("/")[0]))
    return ports
