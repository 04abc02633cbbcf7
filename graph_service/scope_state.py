"""A scope's state as one read sees it: its read revision, its coverage, the time of the read
and its size, from the scope-state row (or an opening statement that extends it)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import NamedTuple

import asyncpg

from graph_service.queries.scope_state import SCOPE_STATE
from graph_service.views import CoverageView, CoveredResult

# The newest results whose coverage a read lists, at most.
COVERAGE_LIMIT = 20


class ScopeState(NamedTuple):
    revision: int  # the read revision
    coverage: CoverageView
    read_at: datetime | None  # the last commit the replica replayed (None: none yet)
    copies: int  # object copies stored in the scope


async def read_scope_state(conn: asyncpg.Connection, scope_key: str) -> ScopeState:
    return scope_state(await conn.fetchrow(SCOPE_STATE, scope_key, COVERAGE_LIMIT))


def scope_state(row: asyncpg.Record) -> ScopeState:
    """The scope's read revision, its coverage, the time of the read and its size, from the
    row of SCOPE_STATE (or of an opening that extends it: the search's, the context read's)."""
    covered = zip(
        *(
            row[f"covered_{name}"] or ()
            for name in (
                "result_id",
                "phase",
                "covered_from",
                "covered_to",
                "review_generated_at",
                "basis",
                "counts",
            )
        ),
        strict=True,
    )
    coverage = CoverageView(
        results_in_scope=row["results"],
        processed=tuple(
            CoveredResult(
                result_id,
                phase,
                covered_from,
                covered_to,
                generated,
                basis,
                tuple((c["what"], c["count"]) for c in json.loads(counts)),
            )
            for result_id, phase, covered_from, covered_to, generated, basis, counts in covered
        ),
        gaps=tuple(row["scope_gaps"]),
        excluded_source_types=tuple(row["scope_excluded_source_types"]),
    )
    return ScopeState(row["revision"], coverage, row["read_at"], row["copies"])
