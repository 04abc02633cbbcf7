"""Whatever arguments an MCP client sends to the three tools, through the real SDK client, it
gets a result or a tool error (isError) whose text names the problem and says what to do next
— never a protocol error or an exception out of the session, which stays usable.

Arguments are generated around each tool's schema: wrong JSON types, missing required and extra
arguments, nulls, huge and odd strings, objects where strings are expected, and values that are
well-formed but wrong for the story (unknown ids, scopes not granted, another tool's cursor).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gateway import tools
from tests.gateway.harness import in_memory
from tests.graph_service.test_bad_input_fuzz import Story, record_story

FUZZ = settings(
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ODD_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "\u200b",
        "\U0001f600",
        "\u202e",
        "e\u0301",
        "\ud800",  # a lone surrogate: not Unicode text
        "2026-10-01T00:00:00",
        "y" * 100_000,
    ]
) | st.text(max_size=20)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ODD_TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
BIG_NUMBERS = st.sampled_from([0, -1, 1.5, 5.0, 2**31, 2**63, 2**64, 1e300, float("inf")])


def good_values(story: Story) -> dict[str, st.SearchStrategy[Any]]:
    """Values that suit each argument (by name), so calls also get past the schema."""
    scope = st.sampled_from(
        [
            {"projects": [story.project]},
            {"projects": [story.granted]},
            {"projects": ["other-project"]},
            {"global": True},
        ]
    )
    time = st.sampled_from(["2026-10-01T00:00:00Z", "2026-10-01T08:00:00+08:00"])
    return {
        "query": st.sampled_from(["Step", "hub", "é"]),
        "scope": scope,
        "object_types": st.lists(st.sampled_from(tools.OBJECT_TYPE_NAMES), max_size=2),
        "time_range": st.fixed_dictionaries({}, optional={"from": time, "to": time}),
        "time_basis": st.sampled_from(["event_time", "review_generated_at", "recorded_at"]),
        "page_size": st.integers(1, 50),
        "cursor": st.sampled_from(sorted(story.cursors.values())),
        "object_ref": st.fixed_dictionaries(
            {
                "type": st.sampled_from(tools.CONTEXT_OBJECT_TYPE_NAMES),
                "id": st.sampled_from(["hub", "ev-0", story.document_reference_id]),
            }
        ),
        "mode": st.sampled_from(["current", "timeline"]),
        "content_page_size": st.integers(1, 8000),
        "result_id": st.just(story.result_id),
        "source_reference_id": st.sampled_from(
            [story.source_reference_id, story.document_reference_id]
        ),
        "read_kind": st.sampled_from(["snapshot", "version", "current"]),
        "source_version": st.sampled_from(["1", "2"]),
        "offset": st.integers(0, 500),
    }


def arguments(story: Story, tool: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = tools.TOOLS_BY_NAME[tool].input_schema
    good = good_values(story)
    names = [*schema["properties"], "as_of", "x", "arguments"]

    def value(name: str) -> st.SearchStrategy[Any]:
        bad = JSON | BIG_NUMBERS | st.dictionaries(st.sampled_from(names), JSON, max_size=2)
        usual = good.get(name, bad)
        return st.sampled_from([True] * 4 + [False]).flatmap(lambda ok: usual if ok else bad)

    others = st.lists(st.sampled_from([n for n in names if n != "as_of"]), unique=True, max_size=4)
    chosen = st.sampled_from([True] * 9 + [False]).flatmap(
        lambda usual: others if usual else others.map(lambda keys: [*keys, "as_of"])
    )
    required = st.fixed_dictionaries({n: value(n) for n in schema["required"]})
    # Usually the required arguments, sometimes none; then any others, well-formed or not.
    return st.builds(
        lambda base, extra: {**extra, **base},
        st.sampled_from([True] * 9 + [False]).flatmap(lambda r: required if r else st.just({})),
        chosen.flatmap(lambda keys: st.fixed_dictionaries({k: value(k) for k in keys})),
    )


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def story(tree_stub, graph_stub) -> Story:
    return await record_story(tree_stub, graph_stub)


def check_result(result: Any, tool: str, arguments: dict[str, Any]) -> None:
    if not result.is_error:
        event("result")
        assert isinstance(result.structured_content, dict), result
        return
    error = json.loads(result.content[0].text)["error"]
    event(f"tool error {error['code']}")
    assert error["code"] != "internal", error
    assert error["message"].strip(), error
    assert error.get("next_step", "").strip(), error
    if error["code"] == "invalid_argument":
        named = {f["field"].split(".")[0].split("[")[0] for f in error.get("fields", [])}
        # An argument sent, one the tool takes (a missing one), or the arguments as a whole.
        known = {*arguments, *tools.TOOLS_BY_NAME[tool].input_schema["properties"]}
        assert named <= {*known, "arguments", "request"}, (error, sorted(arguments))


@pytest.mark.parametrize("tool", [tool.name for tool in tools.TOOLS])
@FUZZ
@given(data=st.data())
async def test_any_tool_arguments_get_a_result_or_a_tool_error_naming_the_problem(
    graph_service, story, tool, data
):
    args = data.draw(arguments(story, tool), label="arguments")
    async with in_memory(graph_service.port, story.token) as client:
        result = await client.call_tool(tool, args)
        check_result(result, tool, args)
        # The session goes on: the next well-formed call is answered.
        after = await client.call_tool(
            tools.SEARCH, {"query": "Step", "scope": {"projects": [story.project]}}
        )
        assert not after.is_error, after.content
