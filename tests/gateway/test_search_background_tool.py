"""story_graph_search shows the confirmed long-term preferences (memory) that apply and match as
labelled background, beside the hits and never among them, with their real update time and
revision — and story_graph_get_context reads one by its ref."""

from __future__ import annotations

import pytest

from gateway import tools
from graph_service import views
from mirrortree.protoscope import global_scope
from tests.conftest import unique
from tests.gateway.harness import in_memory
from tests.gateway.test_linked_leaf_tools import binding_in
from tests.gateway.test_result_contract import violations
from tests.gateway.test_story_tools import call
from tests.graph_service.story import project_scope
from tests.graph_service.test_search_background import LABEL, prefer

pytestmark = pytest.mark.usefixtures("global_preferences_taken_back")


def test_the_search_tool_says_what_background_holds() -> None:
    assert tools.PREFERENCE_LABEL == views.PREFERENCE_LABEL == LABEL
    schema = tools.TOOLS_BY_NAME[tools.SEARCH].output_schema
    assert schema is not None
    background = schema["properties"]["background"]
    assert LABEL in background["description"]
    hit = background["items"]["properties"]
    assert {"ref", "scope", "subject", "excerpt", "label", "revision", "updated_at"} <= set(hit)
    assert "background" in (tools.TOOLS_BY_NAME[tools.SEARCH].description or "")


async def test_the_search_tool_shows_matching_preferences_as_labelled_background(
    tree_stub, graph_service
):
    project, other = unique("proj"), unique("proj")
    word = unique("Quietude")
    own, general, foreign = (unique(f"pref-{n}") for n in ("own", "gl", "fo"))
    mine = await prefer(tree_stub, own, project_scope(project), "travel", f"Quiet {word} cars")
    await prefer(tree_stub, general, global_scope(), f"{word} hours", "no calls before nine")
    await prefer(tree_stub, foreign, project_scope(other), "travel", f"{word} above all")
    token, consistency = await binding_in(tree_stub, project)
    options = {"min_consistency": {"lsn": consistency.lsn}}

    async with in_memory(graph_service.port, token) as client:
        found = await call(client, "story_graph_search", {"query": word, "options": options})
        assert violations(found) == []
        assert found["hits"] == []
        refs = [b["ref"] for b in found["background"]]
        assert refs == [{"type": "preference", "id": i} for i in (general, own)]  # newest first
        global_one, shown = found["background"]
        assert shown == {
            "ref": {"type": "preference", "id": own},
            "scope": {"projects": [project]},
            "subject": "travel",
            "excerpt": {
                "text": f"Quiet {word} cars",
                "field": "text",
                "start": "0",
                "end": str(len(f"Quiet {word} cars")),
                "field_length": str(len(f"Quiet {word} cars")),
                "is_excerpt": True,
            },
            "label": LABEL,
            "revision": "1",
            "updated_at": mine.preference.updated_at,
            "confirmed_by": "user-1",
        }
        assert (global_one["label"], global_one["scope"]) == (LABEL, {"global": True})
        assert global_one["excerpt"]["field"] == "subject"

        context = await call(
            client, "story_graph_get_context", {"object_ref": shown["ref"], "options": options}
        )
        assert context["object_ref"] == shown["ref"]

        events_only = await call(
            client,
            "story_graph_search",
            {"query": word, "options": options, "object_types": ["event"]},
        )
        assert [b["ref"]["id"] for b in events_only["background"]] == [general, own]
