"""Locust users: each task runs one step of the mix on the loop and reports its samples."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from locust import User, constant_throughput, task

from load.bridge import Bridge
from load.workload import Conversation, McpReader, Sample, Workload


@dataclass
class Shared:
    """What every user of a run shares; set before the users start."""

    bridge: Bridge
    workload: Workload
    bud_chunks: int = 5
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)  # (op, reason) -> count
    conflicts: Counter[str] = field(default_factory=Counter)


class MixUser(User):
    abstract = True
    shared: ClassVar[Shared]

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
        shared = self.shared
        self.report(shared.bridge.run(shared.workload.tree_step(self.talk, shared.bud_chunks)))


class Ingester(MixUser):
    @task
    def step(self) -> None:
        self.report(self.shared.bridge.run(self.shared.workload.ingest_step()))


class GrpcReader(MixUser):
    @task
    def step(self) -> None:
        self.report(self.shared.bridge.run(self.shared.workload.grpc_read_step()))


class McpUser(MixUser):
    def on_start(self) -> None:
        workload = self.shared.workload
        self.reader = McpReader(workload.targets.gateway, workload.binding_token)
        self.shared.bridge.run(self.reader.open())

    def on_stop(self) -> None:
        self.shared.bridge.run(self.reader.close())

    @task
    def step(self) -> None:
        self.report(self.shared.bridge.run(self.reader.step(self.shared.workload)))


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
