"""Story-graph reads while an ingestion stream runs (bench.run --ingest-rate R).

The stream records review results shaped like bench.story's through RecordReview into a scope
of its own (a new project each run), paced to R objects/s, while the read cases run on the
replica as before. Each case is measured sequentially twice in turn, once with the stream
paused and once with it running, so the ratio of the two p99s is taken in the same minute of
the same run.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from bench.cpus import CpuUse, Groups
from bench.measure import TARGET_P99_MS, Call, Case, pct, sequential, warm_up
from bench.story import StoryPlan
from mirrortree.protoscope import project_scope
from mirrortree.v1 import tree_pb2, tree_pb2_grpc

SETTLE_S = 0.5  # after the stream resumes, before a case is measured under it
# The stream's texts with every Latin letter written as a Cyrillic one ("foreign" texts): they
# share no trigram with the searches, so the trigram indexes give the reads none of the
# stream's rows to read and drop, and what the stream still costs the reads is its work.
FOREIGN_LETTERS = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИЙКЛМНОПРСТУ",
)


def in_foreign_letters(request: tree_pb2.RecordReviewRequest) -> None:
    """Rewrite the request's searchable texts in FOREIGN_LETTERS, in place (ids are kept)."""
    for event in request.events:
        event.title = event.title.translate(FOREIGN_LETTERS)
        event.description = event.description.translate(FOREIGN_LETTERS)
    for reference in request.source_references:
        reference.fragment = reference.fragment.translate(FOREIGN_LETTERS)
    for relation in request.relations:
        relation.reason = relation.reason.translate(FOREIGN_LETTERS)
    for change in request.entity_changes:
        change.description = change.description.translate(FOREIGN_LETTERS)
    for fact in request.leaf_facts:
        fact.text = fact.text.translate(FOREIGN_LETTERS)


class IngestionStream:
    """RecordReview calls in the background at `rate` objects/s while resumed; with
    `foreign_texts`, texts that share no trigram with the searches (FOREIGN_LETTERS)."""

    def __init__(
        self,
        stub: tree_pb2_grpc.TreeServiceStub,
        rate: float,
        objects: int,
        per_result: int,
        *,
        foreign_texts: bool = False,
    ) -> None:
        self._stub = stub
        self._rate = rate
        self._run = uuid.uuid4().hex[:8]
        # Built before measuring: building one result takes milliseconds of this process's
        # event loop, which the reads measured share; a client elsewhere would not stall them.
        self._requests = [
            (count, self._own(request))
            for count, request in StoryPlan(objects, per_result).requests()
        ]
        self.foreign_texts = foreign_texts
        if foreign_texts:
            for _, request in self._requests:
                in_foreign_letters(request)
        self._running = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self.objects = 0
        self.seconds = 0.0  # while resumed
        self.calls: list[float] = []

    def _own(self, request: tree_pb2.RecordReviewRequest) -> tree_pb2.RecordReviewRequest:
        """The request in this run's own scope, under ids no other run uses."""
        request.scope.CopyFrom(project_scope([f"bench-live-{self._run}"]))
        request.result_id = f"live-{self._run}-{request.result_id}"
        request.idempotency_key = f"live-{self._run}-{request.idempotency_key}"
        return request

    def resume(self) -> None:
        self._running.set()

    async def pause(self) -> None:
        """Stop sending, and wait for the call in flight: the next quiet phase is quiet."""
        self._running.clear()
        await self._idle.wait()

    async def run(self) -> None:
        """Until its results run out (or it is cancelled); each result is due when the objects
        before it, at the rate, have had their time."""
        due = time.perf_counter()
        for count, request in self._requests:
            if not self._running.is_set():
                await self._running.wait()
                due = time.perf_counter()  # a pause is not a backlog
            if (wait := due - time.perf_counter()) > 0:
                await asyncio.sleep(wait)
            started = time.perf_counter()
            self._idle.clear()
            try:
                await self._stub.RecordReview(request, timeout=600)
            finally:
                self._idle.set()
            spent = time.perf_counter() - started
            self.calls.append(spent)
            self.objects += count
            due += count / self._rate


@dataclass(frozen=True)
class Pair:
    case: Case
    quiet: list[float]
    ingesting: list[float]


@contextlib.asynccontextmanager
async def streaming(stream: IngestionStream) -> AsyncIterator[None]:
    task = asyncio.create_task(stream.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@dataclass
class MixedRun:
    pairs: list[Pair]
    # Where the CPU went while the cases were measured, quiet and while ingesting.
    quiet_cpu: CpuUse
    ingesting_cpu: CpuUse


async def measure_pairs(
    stream: IngestionStream, cases: list[Case], seconds: float, groups: Groups
) -> MixedRun:
    """Each case's sequential latency with the stream paused, then running; and the CPU time
    of each group of processes meanwhile."""
    pairs = []
    quiet_cpu, ingesting_cpu = CpuUse(groups), CpuUse(groups)

    async def measured(call: Call, cpu: CpuUse) -> list[float]:
        cpu.start(time.perf_counter())
        samples = await sequential(call, seconds)
        cpu.stop(time.perf_counter())
        return samples

    async with streaming(stream):
        for case in cases:
            await warm_up(case.call)
            quiet = await measured(case.call, quiet_cpu)
            stream.resume()
            resumed = time.perf_counter()
            await asyncio.sleep(SETTLE_S)
            ingesting = await measured(case.call, ingesting_cpu)
            await stream.pause()
            stream.seconds += time.perf_counter() - resumed
            pairs.append(Pair(case, quiet, ingesting))
            print(
                f"  {case.name}: p99 {pct(quiet, 0.99):.2f} ms quiet, "
                f"{pct(ingesting, 0.99):.2f} ms while ingesting",
                flush=True,
            )
    return MixedRun(pairs, quiet_cpu, ingesting_cpu)


def report(run: MixedRun, stream: IngestionStream, rate: float) -> None:
    """The table: p50/p99 of each case quiet and while ingesting, their ratio, and the p99
    while ingesting over the baseline (the first two cases: empty call + point query); then
    the CPUs each group of processes kept busy."""
    pairs = run.pairs
    base = pct(pairs[0].ingesting, 0.99) + pct(pairs[1].ingesting, 0.99)
    achieved = stream.objects / stream.seconds if stream.seconds else 0.0
    calls = sorted(stream.calls)
    print()
    print(
        f"ingestion stream{' (foreign texts)' if stream.foreign_texts else ''}: "
        f"{stream.objects:,} objects in {len(calls)} RecordReview calls "
        f"while measuring, {achieved:,.0f} objects/s of the {rate:,.0f} asked "
        f"(p50 {pct(calls, 0.5):,.0f} ms, p99 {pct(calls, 0.99):,.0f} ms per call)"
        if calls
        else "ingestion stream: no call completed"
    )
    print(f"baseline p99 while ingesting = empty gRPC call + raw point query: {base:.2f} ms")
    print()
    print(
        "| case | p50 quiet | p99 quiet | p50 ingesting | p99 ingesting | "
        f"p99 ingesting ÷ quiet | p99 ingesting ÷ baseline | p99 ≤ {TARGET_P99_MS:g} ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |")
    for pair in pairs:
        q99, i99 = pct(pair.quiet, 0.99), pct(pair.ingesting, 0.99)
        verdict = ("yes" if i99 <= TARGET_P99_MS else "no") if pair.case.graph_read else ""
        print(
            f"| {pair.case.name} | {pct(pair.quiet, 0.5):.2f} | {q99:.2f} | "
            f"{pct(pair.ingesting, 0.5):.2f} | {i99:.2f} | {i99 / q99:.2f} | "
            f"{i99 / base:.2f} | {verdict} |"
        )
    quiet, ingesting = run.quiet_cpu.cores(), run.ingesting_cpu.cores()
    print()
    print("CPUs kept busy while the cases were measured (CPU seconds per second):")
    print()
    print("| processes | quiet | while ingesting |")
    print("| --- | ---: | ---: |")
    for name in ingesting:
        print(f"| {name} | {quiet.get(name, 0.0):.2f} | {ingesting[name]:.2f} |")
