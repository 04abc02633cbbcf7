"""What "the objects related to X" means, in SQL, and how it is kept for hubs.

A context read (StoryGraph.GetContext) pages every collection from X's neighbourhood: every
stored copy, in X's scope, of every object related to X. Related means

    N(X)    X's direct neighbours, over links in either direction;
    Rel(X)  every relation with a link to X or to one of N(X);
    E(X)    every end of those relations (the links from them),

other than X itself. Two decisions linked only through "B replaces A" are therefore both in
each other's context.

Walked live (RELATED), that costs an index probe per neighbour and per member copy, for an
entity a thousand events mention, however few of them a page shows. So for a
*hub* — an object with at least `hub_links` links in its scope (a tree_service setting) —
tree_service keeps the member copies in context_members, written in the same transaction as
the review result that adds them, and graph_service pages the hub's collections in SQL over
them (graph_service.neighbourhood.StoredNeighbourhood). A hub's stored members are exactly what
the live walk would return, so whether an object is a hub changes how fast its context is
read, never what it says (tests/tree_service/test_context_hubs.py compares the two over
generated graphs, and reads every page of a story's contexts before and after its objects
become hubs).

The graph only grows (copies and links are never updated or deleted), so a hub's members
only ever gain rows. A review result R adds copies and links; the member pairs (hub X, object
Y) it can add are those whose derivation above uses one of R's links, or whose Y has a copy
in R (MAINTAIN_HUB_MEMBERS lists the cases). Ingestions of one scope are serialized by the
scope's lock, so each sees the one before it whole. An object becomes a hub when a result
brings its links to the threshold (or when a lower threshold is configured): its members are
then filled once from the live walk (FILL_HUB_MEMBERS).

Beside its members, a hub keeps the sources its context cites (context_citations): every
(source reference, result) cited by a copy of the hub or by one of its members, in the order
a context read lists them. Each statement that adds members adds their citations, and those of
the hub's own new copies, in the same statement, and counts what it stored (context_counts:
a read's totals without reading every member).
"""

from pathlib import Path

from mirrortree.sqlfiles import read_statement

_SQL = Path(__file__).parent / "sql"


# An object with this many links in its scope is a hub: below it the live walk is cheap, and
# a hub's stored members cost storage and ingestion time for every copy near it.
DEFAULT_HUB_LINKS = 128

# The objects related to X = ($2 type, $3 id) in scope $1 (the `related` CTE: t, id),
# walked live; X itself may be among them (a caller excludes it). graph_service's context read
# walks with the same SQL: both are rendered from one template (scripts/gen_sql.py).
RELATED = read_statement(_SQL / "related.sql")

# What a context read needs of a member copy (no text), as columns of graph_objects `o`; the
# same names and order in context_members.
MEMBER_COLUMNS = (
    "object_type",
    "object_id",
    "result_id",
    "type_rank",
    "kind",
    "event_time_start",
    "event_time_end",
    "event_time_precision",
    "review_generated_at",
    "recorded_at",
    "cited_ids",
)
_OBJECT_MEMBER_COLUMNS = ", ".join(f"o.{name}" for name in MEMBER_COLUMNS)
_STORED_COLUMNS = "scope_key, anchor_type, anchor_id, " + ", ".join(MEMBER_COLUMNS)

# X's member copies, walked live ($1 scope, $2 type, $3 id): the copies of the `related`
# CTE's objects, MEMBER_COLUMNS. RELATED_COPIES is the statement's body, for callers that
# use its rows inside a statement of their own; rendered like RELATED.
RELATED_COPIES = read_statement(_SQL / "related_copies.sql")
LIVE_MEMBERS = RELATED + RELATED_COPIES

# The sources X's context cites ($1 scope, $2 type, $3 id), walked live: (source id, result
# id, the citing result's review_generated_at and recorded_at) for every id a copy of X or
# of a related object cites, once each.
LIVE_CITATIONS = (
    RELATED
    + f"""
SELECT DISTINCT c.id, s.result_id, s.review_generated_at, s.recorded_at
FROM ({RELATED_COPIES}
      UNION ALL
      SELECT {_OBJECT_MEMBER_COLUMNS} FROM graph_objects o
      WHERE o.scope_key = $1 AND o.object_type = $2 AND o.object_id = $3) s,
     unnest(s.cited_ids) AS c (id)
"""
)

# A hub's stored citations, as LIVE_CITATIONS returns them.
STORED_CITATIONS = """
SELECT source_id, result_id, review_generated_at, recorded_at
FROM context_citations
WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
"""

# Ends a statement whose CTEs `added` (the member rows it stored, _ADDED columns) and `cited`
# (anchor_type, anchor_id, result_id, cited_ids, review_generated_at, recorded_at: copies that
# hubs of scope $1 just gained, as members or as their own copies) say what the hubs gained:
# stores the sources those copies cite for those hubs, and counts what was stored
# (context_counts). Only rows actually inserted are counted: a statement run again adds and
# counts nothing.
_STORE_CITATIONS_AND_COUNTS = """, stored AS (
    INSERT INTO context_citations
    SELECT $1, s.anchor_type, s.anchor_id, c.id, s.result_id, s.review_generated_at,
           s.recorded_at
    FROM cited s, unnest(s.cited_ids) AS c (id)
    ON CONFLICT DO NOTHING
    RETURNING anchor_type, anchor_id
)
INSERT INTO context_counts AS n
SELECT $1, anchor_type, anchor_id, 'member', object_type, undated, count(*)
FROM added
GROUP BY anchor_type, anchor_id, object_type, undated
UNION ALL
SELECT $1, anchor_type, anchor_id, 'cited', 'source_reference', true, count(*)
FROM stored
GROUP BY anchor_type, anchor_id
ON CONFLICT (scope_key, anchor_type, anchor_id, role, object_type, undated)
DO UPDATE SET copies = n.copies + excluded.copies
"""

# A hub's stored member copies ($1 scope, $2 type, $3 id), as LIVE_MEMBERS returns them.
STORED_MEMBERS = f"""
SELECT {", ".join(MEMBER_COLUMNS)}
FROM context_members
WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
"""

# What context_counts holds for a hub ($1 scope, $2 type, $3 id): (role, object type,
# undated, copies); COUNTED_STORED derives the same from the stored rows.
STORED_COUNTS = """
SELECT role, object_type, undated, copies
FROM context_counts
WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
"""
COUNTED_STORED = """
SELECT 'member' AS role, object_type, event_time_start IS NULL AS undated, count(*) AS copies
FROM context_members
WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
GROUP BY object_type, event_time_start IS NULL
UNION ALL
SELECT 'cited', 'source_reference', true, count(*)
FROM context_citations
WHERE scope_key = $1 AND anchor_type = $2 AND anchor_id = $3
HAVING count(*) > 0
"""

# What _STORE_CITATIONS_AND_COUNTS needs of a citing copy, after the hub it is stored for,
# and of a stored member row.
_CITING = "result_id, cited_ids, review_generated_at, recorded_at"
_ADDED = f"anchor_type, anchor_id, object_type, event_time_start IS NULL AS undated, {_CITING}"

# Makes X ($1 scope, $2 type, $3 id) a hub: records it and stores its members, walked live,
# and the sources they and X's copies cite. Idempotent; run under the scope's lock, so no
# ingestion of the scope is half seen.
FILL_HUB_MEMBERS = (
    RELATED
    + f""", hub AS (
    INSERT INTO context_hubs (scope_key, object_type, object_id) VALUES ($1, $2, $3)
    ON CONFLICT DO NOTHING
), added AS (
    INSERT INTO context_members ({_STORED_COLUMNS})
    SELECT $1, $2, $3, c.* FROM ({RELATED_COPIES}) c
    ON CONFLICT DO NOTHING
    RETURNING {_ADDED}
), cited AS (
    SELECT anchor_type, anchor_id, {_CITING} FROM added
    UNION ALL
    SELECT $2, $3, {_CITING} FROM graph_objects
    WHERE scope_key = $1 AND object_type = $2 AND object_id = $3
)"""
    + _STORE_CITATIONS_AND_COUNTS
)

# The objects result $2 (of scope $1) links, at either end, that are not hubs yet but now
# have at least $3 links in the scope: the ones to make hubs after it. Each object's links are
# counted up to $3 in each direction only, so a large object costs no more than a small one.
NEW_HUBS = """
WITH ends AS (
    SELECT from_type AS t, from_id AS id FROM graph_links WHERE result_id = $2
    UNION
    SELECT to_type, to_id FROM graph_links WHERE result_id = $2
)
SELECT e.t, e.id
FROM ends e
WHERE NOT EXISTS (SELECT 1 FROM context_hubs h
                  WHERE h.scope_key = $1 AND h.object_type = e.t AND h.object_id = e.id)
  AND (SELECT count(*) FROM (SELECT 1 FROM graph_links
                             WHERE scope_key = $1 AND to_type = e.t AND to_id = e.id
                             LIMIT $3) i)
    + (SELECT count(*) FROM (SELECT 1 FROM graph_links
                             WHERE scope_key = $1 AND from_type = e.t AND from_id = e.id
                             LIMIT $3) o) >= $3
ORDER BY e.t, e.id
"""

# Every object of the database with at least $1 links in a scope that is not a hub yet: what
# a lower threshold than the one last applied makes hubs (tree_service, at start).
OBJECTS_OVER_THRESHOLD = """
SELECT scope_key, t, id
FROM (SELECT scope_key, to_type AS t, to_id AS id FROM graph_links
      UNION ALL
      SELECT scope_key, from_type, from_id FROM graph_links) e
GROUP BY scope_key, t, id
HAVING count(*) >= $1
EXCEPT
SELECT scope_key, object_type, object_id FROM context_hubs
ORDER BY 1, 2, 3
"""

# "l is a link from a relation", written so that PostgreSQL does not match it to the partial
# index of relation ends (graph_links_relation_ends): during a large first ingestion that
# index's statistics say it is nearly empty, and PostgreSQL then scans all of it for every
# row instead of looking the row's end up. The full link indexes serve these lookups by their
# key. For the same reason the links from a relation are looked up by a relation type carried
# in the row (rt), not by the constant.
_RELATION_LINK = "(l.from_type = 'relation') IS TRUE"

_IS_HUB = """EXISTS (SELECT 1 FROM context_hubs h
               WHERE h.scope_key = $1 AND h.object_type = {t} AND h.object_id = {id})"""

# The member copies result $2 (of scope $1, already written) adds to existing hubs: R's links
# are $3..$6 (from type, from id, to type, to id) and its objects $7, $8 (type, id), passed in
# rather than read back, so that PostgreSQL plans with their real numbers (a result's rows are
# not in the statistics yet, and a thousand-fold underestimate turns its joins quadratic). A pair
# (hub X, object Y) is new, or has a new copy of Y, when:
#   links      one of R's links joins X and Y: Y is a new neighbour;
#              or it joins X and Z: the relations linking to Z, and their ends, join X;
#   relations  a relation r gained a link or a copy in R: r and its ends join every hub that
#              is one of r's ends or a neighbour of one (r links to it or to its neighbour);
#   copies     Y has a copy in R: it joins the hubs Y already belongs to — Y's neighbours,
#              and, for every relation r linking to Y, r's ends and their neighbours.
# The first two cases add every copy of Y; the last only Y's copies in R. A pair that is not
# new adds nothing (the unique index keeps one row per copy and hub). The sources the added
# copies cite, and those cited by a hub's own copies in R, are stored with them.
MAINTAIN_HUB_MEMBERS = (
    f"""
WITH fresh AS MATERIALIZED (
    SELECT * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[])
        AS l (from_type, from_id, to_type, to_id)
), fresh_objects AS MATERIALIZED (
    SELECT * FROM unnest($7::text[], $8::text[]) AS o (t, id)
), fresh_ends AS (  -- (x, z): a hub x and the object z one of R's links joins it to
    SELECT * FROM (SELECT from_type AS xt, from_id AS xid, to_type AS zt, to_id AS zid
                   FROM fresh
                   UNION
                   SELECT to_type, to_id, from_type, from_id FROM fresh) f
    WHERE {_IS_HUB.format(t="f.xt", id="f.xid")}
), z_relations AS (  -- the relations linking to such a z, for hub x
    SELECT f.xt, f.xid, l.from_type AS rt, l.from_id AS rid
    FROM fresh_ends f
    JOIN graph_links l
      ON l.scope_key = $1 AND l.to_type = f.zt AND l.to_id = f.zid AND {_RELATION_LINK}
), relation_sources AS (
    -- renewed: a relation with a link or a copy in R, whose whole contribution is added again;
    -- else (r, y): y has a copy in R and is an end of relation r (y alone is added)
    SELECT from_type AS rt, from_id AS rid, true AS renewed, NULL AS yt, NULL AS yid
    FROM fresh WHERE from_type = 'relation'
    UNION
    SELECT t, id, true, NULL, NULL FROM fresh_objects WHERE t = 'relation'
    UNION
    SELECT l.from_type, l.from_id, false, o.t, o.id
    FROM fresh_objects o
    JOIN graph_links l
      ON l.scope_key = $1 AND l.to_type = o.t AND l.to_id = o.id AND {_RELATION_LINK}
), relation_ends AS (
    SELECT s.*, l.to_type AS t, l.to_id AS id
    FROM relation_sources s
    JOIN graph_links l ON l.scope_key = $1 AND l.from_type = s.rt AND l.from_id = s.rid
), relation_hubs AS (  -- hub (t, id) is an end of relation r or a neighbour of one
    SELECT * FROM (SELECT rt, rid, renewed, yt, yid, t, id FROM relation_ends
                   UNION
                   SELECT e.rt, e.rid, e.renewed, e.yt, e.yid, n.from_type, n.from_id
                   FROM relation_ends e
                   JOIN graph_links n ON n.scope_key = $1 AND n.to_type = e.t AND n.to_id = e.id
                   UNION
                   SELECT e.rt, e.rid, e.renewed, e.yt, e.yid, n.to_type, n.to_id
                   FROM relation_ends e
                   JOIN graph_links n
                     ON n.scope_key = $1 AND n.from_type = e.t AND n.from_id = e.id) a
    WHERE {_IS_HUB.format(t="a.t", id="a.id")}
), fresh_neighbours AS MATERIALIZED (
    -- (x, y): y has a copy in R and x is its neighbour. Looked up from R's objects: left free
    -- to join the hub check first, PostgreSQL starts from the hubs and reads every link to
    -- every hub, which at a million objects took 0.9 s of a result's 1.3 s.
    SELECT n.to_type AS xt, n.to_id AS xid, o.t AS yt, o.id AS yid
    FROM fresh_objects o
    JOIN graph_links n ON n.scope_key = $1 AND n.from_type = o.t AND n.from_id = o.id
    UNION ALL
    SELECT n.from_type, n.from_id, o.t, o.id
    FROM fresh_objects o
    JOIN graph_links n ON n.scope_key = $1 AND n.to_type = o.t AND n.to_id = o.id
), pairs AS (  -- (hub x, object y, whether only y's copies in R are new)
    SELECT xt, xid, zt AS yt, zid AS yid, false AS fresh_only FROM fresh_ends
    UNION
    SELECT xt, xid, 'relation', rid, false FROM z_relations
    UNION
    SELECT z.xt, z.xid, l.to_type, l.to_id, false
    FROM z_relations z
    JOIN graph_links l ON l.scope_key = $1 AND l.from_type = z.rt AND l.from_id = z.rid
    UNION
    SELECT h.t, h.id, 'relation', h.rid, false FROM relation_hubs h WHERE h.renewed
    UNION
    SELECT h.t, h.id, l.to_type, l.to_id, false
    FROM relation_hubs h
    JOIN graph_links l ON l.scope_key = $1 AND l.from_type = h.rt AND l.from_id = h.rid
    WHERE h.renewed
    UNION
    SELECT h.t, h.id, h.yt, h.yid, true FROM relation_hubs h WHERE NOT h.renewed
    UNION
    SELECT xt, xid, yt, yid, true FROM fresh_neighbours f
    WHERE {_IS_HUB.format(t="f.xt", id="f.xid")}
), added AS (
    INSERT INTO context_members ({_STORED_COLUMNS})
    SELECT $1, p.xt, p.xid, {_OBJECT_MEMBER_COLUMNS}
    FROM pairs p
    JOIN graph_objects o ON o.object_type = p.yt AND o.object_id = p.yid AND o.scope_key = $1
    WHERE NOT (p.xt = p.yt AND p.xid = p.yid) AND (NOT p.fresh_only OR o.result_id = $2)
    ON CONFLICT DO NOTHING
    RETURNING {_ADDED}
), cited AS (
    SELECT anchor_type, anchor_id, {_CITING} FROM added
    UNION ALL
    SELECT f.t, f.id, o.result_id, o.cited_ids, o.review_generated_at, o.recorded_at
    FROM fresh_objects f
    JOIN graph_objects o ON o.result_id = $2 AND o.object_type = f.t AND o.object_id = f.id
    WHERE {_IS_HUB.format(t="f.t", id="f.id")}
)"""
    + _STORE_CITATIONS_AND_COUNTS
)
