"""Statements that share a part say it exactly alike. Each shared part is written once, in the
SQL templates (graph_service/queries/templates, rendered by scripts/gen_sql.py); these tests
hold the statements to the parts they must share, so that a template that stops using one
fails here rather than in a slow equivalence test."""

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


def test_the_live_walk_selects_the_member_columns_hubs_store():
    """A hub's members are stored and read by MEMBER_COLUMNS; the live walk (written in a
    template) selects the same columns in the same order."""
    columns = ", ".join(f"o.{name}" for name in neighbourhoods.MEMBER_COLUMNS)
    assert flat(neighbourhoods.RELATED_COPIES).startswith(f"SELECT {columns} FROM related m ")


def test_the_openings_list_what_their_constants_say():
    for opening in (scope_state.SCOPE_STATE, search.SEARCH_OPENING, context.CONTEXT_OPENING):
        assert f"LIMIT {scope_state.GAPS_LISTED + 1}) AS scope_gaps" in flat(opening)
        # as many results as gaps listed: each result read reports one at least
        assert f"LIMIT {scope_state.GAPS_LISTED + 1}) g," in flat(opening)
    assert f"LIMIT {context.SCOPES_LISTED}) AS object_scopes" in flat(context.CONTEXT_OPENING)
    assert f"LIMIT {context.HISTORY_GAPS_LISTED + 1}) AS history_gaps" in flat(
        context.CONTEXT_OPENING
    )


def test_the_search_opening_and_the_context_opening_extend_the_scope_state():
    """Both read the scope's state exactly as SCOPE_STATE does, columns added before its FROM."""
    state = flat(scope_state.SCOPE_STATE)
    split = " FROM (SELECT $1::text AS scope_key) k LEFT JOIN scope_results t USING (scope_key)) s,"
    head, tail = state.split(split)
    for opening in (search.SEARCH_OPENING, context.CONTEXT_OPENING):
        assert flat(opening).startswith(head)
        assert flat(opening).endswith(split + tail)


# An event's interval meets the range: the rule a copy is placed in an event-time range by.
EVENT_TIME_IN_RANGE = """
    o.event_time_start IS NOT NULL
    AND tstzrange(o.event_time_start,
                  event_time_until(o.event_time_start, o.event_time_end, o.event_time_precision),
                  '[]')
        && tstzrange($4::timestamptz, $5::timestamptz, '[]')
"""
# How every read of a time range, or of the scope's matches, ends: the page's rows read whole.
PAGE_READ_WHOLE = """
    ORDER BY o.score DESC, o.type_rank, o.object_id, o.result_id
    LIMIT $10
) p ON true
LEFT JOIN graph_objects o
    ON o.result_id = p.result_id AND o.object_type = p.object_type AND o.object_id = p.object_id
ORDER BY p.score DESC, p.type_rank, p.object_id, p.result_id
"""


def test_every_read_of_an_event_time_range_places_a_copy_in_it_by_one_rule():
    """The scope's matches are placed in the range by the rule the range's reads find it by, so
    whichever way a page is read, it holds the same copies."""
    for table in (
        search.RANGE_SCANS, search.RANGE_TEXT_SCANS, search.RANGE_DAY_TEXT_SCANS,
        search.RANGE_TOTALS, search.SCOPE_TEXT_SCANS,
    ):  # fmt: skip
        assert flat(EVENT_TIME_IN_RANGE) in flat(table["event_time"])


def test_the_range_reads_and_the_scopes_matches_read_their_page_alike():
    for table in (
        search.RANGE_SCANS, search.RANGE_TEXT_SCANS, search.RANGE_DAY_TEXT_SCANS,
        search.SCOPE_TEXT_SCANS,
    ):  # fmt: skip
        for statement in table.values():
            assert flat(statement).endswith(flat(PAGE_READ_WHOLE))
