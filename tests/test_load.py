"""`make load`'s code path, briefly and at a tiny rate, against the harness's real services:
its report with the raw baselines, its deliberate conflicts counted apart, and its zero-lost
verification, which must also catch a write that is not there."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from load.soak import Soak, markdown
from load.targets import Targets
from load.verify import verify
from load.workload import Conversation, Review, Workload
from tests.conftest import free_port, unique
from tests.gateway.harness import http_gateway

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["--tree", "127.0.0.1:1", "--graph", "127.0.0.1:2"]


async def start_load(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "load",
        *args,
        cwd=ROOT,
        env={**os.environ, "MIRRORTREE_CALLER_TOKEN": "", "MIRRORTREE_BINDING_TOKEN": ""},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def run_load(*args: str) -> tuple[int, str, str]:
    process = await start_load(*args)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.timeout(240)
async def test_a_brief_mixed_soak_reports_every_operation_against_the_baselines_and_loses_nothing(
    cluster, tree_service, graph_service, tmp_path
):
    async with http_gateway(graph_service.port) as url:
        code, out, err = await run_load(
            "--tree",
            f"127.0.0.1:{tree_service.port}",
            "--graph",
            f"127.0.0.1:{graph_service.port}",
            "--gateway",
            url,
            "--project",
            unique("load"),
            "--seconds",
            "6",
            "--rate",
            "4",
            "--users",
            "4",
            "--mix",
            "tree=1,ingest=1,grpc_read=1,mcp_read=1",
            "--report-dir",
            str(tmp_path),
            "--soak",
            "--sample-every",
            "1",
            # The harness runs the services in this process.
            "--watch",
            f"services={os.getpid()}",
            "--pg-dsn",
            f"primary={cluster.primary_dsn}",
            # The replica's point query is measured, the primary's is not: no DSN for it.
            "--replica-dsn",
            cluster.replica_dsn,
            "--baseline-seconds",
            "0.5",
        )
    assert code == 0, out + err
    report = json.loads((tmp_path / "load-report.json").read_text())
    assert (tmp_path / "load-report.md").read_text() in out
    names = {op["operation"] for op in report["operations"]}
    # Every user kind ran; the chain of a tree step reached at least its adoption.
    for name in (
        "CreateTree",
        "AskQuestion",
        "AdoptAnswer",
        "RecordReview",
        "Search",
        "mcp story_graph_search",
    ):
        assert name in names, (name, names)
    for op in report["operations"]:
        assert op["calls"] > 0 and op["p50_ms"] <= op["p95_ms"] <= op["p99_ms"]
    assert report["failures"] == 0 and report["errors"] == []
    # The baselines were measured against the same services and replica, and each operation's
    # p50 is stated against their sum.
    baselines = {row["baseline"]: row for row in report["baselines"]}
    assert list(baselines) == [
        "empty gRPC call (health Check) to tree_service",
        "empty gRPC call (health Check) to graph_service",
        "raw asyncpg point query (replica)",
        "raw asyncpg point query (primary)",
    ]
    for name in list(baselines)[:3]:
        row = baselines[name]
        assert 0 < row["p50_ms"] <= row["p99_ms"] and row["per_s"] > 0, row
    assert baselines["raw asyncpg point query (primary)"]["not_measured"] == "no DSN given"
    assert report["baseline"]["is"] == (
        "empty gRPC call (health Check) to graph_service + raw asyncpg point query (replica)"
    )
    base = report["baseline"]["p50_ms"]
    assert base == pytest.approx(
        baselines["empty gRPC call (health Check) to graph_service"]["p50_ms"]
        + baselines["raw asyncpg point query (replica)"]["p50_ms"],
        abs=0.002,
    )
    for op in report["operations"]:
        assert op["p50_x_baseline"] == round(op["p50_ms"] / base, 1), op
    assert "| raw asyncpg point query (primary) | not measured: no DSN given | | |" in out
    assert "| empty gRPC call (health Check) to tree_service | " in out
    assert "| p50 ÷ baseline |" in out
    # The stale adoptions were refused as meant and kept out of the errors.
    assert report["deliberate_conflicts"]["AdoptAnswer stale"] > 0
    stale = next(op for op in report["operations"] if op["operation"] == "AdoptAnswer stale")
    assert stale["kind"] == "conflict" and stale["failures"] == 0
    check = report["verification"]
    assert check["ok"] and check["lost"] == []
    assert check["checked"]["tree"] >= 1 and check["checked"]["node"] >= 1
    assert check["checked"]["entity"] >= 1 and check["checked"]["source reference"] >= 1
    assert "zero lost" in out
    # The soak sampled this process's memory and the primary's connections all along.
    soak = {row["series"]: row for row in report["soak"]["series"]}
    assert soak["services RSS MB"]["missing"] == 0 and soak["services RSS MB"]["first"] > 10
    assert soak["primary connections"]["missing"] == 0
    assert soak["primary connections"]["max"] >= 1
    assert len(report["soak"]["times_s"]) >= 5
    assert "| services RSS MB |" in out
    # The steps under way when the time was up finished and were counted: what was read back
    # is exactly what the statistics say was acknowledged.
    calls = {op["operation"]: op["calls"] for op in report["operations"]}
    assert check["checked"]["tree"] == calls["CreateTree"]
    assert check["checked"]["entity"] == calls["RecordReview"]
    assert check["checked"]["chunk"] == calls.get("StreamAnswer chunk", 0)
    assert check["checked"]["node"] == calls["AskQuestion"] + calls.get("AddAnswer", 0)


@pytest.mark.timeout(240)
async def test_ctrl_c_ends_the_run_early_and_still_verifies_and_reports(
    tree_service, graph_service, tmp_path
):
    process = await start_load(
        "--tree",
        f"127.0.0.1:{tree_service.port}",
        "--graph",
        f"127.0.0.1:{graph_service.port}",
        "--project",
        unique("load"),
        "--seconds",
        "600",
        "--rate",
        "4",
        "--users",
        "3",
        "--mix",
        "tree=1,ingest=1,grpc_read=1",
        "--report-dir",
        str(tmp_path),
        "--baseline-seconds",
        "0.2",
    )
    assert process.stdout is not None
    # Interrupted once the users have made progress (the first progress line).
    seen = ""
    while " calls " not in seen:
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert line, seen
        seen += line.decode()
    process.send_signal(signal.SIGINT)
    rest, err = await asyncio.wait_for(process.communicate(), 120)
    out = seen + rest.decode()
    assert process.returncode == 0, out + err.decode()
    assert "interrupted: stopping the users, then verifying" in out
    report = json.loads((tmp_path / "load-report.json").read_text())
    assert report["seconds"] < 120
    calls = {op["operation"]: op["calls"] for op in report["operations"]}
    check = report["verification"]
    assert check["ok"] and check["lost"] == []
    assert check["checked"]["tree"] == calls["CreateTree"] >= 1, check
    assert check["checked"]["entity"] == calls["RecordReview"] >= 1, check
    assert "zero lost" in out
    # Measured after the interruption too; no DSN was given, the local stack's are not known.
    rows = {row["baseline"]: row for row in report["baselines"]}
    assert rows["empty gRPC call (health Check) to graph_service"]["p50_ms"] > 0
    assert rows["raw asyncpg point query (replica)"] == {
        "baseline": "raw asyncpg point query (replica)",
        "not_measured": "no DSN given",
    }
    assert report["baseline"]["is"] == "empty gRPC call (health Check) to graph_service"


async def test_the_verification_names_every_write_it_cannot_read_back(tree_service, graph_service):
    targets = Targets(
        tree=f"127.0.0.1:{tree_service.port}",
        graph=f"127.0.0.1:{graph_service.port}",
        gateway="",
        project=unique("load"),
    )
    workload = Workload(targets)
    await workload.open()
    try:
        samples = await workload.ingest_step()
        samples += await workload.tree_step(Conversation(), bud_chunks=2)
        assert [s.reason for s in samples if not s.conflict] == [None] * (len(samples) - 1)
        ledger = workload.ledger
        real = ledger.reviews[0]
        question = next(iter(ledger.nodes))
        # A node whose text is not the acknowledged one, a bud and a tree that do not exist, an
        # entity and a source reference never recorded, and a chunk-less main-line claim.
        ledger.nodes[question] = "not what was written"
        ledger.buds["00000000-0000-0000-0000-000000000000"] = "chunk 1 "
        ledger.trees.add("00000000-0000-0000-0000-000000000001")
        ledger.versions[workload.session_id] = {"00000000-0000-0000-0000-000000000002"}
        ledger.reviews.append(
            Review("load-ent-missing", "load-src-missing", "harbor", "x", real.consistency)
        )
        result = await verify(workload)
    finally:
        await workload.close()
    assert not result.ok
    lost = "\n".join(result.lost)
    assert f"node {question}: text differs" in lost
    assert "bud 00000000-0000-0000-0000-000000000000" in lost
    assert "tree 00000000-0000-0000-0000-000000000001" in lost
    assert "main-line version" in lost and "missing" in lost
    assert "entity load-ent-missing" in lost
    assert "source reference load-src-missing" in lost
    # What was really written reads back: it is not among the lost.
    assert real.entity_id not in lost and real.source_ref_id not in lost
    assert len(result.lost) == 6, lost


async def test_a_deployment_that_cannot_be_reached_is_named_and_nothing_runs():
    nobody = f"127.0.0.1:{free_port()}"
    code, out, err = await run_load("--tree", nobody, "--graph", nobody, "--mix", "tree=1")
    assert code == 4
    assert f"cannot start the run against {nobody}: UNAVAILABLE" in err
    assert "Mixed load" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mix", "tree=1,bogus=2"], "unknown user kind 'bogus'"),
        (["--mix", "tree=x"], "weight of tree must be a whole number"),
        (["--mix", "tree=0"], "at least one positive weight"),
        (["--seconds", "0"], "--seconds must be in 1..86400"),
        (["--rate", "2000", "--seconds", "7200"], "asks for 14,400,000 steps; at most 7,200,000"),
        (["--users", "5000"], "--users must be in 1..200"),
        (["--watch", "tree"], "--watch takes NAME=VALUE, not 'tree'"),
        (["--watch", "tree=abc"], "--watch tree: 'abc' is not valid"),
        (["--tree", "127.0.0.1:1"], "--tree and --graph go together"),
        (
            ["--tree", "127.0.0.1:1", "--graph", "127.0.0.1:2"],
            "give --gateway URL, or set mcp_read=0",
        ),
        (
            ["--tree", "192.0.2.1:1", "--graph", "127.0.0.1:2", "--mix", "tree=1"],
            "192.0.2.1:1 is not a loopback address",
        ),
        (
            [*TARGETS, "--mix", "tree=1", "--replica-dsn", "postgresql://u@192.0.2.1:5432/m"],
            "192.0.2.1:5432 is not a loopback address",
        ),
        (
            ["--replica-dsn", "postgresql://reader@127.0.0.1:5432/mirrortree"],
            "--primary-dsn and --replica-dsn go with --tree and --graph",
        ),
        (["--baseline-seconds", "0"], "--baseline-seconds must be in 0.2..60"),
    ],
)
async def test_bad_arguments_are_refused_before_anything_runs(args, message):
    code, _, err = await run_load(*args)
    assert code == 2
    assert message in err


def test_the_soak_tells_a_wavering_level_from_a_slow_climb():
    # An hour every 10 s: one series wavers 4 MB around a level, one climbs 3 MB an hour
    # under the same waver; the warm-up quarter climbs steeply and is left out.
    times = [10.0 * i for i in range(361)]
    waver = [4.0 * ((i % 7) / 6) for i in range(361)]
    warm = [20.0 * max(0.0, 900 - t) / 900 for t in times]
    soak = Soak(pids={}, dsns={}, interval_s=10, times=times)
    soak.series["level RSS MB"] = [70 - w + v for w, v in zip(warm, waver, strict=True)]
    soak.series["climb RSS MB"] = [70 + 3 * t / 3600 + v for t, v in zip(times, waver, strict=True)]
    soak.series["gone RSS MB"] = [None] * 361
    rows = {row["series"]: row for row in soak.summary()["series"]}
    assert abs(rows["level RSS MB"]["trend_per_hour"]) < 0.2
    assert rows["climb RSS MB"]["trend_per_hour"] == pytest.approx(3.0, abs=0.2)
    assert rows["gone RSS MB"] == {"series": "gone RSS MB", "missing": 361}
    table = markdown(soak.summary())
    assert "| trend per hour |" in table and "| gone RSS MB | – | – | – | – | – | 361 |" in table
