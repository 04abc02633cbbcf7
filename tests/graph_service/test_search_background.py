"""Search finds confirmed long-term preferences (memory, DESIGN W5) as labelled background: on
its first page, the ones that apply in the scope (Global everywhere, a project's where the
scope includes it) whose subject or text holds the query — never another project's, never a
retracted one, never as a hit."""

from __future__ import annotations

from datetime import datetime

import pytest

from mirrortree.protoscope import global_scope, time_range
from mirrortree.v1 import common_pb2, graph_pb2, tree_pb2
from tests.conftest import unique
from tests.graph_service.story import project_scope, record
from tests.tree_service.purging import preview, purge_request, world

pytestmark = pytest.mark.usefixtures("global_preferences_taken_back")

LABEL = "background: confirmed preference"


async def prefer(
    tree_stub, preference_id: str, scope: common_pb2.Scope, subject: str, text: str, *, revision=0
) -> tree_pb2.SetPreferenceResponse:
    response: tree_pb2.SetPreferenceResponse = await tree_stub.SetPreference(
        tree_pb2.SetPreferenceRequest(
            idempotency_key=unique("k"),
            preference_id=preference_id,
            scope=scope,
            subject=subject,
            text=text,
            confirmed_by="user-1",
            expected_revision=revision,
        )
    )
    return response


def after(written: tree_pb2.SetPreferenceResponse) -> graph_pb2.ReadOptions:
    return graph_pb2.ReadOptions(min_consistency=written.consistency)


def ids(response: graph_pb2.SearchResponse) -> list[str]:
    return [hit.ref.id for hit in response.background]


async def test_a_search_shows_the_matching_preferences_that_apply_as_labelled_background(
    tree_stub, graph_stub
):
    project, other = unique("proj"), unique("proj")
    word = unique("Quietude")
    own, general, foreign, unrelated = (unique(f"pref-{n}") for n in ("own", "gl", "fo", "un"))
    first = await prefer(
        tree_stub, own, project_scope(project), "travel", f"Prefers {word.upper()} carriages"
    )
    await prefer(tree_stub, general, global_scope(), f"{word} hours", "no calls before nine")
    await prefer(tree_stub, foreign, project_scope(other), "travel", f"{word} above all")
    await prefer(tree_stub, unrelated, project_scope(project), "food", "likes green tea")
    # A new revision of the project's own: now the most recently updated.
    updated = await prefer(
        tree_stub,
        own,
        project_scope(project),
        "travel",
        f"Prefers {word.upper()} carriages and aisle seats",
        revision=first.preference.revision,
    )
    await record(
        tree_stub,
        project,
        events=[tree_pb2.EventInput(id="ev", kind=tree_pb2.DISCUSSION, title=f"{word} trip")],
    )
    latest = await prefer(tree_stub, unique("pref-later"), global_scope(), "misc", "nothing")

    response = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query=word.lower(), scope=project_scope(project), options=after(latest)
        )
    )

    assert [hit.ref.id for hit in response.hits] == ["ev"]  # the preferences are no hits
    assert ids(response) == [own, general]
    mine, global_one = response.background
    assert mine.ref.type == common_pb2.PREFERENCE
    assert mine.label == global_one.label == LABEL
    assert mine.scope == project_scope(project)
    assert global_one.scope == global_scope()
    assert (mine.subject, mine.revision, mine.confirmed_by) == ("travel", 2, "user-1")
    assert mine.updated_at == updated.preference.updated_at != first.preference.updated_at
    assert datetime.fromisoformat(mine.updated_at) > datetime.fromisoformat(global_one.updated_at)
    assert global_one.revision == 1
    # The excerpt is the text when the text matches, else the subject.
    text = f"Prefers {word.upper()} carriages and aisle seats"
    assert (mine.excerpt.field, mine.excerpt.text, mine.excerpt.is_excerpt) == ("text", text, True)
    assert (mine.excerpt.start, mine.excerpt.end, mine.excerpt.field_length) == (
        0,
        len(text),
        len(text),
    )
    assert (global_one.excerpt.field, global_one.excerpt.text) == ("subject", f"{word} hours")

    # Its ref reads the preference itself.
    context = await graph_stub.GetContext(
        graph_pb2.GetContextRequest(
            object_ref=mine.ref, scope=project_scope(project), options=after(latest)
        )
    )
    assert context.object_ref == mine.ref

    # Global reads only Global's preferences; the other project only its own and Global's.
    in_global = await graph_stub.Search(
        graph_pb2.SearchRequest(query=word, scope=global_scope(), options=after(latest))
    )
    assert ids(in_global) == [general]
    in_other = await graph_stub.Search(
        graph_pb2.SearchRequest(query=word, scope=project_scope(other), options=after(latest))
    )
    assert ids(in_other) == [foreign, general]  # newest first
    both = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query=word, scope=project_scope(project, other), options=after(latest)
        )
    )
    assert set(ids(both)) == {own, general, foreign}


async def test_background_is_on_the_first_page_only_and_at_most_page_size(tree_stub, graph_stub):
    project = unique("proj")
    word = unique("Lanterns")
    older, newer = unique("pref-a"), unique("pref-b")
    await prefer(tree_stub, older, project_scope(project), "light", f"warm {word}")
    await prefer(tree_stub, newer, project_scope(project), "light", f"dim {word}")
    written = await record(
        tree_stub,
        project,
        events=[
            tree_pb2.EventInput(id=f"ev-{i}", kind=tree_pb2.DISCUSSION, title=f"{word} {i}")
            for i in range(3)
        ],
    )
    request = graph_pb2.SearchRequest(
        query=word,
        scope=project_scope(project),
        page_size=1,
        options=graph_pb2.ReadOptions(min_consistency=written.consistency),
    )
    first = await graph_stub.Search(request)
    assert ids(first) == [newer]  # the most recently updated, page_size of them
    assert first.page.has_more
    request.cursor = first.page.next_cursor
    second = await graph_stub.Search(request)
    assert len(second.hits) == 1
    assert list(second.background) == []


async def test_background_is_kept_whatever_the_object_types_and_time_range(tree_stub, graph_stub):
    """Neither filter narrows preferences: they are no graph object type, and background
    applies as it stands now, whatever the evidence's time (as GetContext shows them)."""
    project = unique("proj")
    word = unique("Harbours")
    preference = unique("pref")
    written = await prefer(tree_stub, preference, project_scope(project), "places", f"{word} walks")
    narrowed = graph_pb2.SearchRequest(
        query=word,
        scope=project_scope(project),
        object_types=[common_pb2.SOURCE_REFERENCE],
        time_range=time_range("1990-01-01T00:00:00Z", "1990-01-02T00:00:00Z"),
        options=after(written),
    )
    response = await graph_stub.Search(narrowed)
    assert list(response.hits) == []
    assert ids(response) == [preference]


async def test_a_retracted_preference_never_shows_as_background(tree_stub, graph_stub):
    w = await world(tree_stub)
    preference = f"pref-{w.branch_id}"  # "prefers warm places", about the purged branch's plan
    marker = await prefer(tree_stub, unique("pref"), project_scope(w.project), "x", "y")
    before = await graph_stub.Search(
        graph_pb2.SearchRequest(
            query="WARM places", scope=project_scope(w.project), options=after(marker)
        )
    )
    assert preference in ids(before)

    shown = await preview(tree_stub, w.branch_id)
    done = await tree_stub.Purge(purge_request(w, shown.preview_token))
    options = graph_pb2.ReadOptions(min_consistency=done.consistency)
    # Its new revision's subject is `retracted` and its text the retraction, with the reason.
    # Nothing resting on the purged content is shown: its secret matches no preference now.
    for query in (w.secret, "warm places", "retracted", "never want to see this", "travel"):
        for scope in (project_scope(w.project), project_scope(w.project, unique("proj"))):
            response = await graph_stub.Search(
                graph_pb2.SearchRequest(query=query, scope=scope, options=options)
            )
            assert preference not in ids(response), query
