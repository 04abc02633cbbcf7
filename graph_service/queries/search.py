"""Search's statements (graph_service.search chooses between them, not the planner).

Search ranks matches in three relevance tiers: the text is in both the title (title, entity
label, summary title) and the body (3), in the title only or a summary's text only (2), in the
body only (1). Within a tier the order is type rank, stable id, result id — exactly the order
of the index graph_objects_scope_order. Text is matched as ILIKE matches it — both sides
lowered, then LIKE — but on the lowered copies of the title and body each copy stores
(title_folded, body_folded: migration 0016), with the pattern lowered once by the opening:
lowering is most of a match's cost.

Parameters: $1 scope key, $2 object types, $3 the lowered LIKE pattern, $4/$5 the time range
on the chosen basis $6 ('event_time' | 'review_generated_at' | 'recorded_at'), $7..$9 the
keyset position inside the tier (type rank, object id, result id; NULL = from the start), $10
limit; then each statement's own (below).

An event's time is the closed interval from its start to the latest instant it may lie at
(event_time_until: its end, or start, plus its precision's period); a range matches the events
whose interval intersects it (graph_objects_event_time indexes that interval). An unknown
event time matches no range. A result's time (review, recording) matches when it lies in the
range; each copy carries its result's times. The scans and counts state this rule as ranges
an index can serve; the walks state it on the values of one index entry, computing the widened
end only for an event that ends before the range by its instants alone (tests/graph_service/
test_time_filter.py holds both and checks every statement states one of them).
"""

from graph_service.queries import load

# The search's opening: the scope's state (scope_state.py), and its LIKE pattern ($3) lowered
# as ILIKE lowers it (lower(), the database's collation): the pattern the search statements
# take.
SEARCH_OPENING = load("search_opening")

# A walk reads the ordered index of the asked types from the keyset and returns the tier's
# matches among the copies it met, every row carrying where the walk ended, how many entries
# it read and how many of them were in the time range — one row with no match when nothing
# matched, none when the tier is done; $11 how many copies to walk, $12/$13 the lowest and
# highest type rank asked for (an index condition, so a walk for one type skips the others).
# Without a time range $4..$6 are NULL and every entry is in range; the walk matches the text
# as it goes and only its few matches are read again whole.
SEARCH_WALKS = {
    3: load("search_walk_tier3"),
    2: load("search_walk_tier2"),
    1: load("search_walk_tier1"),
}
# Within a time range a walk reads entries until $11 of them were in the range or it has read
# $14, whichever comes first: the second bound keeps a narrow range from costing a walk the
# whole index. It applies the time rule to the index entries alone (index-only: the ordered
# index includes the time columns) and visits the heap by primary key only for the entries in
# range, matching both fields of each, so that it also tells how many copies in range match
# in any tier (matches_in_range). The time rule is a column of the entries walked, never a
# condition of the index scan: given the event-time index, PostgreSQL would plan a long walk
# within a range as reading the whole range's copies and sorting them.
SEARCH_WALKS_IN_TIME_RANGE = {
    3: load("search_range_walk_tier3"),
    2: load("search_range_walk_tier2"),
    1: load("search_range_walk_tier1"),
}
# A tier's matches through the trigram (and event-time) indexes, sorted; the ORDER BY is an
# expression, so the planner cannot fall back to walking the ordered index through millions
# of copies for a term that turned out to be rare.
SEARCH_SCANS = {
    3: load("search_scan_tier3"),
    2: load("search_scan_tier2"),
    1: load("search_scan_tier1"),
}

# The statements that read the rest of a page from a time range at once, every tier: each
# returns the page from tier $11 (after the keyset in that tier) down, with the number of all
# matches in the range and of the copies in it (range_matches, range_copies, on every row;
# one row with only them when the page is empty). The range's copies are held as keys and
# their tier; only the page's rows are read whole.
#
# Every copy in the range, each matched once in the select list of a materialized part, where
# no index can be chosen for the text: the trigram indexes cannot serve a common term here,
# and PostgreSQL would still AND their bitmap with the range's index. An event time is read
# through graph_objects_event_time; a result's times through the scope's results, then each
# result's copies by primary key (a lateral join, whatever the generic plan guesses of how
# many results the range holds).
RANGE_SCANS = {
    "event_time": load("search_range_read_event_time"),
    "review_generated_at": load("search_range_read_review_generated_at"),
    "recorded_at": load("search_range_read_recorded_at"),
}
# The range's matches only (range_copies = range_matches), found through the trigram indexes
# ANDed with the range's own index: the event-time index, or for a result's times the primary
# key's range of each result in range (review and recording times are in no index of the
# copies). Planned with its values (replica.PLAN_WITH_VALUES), so that the range's index can be
# ANDed in.
RANGE_TEXT_SCANS = {
    "event_time": load("search_range_matches_event_time"),
    "review_generated_at": load("search_range_matches_review_generated_at"),
    "recorded_at": load("search_range_matches_recorded_at"),
}
# The range's matches found by the days of their time: the trigram indexes hold each copy's
# days (those its event time touches, the day of its result's review and of its recording:
# migration 0017) as their first columns, so each yields only the term's entries filed under
# the range's days (range_days), and the exact rule is checked on those alone. Each side of
# the OR names the days, as each must to be read through one index with both their columns.
# The exact rule stands outside the inner select (OFFSET 0): beside it, PostgreSQL takes the
# range and its days for independent conditions, guesses their intersection far too small,
# and ANDs the event-time index with the days' entries alone.
RANGE_DAY_TEXT_SCANS = {
    "event_time": load("search_range_day_matches_event_time"),
    "review_generated_at": load("search_range_day_matches_review_generated_at"),
    "recorded_at": load("search_range_day_matches_recorded_at"),
}

# A search's counts, each up to a cap: beyond it, or past the time budget the caller sets, a
# count is reported unknown, not guessed. Its matches through the trigram indexes ($7 cap).
SEARCH_TOTALS = load("search_count")
# Its matches through a small time range, as RANGE_SCANS reads it ($7 cap); the text is
# matched in the select list, since as a condition the trigram indexes would be ANDed in.
RANGE_TOTALS = {
    "event_time": load("search_range_count_event_time"),
    "review_generated_at": load("search_range_count_review_generated_at"),
    "recorded_at": load("search_range_count_recorded_at"),
}
# The matches an event-time range leaves out because their event time is unknown ($1..$3, the
# cap $4).
UNKNOWN_TIME_MATCHES = load("search_unknown_time_count")
