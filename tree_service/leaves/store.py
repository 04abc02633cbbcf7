"""Shared leaves on the primary: resolving the sources they come from, matching a review's
leaves against stored ones (link, don't store again), recording what was extracted, and the
plan a reviewer asks for before extracting."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg
from asyncpg import Range as PgRange

from mirrortree.scopes import ScopeValue
from mirrortree.violations import FieldViolation
from tree_service.domain import LeafExtraction, LeafKey, ObjectType, Part, ReviewResult
from tree_service.errors import InvalidInput
from tree_service.leaves import queries
from tree_service.leaves.domain import ExtractionPlanRequest
from tree_service.leaves.ranges import Range, difference, intersection, merged

Source = tuple[str, str, str]  # (source type, source id, version) as the request names it


@dataclass(frozen=True)
class ResolvedSource:
    canonical_id: str
    project_id: str | None
    length: int


@dataclass(frozen=True)
class PartPlan:
    part: Part
    canonical_id: str
    source_project: str | None
    requested: Range
    extracted: list[Range]
    missing: list[Range]
    leaf_count: int


@dataclass
class LeafIngestion:
    """What a review's declared extraction writes beside its objects."""

    contract: str
    linked: dict[str, int] = field(default_factory=dict)  # object id → stored leaf
    new: list[tuple[LeafKey, Source, int, str | None]] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # a repeated leaf → its first copy
    extracted: list[tuple[Source, int, Range]] = field(default_factory=list)


async def resolve_sources(
    conn: asyncpg.Connection, scope: ScopeValue, parts: list[tuple[str, Source]]
) -> tuple[dict[Source, ResolvedSource], list[FieldViolation]]:
    """Each named source version as stored (canonical id, real project, length in code
    points); a source that is not there, or that the scope may not read, is a violation of
    every field naming it."""
    unique = list(dict.fromkeys(source for _, source in parts))
    messages = await _message_versions(conn, [s for s in unique if s[0] == "message"])
    outcomes: dict[Source, tuple[ResolvedSource | None, Problem | None]] = {}
    for source in unique:
        outcomes[source] = await _resolve(conn, source, messages)
    found: dict[Source, ResolvedSource] = {}
    refused: list[FieldViolation] = []
    for field_name, source in parts:
        resolved, problem = outcomes[source]
        if problem is not None:
            refused.append(FieldViolation(*problem(field_name)))
            continue
        assert resolved is not None
        if not scope.is_global and resolved.project_id not in scope.projects:
            owner = f"project {resolved.project_id!r}" if resolved.project_id else "no project"
            refused.append(
                FieldViolation(
                    f"{field_name}.source_id",
                    f"belongs to {owner}, outside {scope.describe()}: a scope extracts and "
                    "reuses leaves only of its own projects' sources (Global: of any)",
                )
            )
            continue
        found[source] = resolved
    return found, refused


# A refusal, given the field that named the source.
Problem = Callable[[str], tuple[str, str]]


def _node(source_id: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(source_id)
    except ValueError:
        return None


async def _message_versions(
    conn: asyncpg.Connection, sources: list[Source]
) -> dict[Source, ResolvedSource]:
    """The message versions among `sources` that exist, in one statement."""
    wanted = [s for s in sources if _node(s[1]) is not None and s[2].isdigit()]
    if not wanted:
        return {}
    rows = await conn.fetch(
        queries.MESSAGE_VERSIONS,
        [_node(s[1]) for s in wanted],
        [int(s[2]) for s in wanted],
    )
    return {
        wanted[row["i"] - 1]: ResolvedSource(row["canonical_id"], row["project_id"], row["length"])
        for row in rows
    }


async def _resolve(
    conn: asyncpg.Connection, source: Source, messages: dict[Source, ResolvedSource]
) -> tuple[ResolvedSource | None, Problem | None]:
    source_type, source_id, version = source
    if not version.isdigit():
        return None, lambda f: (f"{f}.source_version", "must be a revision number (1, 2, ...)")
    if source_type == "message":
        if source in messages:
            return messages[source], None
        node = _node(source_id)
        return None, lambda f: (
            f"{f}.source_version" if node else f"{f}.source_id",
            f"no message {source_id!r} with revision {version} (a message is named by a "
            "node id of its lineage)",
        )
    row = await conn.fetchrow(queries.RECORDED_SOURCE, source_id, source_type)
    if row is None:
        return None, lambda f: (f"{f}.source_id", f"no recorded {source_type} {source_id!r}")
    if row["deleted"]:
        return None, lambda f: (f"{f}.source_id", f"{source_type} {source_id!r} is deleted")
    if str(row["revision"]) != version:
        current = row["revision"]
        return None, lambda f: (
            f"{f}.source_version",
            f"a recorded source keeps only its current revision ({current}), so only that "
            "one can be extracted and checked",
        )
    return ResolvedSource(source_id, row["project_id"], row["length"]), None


def _bounds(
    part: Part, resolved: ResolvedSource, refused: list[FieldViolation], what: str = "range"
) -> Range:
    end = resolved.length if part.end is None else part.end
    if end > resolved.length:
        refused.append(
            FieldViolation(
                f"{part.field}.{what}",
                f"[{part.start}, {end}) passes the end of {part.source_type} "
                f"{part.source_id} version {part.source_version} ({resolved.length} code "
                "points)",
            )
        )
    return (part.start, end)


def _keys(sources: list[Source]) -> tuple[list[str], list[str], list[str]]:
    return [s[0] for s in sources], [s[1] for s in sources], [s[2] for s in sources]


async def prepare(
    conn: asyncpg.Connection, review: ReviewResult, extraction: LeafExtraction
) -> LeafIngestion:
    """Resolve, lock and match a review's keyed leaves; refuses the review (InvalidInput) when
    a part or a leaf names a source it cannot key or may not read."""
    named = [(p.field, p.source) for p in extraction.parts]
    named += [(f"{leaf.field}.source_reference_ids", leaf.source) for leaf in extraction.leaves]
    resolved, refused = await resolve_sources(conn, review.scope, named)
    parts = [
        (p, _bounds(p, resolved[p.source], refused))
        for p in extraction.parts
        if p.source in resolved
    ]
    for leaf in extraction.leaves:
        if leaf.source in resolved and leaf.end > resolved[leaf.source].length:
            refused.append(
                FieldViolation(
                    f"{leaf.field}.source_reference_ids",
                    f"cites [{leaf.start}, {leaf.end}), past the end of the source version "
                    f"({resolved[leaf.source].length} code points)",
                )
            )
    if refused:
        raise InvalidInput(refused)

    def canonical(source: Source) -> Source:
        return (source[0], resolved[source].canonical_id, source[2])

    keys = sorted(
        {canonical(p.source) for p, _ in parts}
        | {canonical(leaf.source) for leaf in extraction.leaves}
    )
    await conn.execute(
        queries.LOCK_SOURCE_VERSIONS,
        ["\x1f".join((*key, extraction.contract_version)) for key in keys],
    )
    newest = {
        keys[row["i"] - 1]: row["analysis"]
        for row in await conn.fetch(
            queries.NEWEST_ANALYSES, *_keys(keys), extraction.contract_version
        )
    }
    analysis = {k: newest[k] + 1 if extraction.reanalysis else max(newest[k], 1) for k in keys}
    out = LeafIngestion(extraction.contract_version)
    covered: dict[Source, list[Range]] = {k: [] for k in keys}
    if not extraction.reanalysis:
        for row in await conn.fetch(
            queries.EXTRACTED_RANGES,
            *_keys(keys),
            extraction.contract_version,
            [analysis[k] for k in keys],
        ):
            covered[keys[row["i"] - 1]].append((row["start"], row["end"]))
    for part, bounds in parts:
        k = canonical(part.source)
        # Only the parts not extracted yet are recorded: a partial overlap adds the rest.
        for gap in difference(bounds, covered[k]):
            out.extracted.append((k, analysis[k], gap))
        covered[k] = merged([*covered[k], bounds])

    first: dict[tuple[Source, int, int, bytes], str] = {}
    unique: list[LeafKey] = []
    for leaf in extraction.leaves:
        identity = (canonical(leaf.source), leaf.start, leaf.end, leaf.text_hash)
        if identity in first:
            out.aliases[leaf.object_id] = first[identity]
        else:
            first[identity] = leaf.object_id
            unique.append(leaf)
    sources = [canonical(leaf.source) for leaf in unique]
    rows = await conn.fetch(
        queries.MATCHING_LEAVES,
        extraction.contract_version,
        *_keys(sources),
        [analysis[s] for s in sources],
        [leaf.start for leaf in unique],
        [leaf.end for leaf in unique],
        [leaf.text_hash for leaf in unique],
    )
    matched = {row["i"] - 1: row["leaf_id"] for row in rows}
    for i, leaf in enumerate(unique):
        if i in matched:
            out.linked[leaf.object_id] = matched[i]
        else:
            out.new.append(
                (leaf, sources[i], analysis[sources[i]], resolved[leaf.source].project_id)
            )
    return out


def linked_objects(review: ReviewResult, ingestion: LeafIngestion) -> set[tuple[str, str]]:
    """The objects of the review not stored again: its leaf facts linked to stored leaves,
    and the source references only those cite (the stored leaf keeps source and range)."""
    leaf = ObjectType.LEAF_FACT.value
    linked = set(ingestion.linked) | {
        alias for alias, first in ingestion.aliases.items() if first in ingestion.linked
    }
    skipped = {(leaf, object_id) for object_id in linked}
    cited_by_linked: set[str] = set()
    cited_by_kept: set[str] = set()
    for obj in review.objects:
        cites = {to_id for link, _, to_id in obj.links if link == "cites"}
        if (obj.object_type.value, obj.object_id) in skipped:
            cited_by_linked |= cites
        else:
            cited_by_kept |= cites
    reference = ObjectType.SOURCE_REFERENCE.value
    return skipped | {(reference, ref) for ref in cited_by_linked - cited_by_kept}


async def finish(
    conn: asyncpg.Connection, review: ReviewResult, ingestion: LeafIngestion, recorded_at: datetime
) -> None:
    """Store the new leaves, the result's uses of stored leaves (a new leaf's first use is
    the leaf itself) and the extracted parts."""
    objects = {o.object_id: o for o in review.objects if o.object_type is ObjectType.LEAF_FACT}
    leaf_ids = dict(ingestion.linked)
    if ingestion.new:
        news = ingestion.new
        rows = await conn.fetch(
            queries.INSERT_LEAVES,
            ingestion.contract,
            review.scope.key,
            review.result_id,
            recorded_at,
            *_keys([s for _, s, _, _ in news]),
            [a for _, _, a, _ in news],
            [leaf.start for leaf, _, _, _ in news],
            [leaf.end for leaf, _, _, _ in news],
            [leaf.text for leaf, _, _, _ in news],
            [leaf.text_hash for leaf, _, _, _ in news],
            [p for _, _, _, p in news],
            [objects[leaf.object_id].confirmation_state for leaf, _, _, _ in news],
            [objects[leaf.object_id].event_time.start for leaf, _, _, _ in news],
            [objects[leaf.object_id].event_time.end for leaf, _, _, _ in news],
            [objects[leaf.object_id].event_time.precision or None for leaf, _, _, _ in news],
            [objects[leaf.object_id].event_time.basis or None for leaf, _, _, _ in news],
            [leaf.object_id for leaf, _, _, _ in news],
        )
        leaf_ids.update({row["object_id"]: row["leaf_id"] for row in rows})
    uses = dict(ingestion.linked)
    for alias, first_id in ingestion.aliases.items():
        uses[alias] = leaf_ids[first_id]
    if uses:
        await conn.copy_records_to_table(
            "leaf_uses",
            records=[
                (
                    review.scope.key,
                    object_id,
                    review.result_id,
                    leaf_id,
                    object_id in ingestion.linked
                    or ingestion.aliases.get(object_id) in ingestion.linked,
                    json.dumps(objects[object_id].details.get("about", [])),
                )
                for object_id, leaf_id in sorted(uses.items())
            ],
            columns=queries.LEAF_USE_COLUMNS,
        )
    if ingestion.extracted:
        await conn.copy_records_to_table(
            "leaf_extractions",
            records=[
                (
                    *key,
                    ingestion.contract,
                    analysis,
                    PgRange(lo, hi),
                    review.scope.key,
                    review.result_id,
                    recorded_at,
                )
                for key, analysis, (lo, hi) in ingestion.extracted
            ],
            columns=queries.EXTRACTION_COLUMNS,
        )


async def linked_in_scope(
    conn: asyncpg.Connection, scope_key: str, object_ids: list[str]
) -> dict[str, str]:
    """Leaf fact ids the scope linked (not stored), with the newest result linking each."""
    if not object_ids:
        return {}
    rows = await conn.fetch(queries.LINKED_LEAVES_IN_SCOPE, scope_key, object_ids)
    return {row["object_id"]: row["result_id"] for row in rows}


async def plan(conn: asyncpg.Connection, request: ExtractionPlanRequest) -> list[PartPlan]:
    """For each part: what is already extracted under the contract (any analysis) and what is
    still missing, as exact merged ranges, with the leaves stored there."""
    resolved, refused = await resolve_sources(
        conn, request.scope, [(p.field, p.source) for p in request.parts]
    )
    bounds = {
        p.field: _bounds(p, resolved[p.source], refused)
        for p in request.parts
        if p.source in resolved
    }
    if refused:
        raise InvalidInput(refused)
    keys = sorted(
        {(p.source_type, resolved[p.source].canonical_id, p.source_version) for p in request.parts}
    )
    have: dict[Source, list[Range]] = {k: [] for k in keys}
    for row in await conn.fetch(
        queries.EXTRACTED_RANGES, *_keys(keys), request.contract_version, [None] * len(keys)
    ):
        have[keys[row["i"] - 1]].append((row["start"], row["end"]))
    plans = []
    for p in request.parts:
        k = (p.source_type, resolved[p.source].canonical_id, p.source_version)
        want = bounds[p.field]
        plans.append(
            PartPlan(
                p,
                k[1],
                resolved[p.source].project_id,
                want,
                intersection(want, have[k]),
                difference(want, have[k]),
                0,
            )
        )
    flat = [(pl, r) for pl in plans for r in pl.extracted]
    if flat:
        sources = [(pl.part.source_type, pl.canonical_id, pl.part.source_version) for pl, _ in flat]
        counts = await conn.fetch(
            queries.LEAVES_IN_RANGE,
            *_keys(sources),
            request.contract_version,
            [r[0] for _, r in flat],
            [r[1] for _, r in flat],
        )
        per_row = {row["i"] - 1: row["leaves"] for row in counts}
        totals: dict[int, int] = {}
        for i, (pl, _) in enumerate(flat):
            totals[id(pl)] = totals.get(id(pl), 0) + per_row.get(i, 0)
        plans = [
            PartPlan(
                pl.part,
                pl.canonical_id,
                pl.source_project,
                pl.requested,
                pl.extracted,
                pl.missing,
                totals.get(id(pl), 0),
            )
            for pl in plans
        ]
    return plans
