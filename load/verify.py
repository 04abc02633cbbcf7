"""The end of a run: every acknowledged write and chunk must be readable (zero lost)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial

from devtools.storyfile import latest
from load.targets import CALL_TIMEOUT_S
from load.workload import Workload, error_reason
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2

CONCURRENCY = 8


@dataclass
class Verification:
    checked: dict[str, int] = field(default_factory=dict)  # what -> how many
    lost: list[str] = field(default_factory=list)  # one line per write not found as written

    @property
    def ok(self) -> bool:
        return not self.lost


async def verify(workload: Workload) -> Verification:
    """Read back every tree, node, bud (its acknowledged chunks) and review in the ledger."""
    ledger, tree, graph = workload.ledger, workload.tree, workload.graph
    md, gmd, t = workload.tree_metadata(), workload.graph_metadata(), CALL_TIMEOUT_S
    result = Verification()
    gate = asyncio.Semaphore(CONCURRENCY)
    options = graph_pb2.ReadOptions(
        min_consistency=latest(*(r.consistency for r in ledger.reviews))
    )

    async def check(what: str, ident: str, read: Callable[[], Awaitable[str | None]]) -> None:
        async with gate:
            result.checked[what] = result.checked.get(what, 0) + 1
            try:
                problem = await read()
            except Exception as exc:
                problem = error_reason(exc)
            if problem:
                result.lost.append(f"{what} {ident}: {problem}")

    async def tree_of(tree_id: str) -> str | None:
        await tree.GetTree(tree_pb2.GetTreeRequest(tree_id=tree_id), metadata=md, timeout=t)
        return None

    async def versions(tree_id: str, acked: set[str]) -> str | None:
        listed = await tree.ListMainLineVersions(
            tree_pb2.ListMainLineVersionsRequest(tree_id=tree_id, page_size=100),
            metadata=md,
            timeout=t,
        )
        missing = acked - {v.id for v in listed.versions}
        return f"main-line versions {sorted(missing)} missing" if missing else None

    async def node(node_id: str, text: str) -> str | None:
        got = await tree.GetNode(tree_pb2.GetNodeRequest(node_id=node_id), metadata=md, timeout=t)
        return None if got.node.text == text else "text differs from the acknowledged one"

    async def bud(bud_id: str, acked: str) -> str | None:
        got = await tree.GetNode(tree_pb2.GetNodeRequest(node_id=bud_id), metadata=md, timeout=t)
        if got.node.text.startswith(acked):
            return None
        return f"holds {len(got.node.text)} characters, not the {len(acked)} acknowledged"

    async def entity(entity_id: str) -> str | None:
        ref = common_pb2.ObjectRef(type=common_pb2.ENTITY, id=entity_id)
        await graph.GetContext(
            graph_pb2.GetContextRequest(object_ref=ref, options=options), metadata=gmd, timeout=t
        )
        return None

    async def source(ref_id: str, fragment: str) -> str | None:
        got = await graph.ReadSource(
            graph_pb2.ReadSourceRequest(source_reference_id=ref_id, options=options),
            metadata=gmd,
            timeout=t,
        )
        return None if fragment in got.text else "saved fragment differs"

    jobs = [check("tree", i, partial(tree_of, i)) for i in ledger.trees]
    jobs += [check("node", i, partial(node, i, x)) for i, x in ledger.nodes.items()]
    jobs += [check("bud", i, partial(bud, i, x)) for i, x in ledger.buds.items()]
    jobs += [
        check("main-line version", i, partial(versions, i, x)) for i, x in ledger.versions.items()
    ]
    for r in ledger.reviews:
        jobs.append(check("entity", r.entity_id, partial(entity, r.entity_id)))
        jobs.append(
            check("source reference", r.source_ref_id, partial(source, r.source_ref_id, r.fragment))
        )
    await asyncio.gather(*jobs)
    result.checked["chunk"] = ledger.chunks
    result.checked["main-line version"] = sum(len(v) for v in ledger.versions.values())
    return result
