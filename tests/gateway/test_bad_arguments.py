"""Whatever arguments a model sends, the gateway answers with a result or a tool error that
names the problem — never a protocol error, never a crash."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.gateway.harness import in_memory

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    ["query", "scope", "object_types", "time_range", "time_basis", "page_size", "cursor", "x"]
)
ARGUMENTS = st.dictionaries(FIELDS, JSON, max_size=5)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(arguments=ARGUMENTS)
async def test_arbitrary_search_arguments_get_a_result_or_a_named_tool_error(
    graph_service, arguments
):
    async with in_memory(graph_service.port, "mtb_not_a_binding") as client:
        result = await client.call_tool("story_graph_search", arguments)
    if result.is_error:
        error = json.loads(result.content[0].text)["error"]  # type: ignore[union-attr]
        assert error["code"] and error["message"]
        assert error["code"] != "internal"
    else:  # a valid call; with this unknown binding it can only be refused, not answered
        raise AssertionError(f"unexpected success for {arguments!r}")
