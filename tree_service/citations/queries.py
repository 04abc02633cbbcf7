"""SQL of citation grants, their revocation and the reads of a node's citations."""

GRANT_COLUMNS = """
id::text, tree_id::text, grantor, grantee, redactions, created_at, revoked_at, revoked_by
"""

INSERT_GRANT = (
    """
INSERT INTO citation_authorizations (id, tree_id, grantor, grantee, redactions)
VALUES ($1, $2, $3, $4, $5)
RETURNING """
    + GRANT_COLUMNS
)

LOCK_GRANT = "SELECT " + GRANT_COLUMNS + " FROM citation_authorizations WHERE id = $1 FOR UPDATE"

REVOKE_GRANT = (
    """
UPDATE citation_authorizations SET revoked_at = clock_timestamp(), revoked_by = $2
WHERE id = $1
RETURNING """
    + GRANT_COLUMNS
)

# The nodes holding citations made under grant $1, locked for their rewrite.
GRANTED_NODES = """
SELECT n.id, n.citations::text AS citations
FROM nodes n
WHERE n.id IN (SELECT node_id FROM authorized_citations WHERE authorization_id = $1)
ORDER BY n.id
FOR NO KEY UPDATE
"""

REWRITE_CITATIONS = "UPDATE nodes SET citations = $2::jsonb WHERE id = $1"
# A caller's summaries of revoked citations (subjects citation:<node>:<position>) quote them.
DELETE_CITATION_SUMMARIES = "DELETE FROM context_summaries WHERE subject = any($1::text[])"

# Transplanted trees whose origin copied a citation made under grant $1 ($1 as text).
GRANTED_ORIGINS = """
SELECT tree_id, ancestor_path::text AS ancestor_path FROM transplants
WHERE jsonb_path_exists(
    ancestor_path,
    '$[*].citations[*] ? (@.authorization_id == $id)',
    jsonb_build_object('id', $1::text)
)
ORDER BY tree_id
FOR UPDATE
"""
REWRITE_ORIGIN = "UPDATE transplants SET ancestor_path = $2::jsonb WHERE tree_id = $1"

# Main-line versions and recorded contexts are immutable but for what forgetting rewrites:
# migration 0025's triggers let a transaction that names itself in mirrortree.purge rewrite
# their content column, and a revocation forgets as a purge does.
NAME_FORGETTING = "SELECT set_config('mirrortree.purge', $1, true)"
GRANTED_SNAPSHOTS = """
SELECT id, snapshot::text AS snapshot FROM main_line_versions
WHERE jsonb_path_exists(
    snapshot,
    '$[*].citations[*] ? (@.authorization_id == $id)',
    jsonb_build_object('id', $1::text)
)
ORDER BY id
"""
REWRITE_SNAPSHOT = "UPDATE main_line_versions SET snapshot = $2::jsonb WHERE id = $1"
# A recorded context's items let in under grant $1 read as omitted, as they do on a read.
OMIT_GRANTED_ITEMS = """
UPDATE context_versions v
SET items = (
    SELECT jsonb_agg(
        CASE WHEN e->>'authorization_id' = $1::text
             THEN e || jsonb_build_object(
                 'text', '', 'inclusion', 'omitted', 'summary_version', 0,
                 'omitted_reason', 'revoked: ' || (e->>'subject'))
             ELSE e END
        ORDER BY n)
    FROM jsonb_array_elements(v.items) WITH ORDINALITY AS t(e, n)
)
WHERE jsonb_path_exists(
    v.items, '$[*] ? (@.authorization_id == $id)', jsonb_build_object('id', $1::text)
)
"""

TREE_OWNER = "SELECT owner FROM trees WHERE id = $1"

# The newest version of each question lineage among the cited nodes $1, when it is not the
# cited node itself.
SUCCESSORS = """
SELECT c.id::text AS cited, newest.id::text AS successor
FROM nodes c
JOIN LATERAL (
    SELECT v.id FROM nodes v
    WHERE v.lineage_id = c.lineage_id AND v.kind = 'question'
    ORDER BY v.version DESC LIMIT 1
) newest ON newest.id <> c.id
WHERE c.id = any($1::uuid[]) AND c.kind = 'question'
"""
