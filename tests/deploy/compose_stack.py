"""docker-compose.yml's stack, as tests/deploy/compose_file.py reads it, run as `docker compose up
--wait` runs it, on a machine with no container engine. Every service of no profile starts in
`depends_on` order, each once its dependencies meet their conditions (service_started,
service_healthy, service_completed_successfully). The PostgreSQL services start through
tests/deploy's replication scripts (test_replication_scripts.py): the primary initialised as the
postgres image does it, each replica through its compose entrypoint. Each application service
runs its compose `command` (the image's CMD when it has none) with the image's ENV and its
compose `environment`; the virtualenv's python stands in for the image's, and the services run
as the test's own user rather than the image's USER, because the virtualenv's interpreter may
live in a folder other users cannot enter. Its health check runs as written (CMD or CMD-SHELL),
with Docker's rules for start_period, retries and timeout and the cadence sped up by
HEALTH_TIME_SCALE. Containers have a network of their own; here every instance shares the
loopback, so each `host:port` in a command, an environment value or a health check is rewritten
as Stack.rewrite says. Anything else the file asks for that cannot be done here is refused with
an error, never skipped.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.pgcluster.access import runner_for
from devtools.pgcluster.binaries import find_pg_bindir
from tests.deploy.compose_file import (
    ADDRESS,
    APP_KEYS,
    HEALTH_DEFAULTS,
    LOOPBACK_HOSTS,
    NOT_STARTED,
    POSTGRES_IMAGE,
    POSTGRES_KEYS,
    POSTGRES_PORT,
    ROOT,
    StackError,
    active_services,
    container_ports,
    declared_env,
    dependencies,
    image_config,
    seconds,
    start_order,
)
from tests.deploy.test_replication_scripts import (
    IMAGE_PGDATA,
    Deployment,
    start_primary,
    start_replica,
    stop_replica,
)

# The virtualenv running the tests stands in for the image's Python (first on PATH).
VENV_BIN = Path(sys.executable).parent

# Compose's health-check cadence (interval, start_period, start_interval) sped up five-fold so
# that the stack is up in seconds; retries and timeouts stay as written.
HEALTH_TIME_SCALE = 0.2
STOP_GRACE_S = 10.0  # compose's default stop_grace_period
ONE_SHOT_LIMIT_S = 120.0  # compose waits for ever; a test does not
LOG_TAIL_CHARS = 3000
HEALTH_OUTPUT_CHARS = 4096  # as much of a probe's output as Docker keeps


def free_ports(count: int, taken: set[int]) -> list[int]:
    """Distinct free loopback ports, none of them in `taken` (to which they are added)."""
    with contextlib.ExitStack() as held:
        found: list[int] = []
        while len(found) < count:
            sock = held.enter_context(socket.socket())  # held, so never drawn twice
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
            if port not in taken:
                found.append(port)
                taken.add(port)
        return found


def blocked(dependent: str | None) -> str:
    """What waiting on a service that fails its condition stops."""
    return f"so {dependent} does not start" if dependent else "so `up --wait` fails"


def log_tail(path: Path) -> str:
    if not path.exists():
        return "(no log)"
    return path.read_text(errors="replace")[-LOG_TAIL_CHARS:]


# --- the PostgreSQL part ------------------------------------------------------------------


class PostgresTier:
    """The file's PostgreSQL services, started by tests/deploy's replication scripts."""

    def __init__(self, compose: dict[str, Any], root: Path, taken: set[int]) -> None:
        runner = runner_for(find_pg_bindir())
        runner.chown(root)
        self.deployment = Deployment(
            runner, root, compose, free_ports(1, taken)[0], root / "primary" / IMAGE_PGDATA
        )
        replicas = sorted(self.deployment.replica_services())
        for name, port in zip(replicas, free_ports(len(replicas), taken), strict=True):
            volume = root / name / "var/lib/postgresql"
            volume.mkdir(parents=True)
            self.deployment.replicas[name] = (port, volume / IMAGE_PGDATA)

    @staticmethod
    def runs(service: Mapping[str, Any]) -> bool:
        return str(service.get("image", "")).startswith(POSTGRES_IMAGE)

    def port(self, name: str) -> int:
        if name == "primary":
            return self.deployment.primary_port
        if name not in self.deployment.replicas:
            raise StackError(
                f"{name}: the replication scripts start one primary, named primary, and "
                f"replicas through deploy/replica-entrypoint.sh; {name} is neither"
            )
        return self.deployment.replicas[name][0]

    def start(self, name: str) -> subprocess.Popen[str] | None:
        """Start the service; its process, or None when it runs detached (the primary)."""
        self.port(name)
        if name == "primary":
            start_primary(self.deployment)
            return None
        start_replica(self.deployment, name)
        return self.deployment.processes[name]

    def probe(self, name: str, argv: list[str], env: Mapping[str, str]) -> list[str]:
        """argv run as the PostgreSQL OS user, pointed at the service's port."""
        return self.deployment.as_pg_user(argv, {**env, "PGPORT": str(self.port(name))})

    def log(self, name: str) -> Path:
        return self.deployment.logs.get(name, self.deployment.root / f"{name}.log")

    def stop(self) -> None:
        for name in list(self.deployment.processes):
            try:
                stop_replica(self.deployment, name)
            except Exception:  # keep stopping the others; the process is ours to kill
                process = self.deployment.processes.pop(name, None)
                if process is not None:
                    process.kill()
                    process.wait(timeout=30)
        if (self.deployment.primary_data / "postmaster.pid").exists():
            subprocess.run(
                self.deployment.as_pg_user(
                    ["pg_ctl", "-D", str(self.deployment.primary_data), "-m", "fast", "-w",
                     "stop"],
                    {},
                ),
                capture_output=True,
                check=False,
                timeout=60,
            )  # fmt: skip


# --- the stack ----------------------------------------------------------------------------


@dataclass
class Instance:
    """One container of a service: its loopback ports, environment and process."""

    service: str
    name: str
    ports: dict[int, int]  # container port -> loopback port
    home: Path  # its working directory and HOME, as the image's WORKDIR /home/mirrortree
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | subprocess.Popen[str] | None = None
    started_at: float = 0.0

    def address(self, container_port: int) -> str:
        return f"127.0.0.1:{self.ports[container_port]}"


class HealthMonitor:
    """Docker's health monitor for one instance: probes on its schedule from the instance's
    start until it is healthy or unhealthy (compose reads the state only to start dependents, so
    probing on after that would only load the host)."""

    def __init__(self, stack: Stack, instance: Instance, check: Mapping[str, Any]) -> None:
        self.stack = stack
        self.instance = instance
        self.check = check
        self.status = "starting"
        self.output = ""
        self.failures = 0
        self.decided_at = 0.0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"health {instance.name}")
        self._thread.start()

    def setting(self, key: str) -> Any:
        return self.check.get(key, HEALTH_DEFAULTS[key])

    def in_start_period(self) -> bool:
        elapsed = time.monotonic() - self.instance.started_at
        return elapsed < seconds(self.setting("start_period")) * HEALTH_TIME_SCALE

    def delay(self) -> float:
        key = "start_interval" if self.in_start_period() else "interval"
        return seconds(self.setting(key)) * HEALTH_TIME_SCALE

    def _run(self) -> None:
        first = self.instance.started_at + self.delay() - time.monotonic()
        delay = max(0.0, first)
        retries = int(self.setting("retries"))
        while not self._stopping.wait(delay):
            try:
                ok, self.output = self.stack.probe(self.instance, self.check)
            except Exception as error:  # a probe that cannot even run never passes
                ok, self.output = False, repr(error)
            status = "healthy" if ok else "starting"
            if not ok and not self.in_start_period():
                self.failures += 1
                if self.failures >= retries:
                    status = "unhealthy"
            if status != "starting":
                self.decided_at = time.monotonic()  # before the status others poll
                self.status = status
                return
            delay = self.delay()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()


class Stack:
    """The file's active services, planned at construction (every instance's ports) and run by
    up(); down() stops them in reverse order and returns each instance's exit code."""

    def __init__(
        self,
        compose: dict[str, Any],
        root: Path,
        scale: Mapping[str, int] | None = None,
        postgres: PostgresTier | None = None,
        taken: set[int] | None = None,
    ) -> None:
        """Plan the stack: `scale` instances of a service (default one each), `postgres` for the
        PostgreSQL services, `taken` the loopback ports already handed out."""
        self.compose = compose
        self.root = root
        self.services = active_services(compose)
        self.order = start_order(self.services)
        self.postgres = postgres
        self.image_env, self.image_cmd = image_config()
        self.events: list[tuple[float, str, str]] = []  # (time, what, service)
        self.instances: dict[str, list[Instance]] = {}
        self.exit_codes: dict[str, int | None] = {}
        self.monitors: dict[str, HealthMonitor] = {}  # by instance name
        self._met: set[tuple[str, str]] = set()
        self._started: list[str] = []
        taken = set() if taken is None else taken
        project = str(compose.get("name", "stack"))
        for name, service in self.services.items():
            self._refuse_what_cannot_run(name, service)
            instances = []
            for index in range(1, (scale or {}).get(name, 1) + 1):
                if postgres is not None and PostgresTier.runs(service):
                    ports = {POSTGRES_PORT: postgres.port(name)}
                else:
                    env = {**self.image_env, **declared_env(service)}
                    wanted = sorted(container_ports(env, service))
                    ports = dict(zip(wanted, free_ports(len(wanted), taken), strict=True))
                full = f"{project}-{name}-{index}"
                instances.append(
                    Instance(name, full, ports, root / full / "home", root / f"{full}.log")
                )
            self.instances[name] = instances
        # Every address is mapped before anything starts, so a wrong one stops nothing midway.
        for name, instances in self.instances.items():
            service = self.services[name]
            for instance in instances:
                if not PostgresTier.runs(service):
                    self._prepare(instance, service)
                if service.get("healthcheck"):
                    self.health_argv(instance, service["healthcheck"])

    # -- planning --

    def _refuse_what_cannot_run(self, name: str, service: Mapping[str, Any]) -> None:
        if PostgresTier.runs(service):
            if self.postgres is None:
                raise StackError(f"{name} is a PostgreSQL service and no PostgreSQL tier was given")
            allowed = POSTGRES_KEYS
        elif "build" in service:
            allowed = APP_KEYS
        else:
            raise StackError(
                f"{name} (image {service.get('image')!r}) cannot run outside a container here"
            )
        unknown = set(service) - allowed
        if unknown:
            raise StackError(f"{name}: the harness cannot reproduce {sorted(unknown)}")

    def rewrite(self, text: str, instance: Instance) -> str:
        """`text` with every compose address mapped to its loopback one:

        - an address of the service itself (0.0.0.0, 127.0.0.1 or localhost and a port it listens
          on) becomes 127.0.0.1:<that instance's own free port>;
        - another service's `name:port` becomes 127.0.0.1:<its port>, and a gRPC
          `dns:///name:port` of a scaled service the `ipv4:` list of every instance's address,
          which is what Docker's DNS answers for the name;
        - a service that is not started (of a profile) stays as written only when NOT_STARTED
          says why.
        """

        def mapped(match: re.Match[str]) -> str:
            scheme, host, port = match["scheme"] or "", match["host"], int(match["port"])
            if host in LOOPBACK_HOSTS:
                if port not in instance.ports:
                    raise StackError(
                        f"{instance.service} refers to its own port {port} ({match[0]}), but it "
                        f"listens only on {sorted(instance.ports)}"
                    )
                return f"{scheme}{instance.address(port)}"
            if host in self.instances:
                targets = self.instances[host]
                if port not in targets[0].ports:
                    raise StackError(
                        f"{instance.service} dials {host}:{port}, but {host} listens only on "
                        f"{sorted(targets[0].ports)}"
                    )
                addresses = [target.address(port) for target in targets]
                if len(addresses) == 1:
                    return f"{scheme}{addresses[0]}"
                if scheme:
                    return "ipv4:" + ",".join(addresses)
                raise StackError(
                    f"{instance.service} names the scaled {host} as {match[0]}, which reaches "
                    "one instance of it; use dns:/// with a round_robin client"
                )
            if host in NOT_STARTED:
                return match[0]
            if host in self.compose["services"]:
                raise StackError(f"{instance.service} dials {match[0]}, which is not started")
            return match[0]  # not a compose name: an address outside the stack

        return ADDRESS.sub(mapped, text)

    def _prepare(self, instance: Instance, service: Mapping[str, Any]) -> None:
        declared = {**self.image_env, **declared_env(service)}
        instance.env = {
            # PYTHONPATH: the checkout under test is what runs, as the image installs it.
            "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(instance.home),
            "PYTHONPATH": str(ROOT),
            **{k: self.rewrite(v, instance) for k, v in declared.items()},
        }
        argv = [*(service.get("entrypoint") or []), *(service.get("command") or self.image_cmd)]
        if not argv:
            raise StackError(f"{instance.service} has no command and the image no CMD")
        instance.argv = [self.rewrite(str(part), instance) for part in argv]

    # -- running --

    def up(self) -> None:
        """Start every service in order, each once its dependencies meet their conditions;
        then wait until every long-running service is healthy (`up --wait`)."""
        for name in self.order:
            for dependency, condition in dependencies(self.services[name]).items():
                self._meet(dependency, condition, name)
            self._start(name)
        for name in self.order:
            if "healthcheck" in self.services[name]:
                self._meet(name, "service_healthy", None)

    def _event(self, what: str, service: str, at: float | None = None) -> None:
        self.events.append((time.monotonic() if at is None else at, what, service))

    def when(self, service: str, what: str) -> float:
        """When `service` first did `what` (started, healthy, exited)."""
        for at, event, name in self.events:
            if (event, name) == (what, service):
                return at
        raise KeyError(f"{service} never {what}")

    def _start(self, name: str) -> None:
        service = self.services[name]
        self._started.append(name)
        self._event("started", name)
        for instance in self.instances[name]:
            instance.started_at = time.monotonic()
            if PostgresTier.runs(service):
                assert self.postgres is not None
                instance.log = self.postgres.log(name)
                instance.env = declared_env(service)
                instance.process = self.postgres.start(name)
                self._monitor(instance, service)
                continue
            instance.home.mkdir(parents=True, exist_ok=True)
            with instance.log.open("ab") as out:
                instance.process = subprocess.Popen(
                    instance.argv,
                    env=instance.env,
                    cwd=instance.home,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    # Its own process group: whatever it forks can be stopped with it.
                    start_new_session=True,
                )
            self._monitor(instance, service)

    def _monitor(self, instance: Instance, service: Mapping[str, Any]) -> None:
        check = service.get("healthcheck")
        if check and not check.get("disable"):
            self.monitors[instance.name] = HealthMonitor(self, instance, check)

    def _meet(self, dependency: str, condition: str, dependent: str | None) -> None:
        """Wait until `dependency` meets `condition` for `dependent` (None: for `up --wait`)."""
        if (dependency, condition) in self._met:
            return
        if condition == "service_healthy":
            check = self.services[dependency].get("healthcheck")
            if not check or check.get("disable"):
                raise StackError(f"{dependency} has no healthcheck, {blocked(dependent)}")
            self._wait_healthy(dependency, dependent)
        elif condition == "service_completed_successfully":
            self._wait_completed(dependency, dependent)
        elif condition != "service_started":
            raise StackError(f"{dependent}: unknown depends_on condition {condition!r}")
        self._met.add((dependency, condition))

    def _wait_completed(self, name: str, dependent: str | None) -> None:
        for instance in self.instances[name]:
            assert instance.process is not None
            try:
                code = instance.process.wait(timeout=ONE_SHOT_LIMIT_S)
            except subprocess.TimeoutExpired:
                raise StackError(
                    f"{name} did not complete within {ONE_SHOT_LIMIT_S:.0f} s, "
                    f"{blocked(dependent)}:\n{log_tail(instance.log)}"
                ) from None
            self.exit_codes[instance.name] = code
            self._event("exited", name)
            if code != 0:
                raise StackError(
                    f"{name} exited with code {code}, {blocked(dependent)} (service_completed_"
                    f"successfully); its log:\n{log_tail(instance.log)}"
                )

    def _wait_healthy(self, name: str, dependent: str | None) -> None:
        monitors = [self.monitors[instance.name] for instance in self.instances[name]]
        while True:
            for monitor in monitors:
                if monitor.status == "unhealthy":
                    instance = monitor.instance
                    raise StackError(
                        f"{name} ({instance.name}) is unhealthy, {blocked(dependent)}: its "
                        f"healthcheck failed {monitor.failures} times in a row; last output:\n"
                        f"{monitor.output[-HEALTH_OUTPUT_CHARS:] or '(none)'}\n"
                        f"--- {instance.name} log ---\n{log_tail(instance.log)}"
                    )
                self._assert_running(monitor.instance, "before it was healthy")
            if all(monitor.status == "healthy" for monitor in monitors):
                self._event("healthy", name, max(m.decided_at for m in monitors))
                return
            time.sleep(0.05)

    def _assert_running(self, instance: Instance, when: str) -> None:
        process = instance.process
        if process is not None and process.poll() is not None:
            raise StackError(
                f"{instance.name} exited with code {process.returncode} {when}; its log:\n"
                f"{log_tail(instance.log)}"
            )

    def assert_running(self) -> None:
        """Every long-running instance is still up (nothing crashed after being healthy)."""
        for name, instances in self.instances.items():
            if name in self._started and "healthcheck" in self.services[name]:
                for instance in instances:
                    self._assert_running(instance, "after start-up")

    def health_argv(self, instance: Instance, check: Mapping[str, Any]) -> list[str]:
        """The health check's command as Docker runs it (CMD as is, CMD-SHELL through
        /bin/sh -c), its addresses mapped."""
        test = check["test"]
        if isinstance(test, str):
            test = ["CMD-SHELL", test]
        kind, args = test[0], [self.rewrite(str(a), instance) for a in test[1:]]
        if kind == "CMD" and args:
            return args
        if kind == "CMD-SHELL" and len(args) == 1:
            return ["/bin/sh", "-c", args[0]]
        raise StackError(f"{instance.service}: healthcheck test {test!r} is not CMD/CMD-SHELL")

    def probe(self, instance: Instance, check: Mapping[str, Any]) -> tuple[bool, str]:
        """Run the health check as written, in the instance's environment; whether it passed
        and its output."""
        argv = self.health_argv(instance, check)
        timeout = seconds(check.get("timeout", HEALTH_DEFAULTS["timeout"]))
        service = self.services[instance.service]
        if PostgresTier.runs(service):
            assert self.postgres is not None
            argv = self.postgres.probe(instance.service, argv, instance.env)
            env, cwd = None, "/"
        else:
            env, cwd = instance.env, str(instance.home)
        try:
            result = subprocess.run(
                argv,
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False, f"(timed out after {timeout:g} s)"
        output = result.stdout.decode(errors="replace").strip()
        return result.returncode == 0, f"exit code {result.returncode}: {output}"

    def down(self) -> dict[str, int | None]:
        """Stop in reverse start order (SIGTERM, then SIGKILL after the grace period), then the
        PostgreSQL tier; each application instance's exit code (None: had to be killed)."""
        for monitor in self.monitors.values():
            monitor.stop()
        for name in reversed(self._started):
            if PostgresTier.runs(self.services[name]):
                continue  # the PostgreSQL tier stops its own, last
            running = [i for i in self.instances[name] if i.process and i.process.poll() is None]
            for instance in running:  # a scaled service's instances stop together
                assert instance.process is not None
                instance.process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + STOP_GRACE_S
            for instance in self.instances[name]:
                process = instance.process
                if process is None:
                    continue
                try:
                    code: int | None = process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    code = None
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)  # its group: ours alone
                process.wait()
                self.exit_codes.setdefault(instance.name, code)
        self._started.clear()
        if self.postgres is not None:
            self.postgres.stop()
        return dict(self.exit_codes)

    def logs(self) -> str:
        parts = []
        for instances in self.instances.values():
            for instance in instances:
                parts.append(f"--- {instance.name} ---\n{log_tail(instance.log)}")
        return "\n".join(parts)


@contextlib.contextmanager
def running_stack(
    compose: dict[str, Any], scale: Mapping[str, int] | None = None
) -> Iterator[Stack]:
    """The stack, up; stopped, and its folder removed, on every way out."""
    # Under the system temp folder: the PostgreSQL OS user must be able to enter it.
    root = Path(tempfile.mkdtemp(prefix="mirrortree-compose-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    postgres: PostgresTier | None = None
    stack: Stack | None = None
    taken: set[int] = set()
    try:
        if any(PostgresTier.runs(svc) for svc in active_services(compose).values()):
            postgres = PostgresTier(compose, root, taken)
        stack = Stack(compose, root, scale, postgres, taken)
        try:
            stack.up()
        except BaseException:
            print(stack.logs())
            raise
        yield stack
    finally:
        if stack is not None:
            stack.down()
        elif postgres is not None:
            postgres.stop()
        shutil.rmtree(root, ignore_errors=True)
