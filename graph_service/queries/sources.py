"""A source reference and the source behind it, and the relations that give validity."""

from graph_service.queries import load

# Every stored copy of a source reference, newest result first, with the scope it lives in.
SOURCE_REFERENCE = """
SELECT o.result_id, o.scope_key, o.body AS fragment, o.details, r.graph_revision,
       r.recorded_at AS result_recorded_at
FROM graph_objects o JOIN review_results r ON r.result_id = o.result_id
WHERE o.object_type = 'source_reference' AND o.object_id = $1
ORDER BY r.graph_revision DESC
"""

# The message source behind a tree node: its lineage (source id), its newest revision, where
# the conversation lives now, and whether that node was purged (then it reads as deleted).
CURRENT_MESSAGE_SOURCE = """
SELECT s.source_id, s.revision, s.text, s.role, s.ordinal, t.project_id, t.id::text AS tree_id,
       s.node_id::text AS node_id, s.created_at,
       EXISTS (SELECT 1 FROM purged_nodes p WHERE p.node_id = s.node_id) AS purged,
       (SELECT min(f.created_at) FROM source_revisions f WHERE f.source_id = s.source_id)
           AS first_created_at
FROM source_revisions s
JOIN trees t ON t.id = s.tree_id
WHERE s.source_id = (SELECT source_id FROM source_revisions WHERE node_id = $1 LIMIT 1)
ORDER BY s.revision DESC
LIMIT 1
"""

MESSAGE_SOURCE_REVISION = """
SELECT s.revision, s.text, t.project_id, s.created_at
FROM source_revisions s JOIN trees t ON t.id = s.tree_id
WHERE s.source_id = (SELECT source_id FROM source_revisions WHERE node_id = $1 LIMIT 1)
  AND s.revision = $2
"""

# A recorded (non-message) source as it is now; only its current revision is kept.
CURRENT_RECORDED_SOURCE = """
SELECT text, revision, project_id, deleted, updated_at
FROM sources WHERE source_id = $1 AND source_type = $2
"""

# The evidenced relations (`replaces`, `contradicts`) touching each object: one row per
# relation copy and end that touches one ('touch' rows, lookups.touches_by_ref reads them). A
# retracted relation counts for nothing: neither the copy recorded as retracted nor any copy of
# the same relation recorded before it (a later result may record the relation again). The
# same 'touch' part ends sources_and_touches.sql and context_copies.sql, so that a page's
# sources and validity come in one round trip.
VALIDITY_RELATIONS = load("validity_relations")
# The source references ($1 result ids, $2 reference ids) that a page of search hits cites
# ('cited'), and the evidenced relations touching the hits ($3 scope, $4 types, $5 ids).
SOURCES_AND_TOUCHES = load("sources_and_touches")
