"""A hub's neighbourhood, paged in SQL over its stored members
(graph_service.neighbourhood.StoredNeighbourhood).

X = ($1 scope, $2 type, $3 id). Everything a read asks of a hub is one statement, a UNION ALL
of parts — a page of a collection, X's own copies, its newest decisions — each row carrying
its part's position and its own within the part (`part`, `n`), then Member's columns but the
cited ids, then the collection's `total`. Each part's own parameters follow those of the parts
before it. A part answers exactly what the in-memory Neighbourhood answers for the same
copies: evidence order (event time, unknown last and all unknowns equal; type rank; stable id;
result id) with text compared by code point (COLLATE "C", as Python compares str).

The parts, and the parameters each takes after X:
  type_page  the members of one type ($8 holds one), in context_members_evidence_order's
             order: the first entries of the type's range after the position (an equality,
             not "any", keeps PostgreSQL reading the index in order); the current mode's
             evidence collections
  page       several types, with X's own copies when the roles ask for them; timeline,
             undated, related
             (both: time filter from, to, basis; roles; types; "dated" | "undated" | "any";
             the evidence order after which to read — neighbourhood.BEFORE_ALL from the
             first, a position, never NULL, so that the generic plan seeks to it in the index;
             the page size plus one; whether to count the collection: without a time filter
             from context_counts and X's own copies, with one those it admits, one by one)
  cited      the sources X or a related copy cites (context_citations, in order), after a
             (reference id, result id) ('', '' from the first: no id is empty); page size plus
             one; whether to count
  self       X's own copies, with the graph revision that recorded each
  decisions  the related decision events, the newest copy of each (of the latest review,
             then the latest recorded), by stable id; how many
"""

from graph_service.queries import load

# Each combination of parts a context read asks for is its own statement.
HUB_READS = {
    # A first current-mode read: events, changes, relations, leaves, related, sources, X's
    # copies (current, snapshots) and the decisions.
    (
        "type_page", "type_page", "type_page", "type_page", "page", "cited", "self",
        "decisions",
    ): load("hub_current_first"),
    # A first timeline read: timeline, undated, related, sources, X's copies (snapshots).
    ("page", "page", "page", "cited", "self"): load("hub_timeline_first"),
    # A cursor's next page of one collection, or the current projection again.
    ("type_page",): load("hub_type_page"),
    ("page",): load("hub_page"),
    ("cited",): load("hub_cited_page"),
    ("self",): load("hub_self"),
    ("self", "decisions"): load("hub_current"),
}  # fmt: skip

# How many copies of roles $4 among the evidence have no event time.
HUB_UNDATED = load("hub_undated")
