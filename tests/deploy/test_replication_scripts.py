"""The compose deployment's PostgreSQL tier, run for real without a container engine.

The scripts under deploy/ run exactly as the compose file wires them, against the harness's
PostgreSQL binaries and as the unprivileged PostgreSQL OS user: the primary is initialised the
way the official postgres image does it (initdb, a socket-only temporary server, the
/docker-entrypoint-initdb.d scripts, then the server with the compose `command`), and every
replica service starts through its compose entrypoint, which clones the primary with
pg_basebackup and execs the standby. Each service's environment is the compose file's own,
with only host names and ports changed to loopback ones.

One deliberate difference from the image: pg_hba.conf keeps only the image's own
`host all all all <method>` line (initdb's loopback `trust` lines go), because in a container
every connection from another service arrives over the network; so the replication line the
init script adds, and the passwords, are really what lets the replicas in.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools.pgcluster.access import runner_for
from devtools.pgcluster.binaries import find_pg_bindir
from devtools.pgcluster.runner import Runner
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
# The postgres image's PGDATA inside its volume (/var/lib/postgresql), per major version.
IMAGE_PGDATA = "18/docker"
INITDB_D = "/docker-entrypoint-initdb.d/"
WAIT_S = 90.0


def interpolate(value: str) -> str:
    """${VAR:-default} as compose expands it when VAR is unset (the development defaults)."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}", lambda m: m.group(1) or "", value)


def service_env(service: dict[str, Any]) -> dict[str, str]:
    return {str(k): interpolate(str(v)) for k, v in (service.get("environment") or {}).items()}


@dataclass
class Deployment:
    """The primary and the replicas started from the compose file's scripts."""

    runner: Runner
    root: Path
    compose: dict[str, Any]
    primary_port: int
    primary_data: Path
    replicas: dict[str, tuple[int, Path]] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)

    @property
    def services(self) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = self.compose["services"]
        return result

    def replica_services(self) -> dict[str, dict[str, Any]]:
        return {
            name: svc
            for name, svc in self.services.items()
            if "replica-entrypoint" in " ".join(svc.get("entrypoint") or [])
        }

    def as_pg_user(self, argv: list[str], env: dict[str, str]) -> list[str]:
        """argv run as the PostgreSQL OS user with exactly env (plus PATH to the binaries)."""
        full = {"PATH": f"{self.runner.bindir}:/usr/bin:/bin", "HOME": str(self.root), **env}
        return [*self.runner.prefix, "env", "-i", *(f"{k}={v}" for k, v in full.items()), *argv]

    def run(self, argv: list[str], env: dict[str, str], timeout: float = 120) -> str:
        result = subprocess.run(
            self.as_pg_user(argv, env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd="/",
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def sql(self, port: int, query: str, *, user: str = "mirrortree", password: str = "") -> str:
        env = {"PGPASSWORD": password} if password else {}
        return self.run(
            [
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                user,
                "-d",
                "mirrortree",
                "--no-psqlrc",
                "-v",
                "ON_ERROR_STOP=1",
                "-tAc",
                query,
            ],
            {**env, "PGCONNECT_TIMEOUT": "5"},
        ).strip()

    def owner_password(self) -> str:
        return service_env(self.services["primary"])["POSTGRES_PASSWORD"]

    def owner_sql(self, port: int, query: str) -> str:
        return self.sql(port, query, password=self.owner_password())


def mounted(service: dict[str, Any], container_path: str) -> Path:
    for volume in service.get("volumes", []):
        source, target = str(volume).split(":")[:2]
        if target == container_path and source.startswith("."):
            return ROOT / source
    raise AssertionError(f"nothing is bind-mounted at {container_path}")


def install_mounts(deployment: Deployment, name: str, service: dict[str, Any]) -> Path:
    """Copy the service's bind-mounted repository files under <root>/<name>/, at their
    container paths (read-only, like `:ro`); return that folder."""
    base = deployment.root / name
    for volume in service.get("volumes", []):
        source, target = str(volume).split(":")[:2]
        if source.startswith("."):
            destination = base / target.lstrip("/")
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / source, destination)
            os.chmod(destination, 0o555)
    return base


def chown_tree(runner: Runner, path: Path) -> None:
    for folder, dirs, files in os.walk(path):
        runner.chown(Path(folder))
        for name in (*dirs, *files):
            runner.chown(Path(folder) / name)


def wait_for(check: Any, what: str, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except AssertionError as error:
            last = error
        else:
            if last:
                return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}: {last}")


def start_primary(deployment: Deployment) -> None:
    """What the postgres image does on an empty volume, with the compose service's settings."""
    primary = deployment.services["primary"]
    env = service_env(primary)
    base = install_mounts(deployment, "primary", primary)
    pgdata = deployment.primary_data
    pgdata.mkdir(parents=True, mode=0o700)
    chown_tree(deployment.runner, base)
    pwfile = base / "pwfile"
    pwfile.write_text(env["POSTGRES_PASSWORD"] + "\n")
    deployment.runner.chown(pwfile)
    deployment.run(
        ["initdb", "-D", str(pgdata), f"--username={env['POSTGRES_USER']}", f"--pwfile={pwfile}"],
        {},
    )
    pwfile.unlink()
    method = deployment.run(["postgres", "-D", str(pgdata), "-C", "password_encryption"], {})
    hba = pgdata / "pg_hba.conf"
    hba.write_text(
        f"local all all trust\nlocal replication all trust\n\nhost all all all {method.strip()}\n"
    )
    deployment.runner.chown(hba)
    log = deployment.root / "primary.log"
    deployment.logs["primary"] = log
    # The image's temporary server: Unix socket only (the default directory, as the init
    # scripts connect without a host), on this test's own port.
    port = str(deployment.primary_port)
    temp_options = f"-c listen_addresses='' -p {port}"
    ctl = ["pg_ctl", "-D", str(pgdata), "-l", str(log), "-w", "-t", "60"]
    deployment.run([*ctl, "-o", temp_options, "start"], {})
    socket_env = {"PGPORT": port}
    database = env["POSTGRES_DB"]
    deployment.run(
        ["psql", "--no-psqlrc", "-U", env["POSTGRES_USER"], "-d", "postgres", "-v",
         "ON_ERROR_STOP=1", "-c", f'CREATE DATABASE "{database}"'],
        socket_env,
    )  # fmt: skip
    scripts = sorted(str(v).split(":")[1] for v in primary["volumes"] if f":{INITDB_D}" in str(v))
    assert scripts, "the primary mounts no init scripts"
    for script in scripts:
        deployment.run(
            ["bash", str(base / script.lstrip("/"))], {**env, **socket_env, "PGDATA": str(pgdata)}
        )
    deployment.run([*ctl, "-m", "fast", "stop"], {})
    command = list(primary["command"])
    assert command[0] == "postgres"
    deployment.run(
        [*ctl, "-o", " ".join([*command[1:], "-c", "listen_addresses=127.0.0.1", "-p", port]),
         "start"],
        {},
    )  # fmt: skip


def start_replica(deployment: Deployment, name: str) -> None:
    """The replica service's own entrypoint and command, as its container would run them."""
    service = deployment.services[name]
    base = install_mounts(deployment, name, service)
    port, pgdata = deployment.replicas[name]
    chown_tree(deployment.runner, base)
    env = service_env(service)
    env |= {
        "MIRRORTREE_PRIMARY_HOST": "127.0.0.1",
        "MIRRORTREE_PRIMARY_PORT": str(deployment.primary_port),
        "PGDATA": str(pgdata),
    }
    entrypoint = list(service["entrypoint"])
    script = next(part for part in entrypoint if part.endswith(".sh"))
    entrypoint[entrypoint.index(script)] = str(base / script.lstrip("/"))
    command = [*service["command"], "-c", "listen_addresses=127.0.0.1", "-p", str(port)]
    log = deployment.root / f"{name}.log"
    deployment.logs[name] = log
    with log.open("a") as out:
        deployment.processes[name] = subprocess.Popen(
            deployment.as_pg_user([*entrypoint, *command], env),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            cwd="/",
            stdin=subprocess.DEVNULL,
        )


def stop_replica(deployment: Deployment, name: str) -> None:
    _, pgdata = deployment.replicas[name]
    process = deployment.processes.pop(name)
    if process.poll() is None and (pgdata / "postmaster.pid").exists():
        deployment.run(["pg_ctl", "-D", str(pgdata), "-m", "fast", "-w", "stop"], {})
    process.wait(timeout=60)


def healthcheck(deployment: Deployment, name: str) -> bool:
    """The compose healthcheck of the service, run in its environment against its port."""
    service = deployment.services[name]
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    port, _ = deployment.replicas.get(name, (deployment.primary_port, None))
    env = {**service_env(service), "PGPORT": str(port)}
    result = subprocess.run(
        deployment.as_pg_user(["bash", "-c", test[1]], env),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd="/",
        stdin=subprocess.DEVNULL,
    )
    if result.returncode != 0:
        print(f"{name} healthcheck: {result.stdout}{result.stderr}")
    return result.returncode == 0


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    compose = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    runner = runner_for(find_pg_bindir())
    # Under the system temp folder: the PostgreSQL OS user must be able to enter it.
    root = Path(tempfile.mkdtemp(prefix="mirrortree-deploy-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    runner.chown(root)
    made = Deployment(runner, root, compose, free_port(), root / "primary" / IMAGE_PGDATA)
    for index, name in enumerate(sorted(made.replica_services())):
        volume = root / name / "var/lib/postgresql"
        volume.mkdir(parents=True)
        # The image creates PGDATA empty; the second replica starts without it, as on a volume
        # whose folder was never made: the entrypoint handles both.
        if index == 0:
            (volume / IMAGE_PGDATA).mkdir(parents=True, mode=0o700)
        made.replicas[name] = (free_port(), volume / IMAGE_PGDATA)
    try:
        start_primary(made)
        assert healthcheck(made, "primary")
        for name in made.replicas:
            start_replica(made, name)
        for name in made.replicas:
            wait_for(lambda name=name: healthcheck(made, name), f"{name} to be healthy")
        yield made
    except BaseException:
        for name, log in made.logs.items():
            if log.exists():
                print(f"--- {name} log ---\n{log.read_text(errors='replace')[-4000:]}")
        raise
    finally:
        for name in list(made.processes):
            try:
                stop_replica(made, name)
            except Exception:  # keep stopping the others
                made.processes.get(name, subprocess.Popen(["true"])).kill()
        if (made.primary_data / "postmaster.pid").exists():
            subprocess.run(
                made.as_pg_user(["pg_ctl", "-D", str(made.primary_data), "-m", "immediate",
                                 "stop"], {}),
                capture_output=True,
                check=False,
                timeout=60,
            )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


def test_compose_runs_two_replicas(deployment):
    assert len(deployment.replicas) == 2


def test_every_replica_streams_from_the_primary_through_its_own_slot(deployment):
    slots = {
        service_env(svc)["MIRRORTREE_REPLICATION_SLOT"]
        for svc in deployment.replica_services().values()
    }
    assert len(slots) == 2

    def streaming() -> str:
        rows = deployment.owner_sql(
            deployment.primary_port,
            "SELECT string_agg(slot_name || ':' || active::text, ',' ORDER BY slot_name) "
            "FROM pg_replication_slots",
        )
        senders = deployment.owner_sql(
            deployment.primary_port,
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
        )
        return rows if senders == "2" else ""

    active = wait_for(streaming, "both replicas to stream")
    assert set(active.split(",")) == {f"{slot}:true" for slot in slots}


def test_primary_init_created_the_slots_it_was_told_to(deployment):
    wanted = service_env(deployment.services["primary"])["MIRRORTREE_REPLICATION_SLOTS"]
    names = deployment.owner_sql(
        deployment.primary_port, "SELECT string_agg(slot_name, ',') FROM pg_replication_slots"
    )
    assert set(wanted.split(",")) <= set(names.split(","))


def test_a_write_on_the_primary_reaches_both_replicas(deployment):
    deployment.owner_sql(
        deployment.primary_port,
        "CREATE TABLE IF NOT EXISTS deploy_probe (n int); INSERT INTO deploy_probe VALUES (42)",
    )
    for name, (port, _) in deployment.replicas.items():
        wait_for(
            lambda port=port: (
                deployment.owner_sql(
                    port, "SELECT count(*) FROM pg_tables WHERE tablename = 'deploy_probe'"
                )
                == "1"
                and deployment.owner_sql(port, "SELECT sum(n) FROM deploy_probe") == "42"
            ),
            f"the write to reach {name}",
        )
        assert deployment.owner_sql(port, "SELECT pg_is_in_recovery()") == "t"


def test_the_service_roles_log_in_with_their_passwords_on_every_node(deployment):
    primary_env = service_env(deployment.services["primary"])
    writer = primary_env["MIRRORTREE_PG_WRITER_PASSWORD"]
    reader = primary_env["MIRRORTREE_PG_READER_PASSWORD"]
    assert (
        deployment.sql(deployment.primary_port, "SELECT 1", user="mirrortree_writer",
                       password=writer) == "1"
    )  # fmt: skip
    for port, _ in deployment.replicas.values():
        assert (
            deployment.sql(port, "SHOW default_transaction_read_only", user="mirrortree_reader",
                           password=reader) == "on"
        )  # fmt: skip


def test_replicas_stream_as_the_replication_role_which_can_do_nothing_else(deployment):
    primary_env = service_env(deployment.services["primary"])
    role = primary_env["MIRRORTREE_REPLICATION_USER"]
    users = deployment.owner_sql(
        deployment.primary_port, "SELECT string_agg(DISTINCT usename, ',') FROM pg_stat_replication"
    )
    assert users == role
    attributes = deployment.owner_sql(
        deployment.primary_port,
        f"SELECT rolreplication, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
        f"WHERE rolname = '{role}'",
    )
    assert attributes == "t|f|f|f"
    password = primary_env["MIRRORTREE_REPLICATION_PASSWORD"]
    with pytest.raises(AssertionError, match="permission denied"):
        deployment.sql(
            deployment.primary_port, "CREATE TABLE stolen (n int)", user=role, password=password
        )


def test_a_wrong_password_is_refused(deployment):
    with pytest.raises(AssertionError, match="password authentication failed"):
        deployment.sql(deployment.primary_port, "SELECT 1", password="not-the-password")


def test_a_restarted_replica_resumes_without_cloning_again(deployment):
    name = sorted(deployment.replicas)[0]
    port, pgdata = deployment.replicas[name]
    identifier = (pgdata / "PG_VERSION").stat().st_ino
    stop_replica(deployment, name)
    start_replica(deployment, name)
    wait_for(lambda: healthcheck(deployment, name), f"{name} to be healthy again")
    assert (pgdata / "PG_VERSION").stat().st_ino == identifier
    assert deployment.logs[name].read_text().count("cloning the primary") == 1
    deployment.owner_sql(
        deployment.primary_port,
        "CREATE TABLE IF NOT EXISTS restart_probe (n int); INSERT INTO restart_probe VALUES (7)",
    )
    wait_for(
        lambda: (
            deployment.owner_sql(
                port, "SELECT count(*) FROM pg_tables WHERE tablename = 'restart_probe'"
            )
            == "1"
        ),
        "the restarted replica to catch up",
    )
