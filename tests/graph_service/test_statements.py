"""The statements are written out in full; where one repeats what another module defines, it
must say exactly the same."""

from __future__ import annotations

from graph_service.queries import context, scope_state, search
from mirrortree import neighbourhoods


def flat(sql: str) -> str:
    return " ".join(sql.split())


def test_the_live_walk_of_a_context_read_is_the_one_hubs_store():
    """A hub's stored members are what the live walk returns (mirrortree.neighbourhoods); a
    context read walks live with the same SQL."""
    statement = flat(context.CONTEXT_NEIGHBOURHOOD)
    assert statement.startswith(flat(neighbourhoods.RELATED))
    assert flat(neighbourhoods.RELATED_COPIES) in statement


def test_the_openings_list_what_their_constants_say():
    for opening in (scope_state.SCOPE_STATE, search.SEARCH_OPENING, context.CONTEXT_OPENING):
        assert f"LIMIT {scope_state.GAPS_LISTED + 1}) AS scope_gaps" in flat(opening)
    assert f"LIMIT {context.SCOPES_LISTED}) AS object_scopes" in flat(context.CONTEXT_OPENING)
    assert f"LIMIT {context.HISTORY_GAPS_LISTED + 1}) AS history_gaps" in flat(
        context.CONTEXT_OPENING
    )


def test_the_search_opening_and_the_context_opening_extend_the_scope_state():
    """Both read the scope's state exactly as SCOPE_STATE does, columns added before its FROM."""
    state = flat(scope_state.SCOPE_STATE)
    head, tail = state.split(" FROM review_results WHERE scope_key = $1) s,")
    for opening in (search.SEARCH_OPENING, context.CONTEXT_OPENING):
        assert flat(opening).startswith(head)
        assert flat(opening).endswith(" FROM review_results WHERE scope_key = $1) s," + tail)
