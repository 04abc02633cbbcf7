"""`bench.run` against a deployment it is given (--tree, --graph, --replica-dsn): it starts
nothing, loads its story graph into a project of its own there, measures it beside the raw
baselines, and refuses addresses beyond loopback."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import asyncpg
import pytest

from tests.conftest import unique

ROOT = Path(__file__).resolve().parent.parent
CLEAN_ENV = {
    "MIRRORTREE_CALLER_TOKEN": "",
    "MIRRORTREE_BINDING_TOKEN": "",
    "MIRRORTREE_LOAD_TREE": "",
    "MIRRORTREE_LOAD_GRAPH": "",
    "MIRRORTREE_LOAD_PRIMARY_DSN": "",
    "MIRRORTREE_LOAD_REPLICA_DSN": "",
}
LOCAL = ["--tree", "127.0.0.1:1", "--graph", "127.0.0.1:2"]
LOCAL_DSN = "postgresql://reader@127.0.0.1:5432/mirrortree"
REMOTE_DSN = "postgresql://reader@192.0.2.1:5432/mirrortree"


async def run_bench(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.run",
        *args,
        cwd=ROOT,
        env={**os.environ, **CLEAN_ENV},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 200)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.timeout(240)
async def test_a_run_against_a_started_stack_loads_its_own_project_and_reports_the_baselines(
    cluster, tree_service, graph_service
):
    project = unique("bench")
    given = [
        "--tree",
        f"127.0.0.1:{tree_service.port}",
        "--graph",
        f"127.0.0.1:{graph_service.port}",
        "--replica-dsn",
        cluster.replica_dsn,
        "--objects",
        "300",
        "--per-result",
        "100",
    ]
    code, out, err = await run_bench(
        *given,
        "--project",
        project,
        "--seconds",
        "0.5",
        "--concurrency",
        "2",
        "--load-concurrency",
        "2",
    )
    assert code == 0, out + err
    assert f"loading 271 objects in 4 results into project {project}" in out
    # Measured on the services given, in the project it loaded; no primary DSN, no VACUUM.
    assert "no VACUUM ANALYZE (no --primary-dsn)" in out
    assert f"the deployment at 127.0.0.1:{tree_service.port} and " in out
    assert "objects by type: event 180" in out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[2].startswith("| empty gRPC call (health Check) | "), rows
    assert rows[3].startswith("| raw asyncpg point query (replica) | "), rows
    assert rows[-1].startswith("| AskQuestion (append + idempotency key) | "), rows
    for row in rows[2:]:
        p50, p99, rate = (float(cell.replace(",", "")) for cell in row.split(" | ")[1:4])
        assert 0 < p50 <= p99 and rate > 0, row
    replica = await asyncpg.connect(cluster.replica_dsn)
    try:
        results = await replica.fetchval(
            "SELECT count(*) FROM review_results WHERE scope_projects = $1::text[]", [project]
        )
    finally:
        await replica.close()
    assert results == 4
    # The project now holds the graph: a second run reuses it only when told to, and only
    # when its shape is the one asked for.
    code, _, err = await run_bench(*given, "--project", project)
    assert code == 1
    assert f"project {project} already holds a story graph: --reuse measures it" in err
    code, _, err = await run_bench(*given, "--project", project, "--reuse", "--objects", "900")
    assert code == 1
    assert f"project {project} holds 4 of the 11 results (271 of the 871 objects)" in err
    assert "there is no such graph to reuse" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--tree", "192.0.2.1:1", "--graph", "127.0.0.1:2", "--replica-dsn", LOCAL_DSN],
            "192.0.2.1:1 is not a loopback address; --allow-remote allows it",
        ),
        (
            [*LOCAL, "--replica-dsn", REMOTE_DSN],
            "192.0.2.1:5432 is not a loopback address; --allow-remote allows it",
        ),
        (["--tree", "127.0.0.1:1"], "--tree and --graph go together"),
        (LOCAL, "--replica-dsn is needed with --tree"),
        (
            [*LOCAL, "--replica-dsn", LOCAL_DSN, "--data-dir", "/tmp/x"],
            "--data-dir applies to the clusters bench.run starts, not to --tree",
        ),
        (["--reuse"], "--project and --reuse go with --tree"),
    ],
)
async def test_a_target_it_should_not_touch_is_refused_before_anything_runs(args, message):
    code, out, err = await run_bench(*args)
    assert code == 2
    assert message in err
    assert "loading" not in out
