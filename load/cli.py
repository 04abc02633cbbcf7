"""`make load` / `python -m load`: run the mix against a deployment, report, verify.

    python -m load [--tree HOST:PORT --graph HOST:PORT --gateway URL] [--seconds S] [--soak]
                   [--primary-dsn DSN] [--replica-dsn DSN] [--baseline-seconds S]
                   [--rate STEPS_PER_S] [--users N] [--mix tree=3,ingest=2,...]
                   [--report-dir DIR]

Without addresses it starts the local stack as `make run` does (in a temporary data folder on
free ports) and stops it afterwards. When the mix is over, the raw baselines of bench.baselines
are measured against the same deployment (the point queries where a DSN is known) and the
report states each operation's p50 as a multiple of them. Tokens come from the environment
(load.targets): MIRRORTREE_CALLER_TOKEN (TreeService host_app caller), MIRRORTREE_BINDING_TOKEN
(reads; minted for the run when unset) and MIRRORTREE_CONFIRMATION_SECRET (Canonicalize's
grants). Exit status: 0 when nothing was lost and the errors stayed within --max-errors, 1 when
a write was lost, 3 on too many errors, 4 when the run could not start (a service unreachable,
a token refused).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import gevent
import grpc
from locust.env import Environment

from bench.baselines import ObjectKey, measure_deployment
from devtools import launcher, pgcluster
from devtools.pgcluster.processes import cluster_info
from load import report, targets
from load.bridge import Bridge
from load.soak import Soak
from load.soak import markdown as soak_markdown
from load.targets import CALL_TIMEOUT_S, Targets
from load.users import KINDS, Shared, configure
from load.verify import verify
from load.workload import Workload, error_reason

DEFAULT_MIX = "tree=3,ingest=2,grpc_read=3,mcp_read=2"
DEFAULT_SECONDS = 60.0
SOAK_SECONDS = 600.0
# A soak long enough to tell a creep that levels off from a leak takes hours; the steps a run
# may ask for (rate × seconds) stay bounded as they were at an hour of the highest rate.
MAX_SECONDS = 86_400
MAX_STEPS = 7_200_000
MAX_USERS = 200
MAX_RATE = 2000.0
PROGRESS_S = 5.0
BASELINE_SECONDS = 2.0
STOP_TIMEOUT_S = 120.0


def parse_mix(text: str) -> dict[str, int]:
    mix: dict[str, int] = {}
    for part in text.split(","):
        kind, _, weight = part.strip().partition("=")
        if kind not in KINDS:
            raise argparse.ArgumentTypeError(
                f"unknown user kind {kind!r} in --mix; known: {', '.join(KINDS)}"
            )
        try:
            mix[kind] = int(weight)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--mix weight of {kind} must be a whole number, not {weight!r}"
            ) from None
        if mix[kind] < 0:
            raise argparse.ArgumentTypeError(f"--mix weight of {kind} must not be negative")
    if not any(mix.values()):
        raise argparse.ArgumentTypeError("--mix needs at least one positive weight")
    return mix


def bounded(
    kind: type[float] | type[int], low: float, high: float, what: str
) -> Callable[[str], float | int]:
    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, not {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be in {low:g}..{high:g}, not {text}")
        return value

    return parse


def named(option: str, kind: type[int] | type[str]) -> Callable[[str], tuple[str, object]]:
    def parse(text: str) -> tuple[str, object]:
        name, sep, value = text.partition("=")
        if not sep or not name or not value:
            raise argparse.ArgumentTypeError(f"{option} takes NAME=VALUE, not {text!r}")
        try:
            return name, kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} {name}: {value!r} is not valid") from None

    return parse


def arguments(argv: list[str] | None) -> argparse.Namespace:
    env = os.environ.get
    p = argparse.ArgumentParser(prog="python -m load", description="Mixed load, then verify.")
    targets.add_arguments(p)
    p.add_argument("--gateway", default=env("MIRRORTREE_LOAD_GATEWAY", ""), help="MCP endpoint URL")
    p.add_argument("--project", default="load", help="the project the run writes and reads")
    p.add_argument(
        "--seconds",
        type=bounded(float, 1, MAX_SECONDS, "--seconds"),
        help=f"default {DEFAULT_SECONDS:g}, with --soak {SOAK_SECONDS:g}",
    )
    p.add_argument(
        "--rate",
        type=bounded(float, 0.1, MAX_RATE, "--rate"),
        default=10.0,
        help="steps per second over all users (a step is one to ten calls)",
    )
    p.add_argument("--users", type=bounded(int, 1, MAX_USERS, "--users"), default=10)
    p.add_argument("--mix", type=parse_mix, default=parse_mix(DEFAULT_MIX))
    p.add_argument("--bud-chunks", type=bounded(int, 1, 100, "--bud-chunks"), default=5)
    p.add_argument("--max-errors", type=bounded(int, 0, 10**9, "--max-errors"), default=0)
    p.add_argument("--report-dir", type=Path, help="write load-report.md and .json here")
    p.add_argument(
        "--baseline-seconds",
        type=bounded(float, 0.2, 60, "--baseline-seconds"),
        default=BASELINE_SECONDS,
        help="each baseline's seconds one call at a time, and again with --users in flight",
    )
    p.add_argument(
        "--soak",
        action="store_true",
        help="sample the services' memory and PostgreSQL's connections through the run",
    )
    p.add_argument("--sample-every", type=bounded(float, 1, 600, "--sample-every"), default=10.0)
    p.add_argument(
        "--watch",
        type=named("--watch", int),
        action="append",
        default=[],
        metavar="NAME=PID",
        help="a service process whose memory the soak samples (the local stack's: all three)",
    )
    p.add_argument(
        "--pg-dsn",
        type=named("--pg-dsn", str),
        action="append",
        default=[],
        metavar="NAME=DSN",
        help="a PostgreSQL server whose connections the soak counts (local stack: all)",
    )
    args = p.parse_args(argv)
    if args.seconds is None:
        args.seconds = SOAK_SECONDS if args.soak else DEFAULT_SECONDS
    if args.rate * args.seconds > MAX_STEPS:
        p.error(
            f"--rate {args.rate:g} for {args.seconds:g} s asks for "
            f"{args.rate * args.seconds:,.0f} steps; at most {MAX_STEPS:,} in one run"
        )
    given = [bool(args.tree), bool(args.graph), bool(args.gateway)]
    if any(given) and not (args.tree and args.graph):
        p.error("--tree and --graph go together (and --gateway, unless --mix has mcp_read=0)")
    if args.tree and args.mix.get("mcp_read", 0) and not args.gateway:
        p.error("the mix has mcp_read users: give --gateway URL, or set mcp_read=0")
    targets.check_arguments(p, args, urlsplit(args.gateway).netloc if args.gateway else "")
    return args


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Deployment:
    tree: str
    graph: str
    gateway: str
    pids: dict[str, int] = field(default_factory=dict)  # what the soak samples
    dsns: dict[str, str] = field(default_factory=dict)
    primary_dsn: str = ""  # for the point-query baselines; "" = not known
    replica_dsn: str = ""


@contextlib.contextmanager
def local_stack() -> Iterator[Deployment]:
    """The stack of `make run` in a temporary data folder on free ports; stopped afterwards."""
    data = Path(tempfile.mkdtemp(prefix="mirrortree-load-"))
    cluster = pgcluster.ClusterConfig(
        data_dir=data, primary_port=free_port(), replica_port=free_port()
    )
    ports = launcher.ServicePorts(
        tree=free_port(), graph=free_port(), gateway=free_port(), webview=free_port()
    )
    stack = launcher.Stack(cluster, data / "logs")
    try:
        launcher.launch(stack, ports)
        info = cluster_info(cluster)
        dsns = {"primary": info.primary_dsn}
        dsns.update({f"replica{i + 1}": dsn for i, dsn in enumerate(info.replica_dsns)})
        yield Deployment(
            f"127.0.0.1:{ports.tree}",
            f"127.0.0.1:{ports.graph}",
            f"http://127.0.0.1:{ports.gateway}/mcp",
            {name: process.pid for name, process in stack.processes},
            dsns,
            info.primary_dsn,
            info.replica_dsn,
        )
    finally:
        print("stopping the local stack ...", flush=True)
        stack.stop()
        shutil.rmtree(data, ignore_errors=True)


def run(args: argparse.Namespace, where: Deployment) -> int:
    tree, graph, gateway = where.tree, where.graph, where.gateway
    bridge = Bridge()
    workload = Workload(Targets.from_env(tree, graph, gateway, args.project))
    try:
        try:
            asyncio.run_coroutine_threadsafe(workload.open(), bridge.loop).result(timeout=120)
        except Exception as exc:
            print(
                f"error: cannot start the run against {tree}: {error_reason(exc)} "
                f"({exc.details() if isinstance(exc, grpc.RpcError) else exc})",
                file=sys.stderr,
            )
            return 4
        shared = Shared(bridge, workload, bud_chunks=args.bud_chunks)
        classes = configure(shared, args.mix, args.rate / args.users)
        environment = Environment(user_classes=classes)
        runner = environment.create_local_runner()
        print(
            f"load: {args.users} users, {args.rate:g} steps/s, mix {args.mix}, "
            f"{args.seconds:g} s against {tree}, {graph}, {gateway or 'no gateway'}",
            flush=True,
        )
        soak, sampling, stop_sampling = None, None, asyncio.Event()
        if args.soak:
            soak = Soak(where.pids, where.dsns, args.sample_every)
            sampling = asyncio.run_coroutine_threadsafe(soak.run(stop_sampling), bridge.loop)
        started = time.monotonic()
        runner.start(args.users, spawn_rate=args.users)

        def progress() -> None:
            while True:
                gevent.sleep(PROGRESS_S)
                total = environment.stats.total
                print(
                    f"  {time.monotonic() - started:5.0f} s  {total.num_requests} calls  "
                    f"{total.current_rps:.1f}/s  {sum(shared.errors.values())} errors  "
                    f"{sum(shared.conflicts.values())} deliberate conflicts",
                    flush=True,
                )

        def finish() -> None:
            shared.stopping = True
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while shared.in_flight and time.monotonic() < deadline:
                gevent.sleep(0.05)
            runner.quit()

        ticker = gevent.spawn(progress)
        timer = gevent.spawn_later(args.seconds, finish)

        def interrupted() -> None:
            # The first Ctrl-C ends the run early yet still verifies and reports what was
            # acknowledged; a second one abandons it (Python's own handler, back in place).
            print("interrupted: stopping the users, then verifying (Ctrl-C again to abandon)")
            watcher.cancel()
            signal.signal(signal.SIGINT, signal.default_int_handler)
            timer.kill()
            gevent.spawn(finish)

        watcher = gevent.signal_handler(signal.SIGINT, interrupted)
        assert runner.greenlet is not None
        runner.greenlet.join()
        watcher.cancel()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        ticker.kill()
        seconds = time.monotonic() - started
        if sampling is not None:
            bridge.loop.call_soon_threadsafe(stop_sampling.set)
            sampling.result(timeout=120)
        print("measuring the baselines ...", flush=True)
        measuring = measure_deployment(
            {"tree_service": tree, "graph_service": graph},
            {"replica": where.replica_dsn, "primary": where.primary_dsn},
            stored_object(workload),
            seconds=args.baseline_seconds,
            concurrency=args.users,
            call_timeout=CALL_TIMEOUT_S,
        )
        baselines = asyncio.run_coroutine_threadsafe(measuring, bridge.loop).result()
        print("verifying every acknowledged write ...", flush=True)
        verification = asyncio.run_coroutine_threadsafe(verify(workload), bridge.loop).result(
            timeout=600
        )
        setup = {
            "users": args.users,
            "rate": args.rate,
            "mix": ",".join(f"{k}={v}" for k, v in args.mix.items()),
            "bud_chunks": args.bud_chunks,
            "soak": args.soak,
            "baseline_seconds": args.baseline_seconds,
        }
        built = report.build(
            environment.stats,
            seconds=seconds,
            errors=shared.errors,
            conflicts=shared.conflicts,
            verification=verification,
            setup=setup,
            baselines=baselines,
        )
        if soak is not None:
            built["soak"] = soak.summary()
    finally:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(workload.close(), bridge.loop).result(timeout=30)
        bridge.close()
    text = report.markdown(built)
    if "soak" in built:
        text += soak_markdown(built["soak"])
    print(text, flush=True)
    if args.report_dir is not None:
        args.report_dir.mkdir(parents=True, exist_ok=True)
        (args.report_dir / "load-report.md").write_text(text)
        (args.report_dir / "load-report.json").write_text(json.dumps(built, indent=2) + "\n")
    if not verification.ok:
        print(f"FAILED: {len(verification.lost)} acknowledged writes are lost", file=sys.stderr)
        return 1
    if built["failures"] > args.max_errors:
        print(
            f"FAILED: {built['failures']} errors (beyond the deliberate conflicts) exceed "
            f"--max-errors {args.max_errors}",
            file=sys.stderr,
        )
        return 3
    return 0


def stored_object(workload: Workload) -> ObjectKey:
    """An entity the run recorded, for the point queries; where it recorded none, a key that
    matches nothing, whose lookup still descends the index."""
    reviews = workload.ledger.reviews
    if not reviews:
        return ObjectKey("", "entity", "")
    return ObjectKey(reviews[0].result_id, "entity", reviews[0].entity_id)


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    if args.tree:
        given = Deployment(
            args.tree,
            args.graph,
            args.gateway,
            dict(args.watch),
            dict(args.pg_dsn),
            args.primary_dsn,
            args.replica_dsn,
        )
        return run(args, given)
    with local_stack() as local:
        return run(args, local)
