"""A context read's statements: its opening, X's neighbourhood, the copies its pages show."""

from graph_service.queries import load

# Scopes listed at most where X exists elsewhere (not_found vs scope_mismatch), and history
# gaps listed at most (the opening reads one more, which says the list goes on): the
# LIMIT 20 and LIMIT 21 of context_opening.sql.
SCOPES_LISTED = 20
HISTORY_GAPS_LISTED = 20

# What a context read needs before its neighbourhood, in the statement that reads the scope's
# state (one round trip instead of six): $3 object type, $4 object id, $5 the preference scopes
# that apply, $6 how many preferences to read from the first (0: none), $7 whether to read
# completion evidence.
#   preference_fingerprint  (count, digest of every id and revision) of the applicable
#                           preferences: any create, update, or a preference leaving the scope
#                           while another arrives changes it
#   in_scope                whether X exists in the scope read
#   is_hub                  whether X's neighbourhood is stored (StoredNeighbourhood reads it)
#   object_scopes           where X exists at all, SCOPES_LISTED at most
#   history_gaps            the gaps the results holding X report (HISTORY_GAPS_LISTED + 1)
#   completion              (entity change id, result id) of the changes that record X being
#                           carried out ("completed"): the only evidence a decision was executed
#                           (their links are graph_links_changes, read index-only: the join
#                           names the change's type as a constant, not as the link's column)
#   first_preferences       the first preferences that apply, by id (preference_row's columns)
CONTEXT_OPENING = load("context_opening")

# X's neighbourhood, read whole (graph_service.neighbourhood.Neighbourhood): what paging,
# filtering and ordering need of every stored copy in it (no text), each with its role — "self"
# (X's own copies, with the graph revision that recorded them) or "member" (a copy of an object
# related to X: stored for a hub, walked live otherwise, as mirrortree.neighbourhoods.RELATED
# defines it) — and the source references it cites. Only the copies on a page are then read
# whole (OBJECT_COPIES). The live walk runs only when X is not a hub (a one-time filter: its
# subqueries are then never executed).
CONTEXT_NEIGHBOURHOOD = load("context_neighbourhood")

# Whole stored copies by key ($1 result ids, $2 types, $3 ids) ('copy'), the source
# references cited by those whose sources are shown ($7, by key), in their own result ('cited'),
# and the evidenced relations touching the objects ($4 scope, $5 types, $6 ids) ('touch'): what
# a context read shows of its pages. (A copy's cited_ids are the sources read with it.)
OBJECT_COPIES = load("context_copies")

# One stored copy of X whole, by its key.
OBJECT_COPY = """
SELECT o.result_id, o.object_type, o.object_id, o.type_rank, o.scope_key, o.title, o.body,
       o.kind, o.object_revision, o.confirmation_state, o.event_time_start, o.event_time_end,
       o.event_time_precision, o.event_time_basis, o.review_generated_at, o.recorded_at,
       o.details
FROM graph_objects o
WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3 AND o.result_id = $4
"""

# A preference's columns are in the order graph_service.documents.preference_row reads them.
PREFERENCE_BY_ID = (
    "SELECT id, scope_key, subject, text, about, confirmed_by, revision, updated_at "
    "FROM preferences WHERE id = $1"
)

# Preferences that apply to a scope ($1 scope keys), after id $2, limit $3.
PREFERENCES = """SELECT id, scope_key, subject, text, about, confirmed_by, revision, updated_at
FROM preferences
WHERE scope_key = any($1::text[]) AND ($2::text IS NULL OR id > $2)
ORDER BY id
LIMIT $3
"""

# The results in scope that hold the object ($1 scope, $2 type, $3 id): result $4 first when
# it is one of them, then oldest first (the versions a caller can name), at most $5, each with
# how many there are in all.
OBJECT_RESULTS = """
SELECT o.result_id, count(*) OVER () AS held
FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3
ORDER BY o.result_id = $4 DESC, r.graph_revision
LIMIT $5
"""
