"""Search's statements; graph_service.search chooses between them from what its walks see.

Relevance tiers: the text is in both the title and the body (3), in the title only or a
summary's text only (2), in the body only (1); within a tier the order is type rank, stable id,
result id, exactly the order of the index graph_objects_scope_order. Text is matched as ILIKE
matches it, but on the lowered copies each copy stores (title_folded, body_folded), with the
pattern lowered once by the opening, because lowering is most of a match's cost.

Parameters: $1 scope key, $2 object types, $3 the lowered LIKE pattern, $4/$5 the time range
on the basis $6 ('event_time' | 'review_generated_at' | 'recorded_at'), $7..$9 the keyset
inside the tier (type rank, object id, result id; NULL = from the start), $10 limit, then each
statement's own. An event matches a range when its interval (start to event_time_until: its
end, or start, plus its precision's period) intersects it; an unknown event time matches no
range; a result's time matches when it lies in the range
(tests/graph_service/test_time_filter.py holds the rule as scans and as walks state it).
"""

from graph_service.queries import load

# The scope's state plus the LIKE pattern ($3) lowered as ILIKE lowers it, and the first page's
# background: at most $8 of the preferences of the scopes $7 that match it (none when $8 is 0).
SEARCH_OPENING = load("search_opening")

# A walk along the ordered index from the keyset ($11 copies, type ranks $12..$13 as an index
# condition), matching as it goes, so that a common term costs a few hundred copies whatever
# the graph's size; every row says where the walk ended (one row without a match when none
# matched, none when the tier is done).
SEARCH_WALKS = {
    3: load("search_walk_tier3"),
    2: load("search_walk_tier2"),
    1: load("search_walk_tier1"),
}
# A walk within a time range, also bounded by the entries it reads ($14) so that a narrow range
# cannot cost it the whole index; the time rule is a column of the entries, never an index
# condition, so that PostgreSQL cannot swap the walk for a sort of the whole range.
SEARCH_WALKS_IN_TIME_RANGE = {
    3: load("search_range_walk_tier3"),
    2: load("search_range_walk_tier2"),
    1: load("search_range_walk_tier1"),
}
# A tier's matches through the trigram (and event-time) indexes, ordered by an expression so
# that the planner cannot fall back to walking the ordered index for a rare term.
SEARCH_SCANS = {
    3: load("search_scan_tier3"),
    2: load("search_scan_tier2"),
    1: load("search_scan_tier1"),
}

# The range reads below return the page from tier $11 (after the keyset in that tier) down,
# every row with the range's matches and copies counted (range_matches, range_copies), so
# that one statement replaces a scan per tier and the count.
#
# Every copy of the range, its text matched in the select list, where no index can be chosen
# for it (the trigram bitmaps of a common term cost more than the range's copies).
RANGE_SCANS = {
    "event_time": load("search_range_read_event_time"),
    "review_generated_at": load("search_range_read_review_generated_at"),
    "recorded_at": load("search_range_read_recorded_at"),
}
# The range's matches, through the trigram indexes ANDed with the range's own index (planned
# with its values, so that the range's index can be ANDed in).
RANGE_TEXT_SCANS = {
    "event_time": load("search_range_matches_event_time"),
    "review_generated_at": load("search_range_matches_review_generated_at"),
    "recorded_at": load("search_range_matches_recorded_at"),
}
# The range's matches through the days each copy's times are filed under in the trigram
# indexes (migration 0017), so that the indexes yield only the range's days' entries; the
# exact rule stands outside the inner select, where PostgreSQL cannot mistake the range and
# its days for independent conditions.
RANGE_DAY_TEXT_SCANS = {
    "event_time": load("search_range_day_matches_event_time"),
    "review_generated_at": load("search_range_day_matches_review_generated_at"),
    "recorded_at": load("search_range_day_matches_recorded_at"),
}
# Event time only: at most $12 of the scope's matches, through the trigram indexes alone (a
# generic plan, so that the range plays no part in finding them), each placed in the range or
# not, so that one statement also counts those of unknown time (unknown_time) that no range
# holds; below $12 it returns the page as RANGE_TEXT_SCANS does, with the scope's matches
# (scope_matches) on every row; at $12 only the counts, and the range's matches are read
# instead.
SCOPE_TEXT_SCANS = {
    "event_time": load("search_scope_matches_event_time"),
}

# Counts stop at a cap, because beyond it a count is reported unknown, never guessed.
# The matches through the trigram indexes ($7 cap).
SEARCH_TOTALS = load("search_count")
# The matches of a small time range, read as RANGE_SCANS reads it ($7 cap), the text matched
# in the select list so that the trigram bitmaps are not ANDed in.
RANGE_TOTALS = {
    "event_time": load("search_range_count_event_time"),
    "review_generated_at": load("search_range_count_review_generated_at"),
    "recorded_at": load("search_range_count_recorded_at"),
}
# The matches an event-time range leaves out for their unknown event time ($1..$3, $4 cap).
UNKNOWN_TIME_MATCHES = load("search_unknown_time_count")
