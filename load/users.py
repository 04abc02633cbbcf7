"""Locust users: each task runs one step of the mix on the loop and reports its samples."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, ClassVar

from locust import User, constant_throughput, task
from locust.exception import StopUser

from load.bridge import Bridge
from load.mcpreader import McpReader
from load.workload import Conversation, Sample, Workload, error_reason


@dataclass
class Shared:
    """What every user of a run shares; set before the users start."""

    bridge: Bridge
    workload: Workload
    bud_chunks: int = 5
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)  # (op, reason) -> count
    conflicts: Counter[str] = field(default_factory=Counter)
    stopping: bool = False  # set when the time is up: no new step starts
    in_flight: int = 0  # steps running on the loop now


class MixUser(User):
    abstract = True
    shared: ClassVar[Shared]

    def step_on_loop(self, step: Coroutine[Any, Any, list[Sample]]) -> None:
        """Run one step and report it; none starts once the time is up, and the run waits
        for the ones under way, so every write in the ledger is in the statistics too."""
        shared = self.shared
        if shared.stopping:
            step.close()
            raise StopUser()
        shared.in_flight += 1
        try:
            samples = shared.bridge.run(step)
        finally:
            shared.in_flight -= 1
        self.report(samples)

    def report(self, samples: list[Sample]) -> None:
        for s in samples:
            if s.conflict:
                self.shared.conflicts[s.name] += 1
            elif s.reason is not None:
                self.shared.errors[(s.name, s.reason)] += 1
            self.environment.events.request.fire(
                request_type="conflict" if s.conflict else "call",
                name=s.name,
                response_time=s.ms,
                response_length=0,
                exception=RuntimeError(s.reason) if s.reason is not None else None,
                context={},
            )


class TreeWriter(MixUser):
    def on_start(self) -> None:
        self.talk = Conversation()

    @task
    def step(self) -> None:
        self.step_on_loop(self.shared.workload.tree_step(self.talk, self.shared.bud_chunks))


class Ingester(MixUser):
    @task
    def step(self) -> None:
        self.step_on_loop(self.shared.workload.ingest_step())


class GrpcReader(MixUser):
    @task
    def step(self) -> None:
        self.step_on_loop(self.shared.workload.grpc_read_step())


class McpUser(MixUser):
    def on_start(self) -> None:
        workload = self.shared.workload
        self.reader = McpReader(workload.targets.gateway, workload.binding_token)
        started = time.perf_counter()
        try:
            self.shared.bridge.run(self.reader.open())
        except Exception as exc:
            # Counted like any failed call, so a gateway that refuses clients fails the run.
            ms = (time.perf_counter() - started) * 1000
            self.report([Sample("mcp connect", ms, error_reason(exc))])
            raise StopUser() from exc

    def on_stop(self) -> None:
        self.shared.bridge.run(self.reader.close())

    @task
    def step(self) -> None:
        self.step_on_loop(self.reader.step(self.shared.workload))


KINDS: dict[str, type[MixUser]] = {
    "tree": TreeWriter,
    "ingest": Ingester,
    "grpc_read": GrpcReader,
    "mcp_read": McpUser,
}


def configure(shared: Shared, mix: dict[str, int], rate_per_user: float) -> list[type[User]]:
    """The user classes of the mix, each weighted and paced at rate_per_user steps/s."""
    MixUser.shared = shared
    classes: list[type[User]] = []
    for kind, weight in mix.items():
        if weight <= 0:
            continue
        cls = KINDS[kind]
        cls.weight = weight
        cls.wait_time = constant_throughput(rate_per_user)
        classes.append(cls)
    return classes
