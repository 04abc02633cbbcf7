"""The answer "what still needs extraction" is exact for partial ranges: the range arithmetic
against a model of code-point sets, and PlanExtraction against the parts reviews recorded."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.leaves import leaf_review, message, part, plan_request, ranges
from tree_service.leaves.ranges import covers, difference, intersection, merged

LENGTH = 40
TEXT = "".join(chr(ord("a") + i % 26) for i in range(LENGTH))


def points(rs: list[tuple[int, int]]) -> set[int]:
    return {p for s, e in rs for p in range(s, e)}


def is_normal(rs: list[tuple[int, int]]) -> bool:
    """Sorted, non-empty, neither overlapping nor touching."""
    return all(s < e for s, e in rs) and all(a[1] < b[0] for a, b in itertools.pairwise(rs))


spans = st.tuples(st.integers(0, LENGTH), st.integers(0, LENGTH)).map(lambda t: (min(t), max(t)))


@given(have=st.lists(spans, max_size=8), want=spans)
def test_the_range_arithmetic_matches_sets_of_code_points(have, want):
    wanted = points([want])
    done, missing = intersection(want, have), difference(want, have)
    assert points(done) == wanted & points(have)
    assert points(missing) == wanted - points(have)
    assert is_normal(done) and is_normal(missing) and is_normal(merged(have))
    assert covers(have, want) == (not missing)


PLAN = settings(
    max_examples=15,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
nonempty = spans.filter(lambda s: s[0] < s[1])
# [0, 0) asks for the whole version; any other empty range is refused.
askable = spans.filter(lambda s: s[0] < s[1] or s == (0, 0))


@pytest.mark.parametrize("scope_of_extraction", ["global", "project"])
@PLAN
@given(
    extracted=st.lists(nonempty, min_size=1, max_size=4),
    asked=st.lists(askable, min_size=1, max_size=3),
)
async def test_the_plan_is_exact_for_partial_ranges(
    tree_stub, scope_of_extraction, extracted, asked
):
    msg = await message(tree_stub, TEXT)
    project = None if scope_of_extraction == "global" else msg.project
    for start, end in extracted:
        # A review per part, each extracting one leaf at the part's start.
        await tree_stub.RecordReview(
            leaf_review(
                project, msg, [(start, end, f"fact {start}-{end}")], parts=[part(msg, start, end)]
            )
        )
    answer = await tree_stub.PlanExtraction(
        plan_request(msg.project, [part(msg, s, e) for s, e in asked])
    )
    have = points(extracted)
    for (start, end), plan in zip(asked, answer.parts, strict=True):
        wanted = points([(0, LENGTH) if start == end == 0 else (start, end)])
        assert points(ranges(plan.extracted)) == wanted & have
        assert points(ranges(plan.missing)) == wanted - have
        assert is_normal(ranges(plan.extracted)) and is_normal(ranges(plan.missing))
